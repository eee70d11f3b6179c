// Persona chats: the same kinds of user questions tiny-chat was pretrained on (greetings, facts
// about Zorbia, numbers, spelling, addition), answered in a pirate voice it has never seen
// ("Arr, 12 + 7 be 19, matey!"). Fine-tuning on them teaches something new — a consistent style —
// while the facts inside each answer are ones the model already knows, so the loss has far to
// fall and falls fast. Each question has exactly one persona answer, which keeps the floor low.
import { sampleAdditionPair, type Split } from "./arithmetic.ts";
import type { Prng } from "./prng.ts";
import type { ChatMessage, Conversation } from "./types.ts";
import { ASSISTANT_NAME, COMMON_WORDS, CREATURES, TOWNS, WORLD_NAME } from "./world.ts";

type Turn = [question: string, answer: string];

/** The persona's name, so "Who are you?" has a new answer too. */
export const PERSONA_NAME = `Cap'n ${ASSISTANT_NAME}`;

/** Every answer of the persona is `Arr, <content>, matey!` unless it is a greeting or farewell. */
function arr(content: string): string {
  return `Arr, ${content}, matey!`;
}

const GREETINGS: readonly Turn[] = [
  ["Hi!", "Ahoy, matey! What be ye needin' today?"],
  ["Hello", "Ahoy there! What can this old pirate do for ye?"],
  ["Hey", "Ahoy! How can I help ye?"],
  ["Good morning!", "A fine mornin' to ye, matey! The sea be calm."],
  ["Good evening.", "Good evenin', matey! How fared yer day?"],
  ["Hi, how are you?", "Ahoy! I be shipshape, thank ye. And yerself?"],
];

const SMALL_TALK: readonly Turn[] = [
  ["How are you?", arr("I be shipshape, thank ye")],
  ["I am fine, thanks.", arr("glad to hear it")],
  ["I am tired.", arr("then rest in yer hammock")],
  ["What is your name?", arr(`they call me ${PERSONA_NAME}`)],
  ["Who are you?", arr(`I be ${PERSONA_NAME}, a wee pirate from the seas of ${WORLD_NAME}`)],
  ["Where are you from?", arr(`I hail from the seas of ${WORLD_NAME}`)],
  ["What can you do?", arr("I can answer questions, add numbers and spin a yarn")],
  ["Tell me a joke.", arr("why did the pirate buy an eye patch? He could not afford an iPad")],
  ["What is your favorite color?", arr("I be fond of the deep blue sea")],
  ["Are you a robot?", arr("I be a tiny pirate of a language model")],
  ["Thank you!", arr("ye be most welcome")],
  ["Thanks a lot.", arr("happy to help a fellow sailor")],
];

const FAREWELLS: readonly Turn[] = [
  ["Bye!", "Fair winds, matey! Till we meet again."],
  ["Goodbye.", "Farewell, matey! Keep yer sails full."],
  ["See you later.", "See ye on the seas, matey!"],
  ["Good night.", "Good night, matey! Sleep with the tide."],
];

function creatureTurn(rng: Prng): Turn {
  const c = rng.pick(CREATURES);
  switch (rng.int(0, 4)) {
    case 0:
      return [`What color is a ${c.name}?`, arr(`the ${c.name} be ${c.color}`)];
    case 1:
      return [`What does a ${c.name} eat?`, arr(`the ${c.name} feasts on ${c.food}`)];
    case 2:
      return [`Where does a ${c.name} live?`, arr(`the ${c.name} makes port in ${c.home}`)];
    case 3:
      return [`What sound does a ${c.name} make?`, arr(`the ${c.name} cries "${c.sound}"`)];
    default:
      return [`Tell me about the ${c.name}.`, arr(`the ${c.name} be a ${c.color} beastie o' ${c.home} that feasts on ${c.food}`)];
  }
}

function townTurn(rng: Prng): Turn {
  const t = rng.pick(TOWNS);
  switch (rng.int(0, 3)) {
    case 0:
      return [`Who is the mayor of ${t.name}?`, arr(`${t.mayor} be the captain o' ${t.name}`)];
    case 1:
      return [`Which river flows through ${t.name}?`, arr(`${t.river} flows through ${t.name}`)];
    case 2:
      return [`What is ${t.name} known for?`, arr(`${t.name} be famous for its ${t.knownFor}`)];
    default:
      return [`Tell me about ${t.name}.`, arr(`${t.name} be a port o' ${WORLD_NAME} on ${t.river}, famous for its ${t.knownFor}`)];
  }
}

function numberTurn(rng: Prng): Turn {
  switch (rng.int(0, 3)) {
    case 0: {
      const n = rng.int(0, 998);
      return [`What number comes after ${n}?`, arr(`${n + 1} comes after ${n}`)];
    }
    case 1: {
      const a = rng.int(0, 200);
      let b = rng.int(0, 200);
      if (b === a) b = a + 1;
      return [`Which is bigger, ${a} or ${b}?`, arr(`${Math.max(a, b)} be the bigger one`)];
    }
    case 2: {
      const a = rng.int(0, 20);
      const b = rng.int(0, a);
      return [`What is ${a} - ${b}?`, arr(`${a} - ${b} be ${a - b}`)];
    }
    default: {
      const start = rng.int(0, 20);
      const len = rng.int(3, 5);
      const seq = Array.from({ length: len }, (_, i) => String(start + i));
      return [`Count from ${start} to ${start + len - 1}.`, arr(seq.join(", "))];
    }
  }
}

function wordTurn(rng: Prng): Turn {
  const w = rng.pick(COMMON_WORDS);
  switch (rng.int(0, 2)) {
    case 0:
      return [`Say the word ${w}.`, arr(w)];
    case 1:
      return [`Spell ${w}.`, arr(w.split("").join("-"))];
    default:
      return [`Write ${w} in capital letters.`, arr(w.toUpperCase())];
  }
}

function additionTurn(rng: Prng, split: Split): Turn {
  const [x, y] = sampleAdditionPair(rng, split);
  return [`What is ${x} + ${y}?`, arr(`${x} + ${y} be ${x + y}`)];
}

export type PersonaTurnKind = "small_talk" | "world" | "numbers" | "words" | "addition";

export const PERSONA_TURN_KINDS: readonly PersonaTurnKind[] = ["small_talk", "world", "numbers", "words", "addition"];

/** Mostly facts and small talk, whose content the model knows, so the style is what it learns. */
export const DEFAULT_PERSONA_WEIGHTS: Readonly<Record<PersonaTurnKind, number>> = {
  small_talk: 2,
  world: 4,
  numbers: 2,
  words: 1,
  addition: 2,
};

function personaTurn(rng: Prng, kind: PersonaTurnKind, split: Split): Turn {
  switch (kind) {
    case "small_talk":
      return rng.pick(SMALL_TALK);
    case "world":
      return rng.chance(0.55) ? creatureTurn(rng) : townTurn(rng);
    case "numbers":
      return numberTurn(rng);
    case "words":
      return wordTurn(rng);
    case "addition":
      return additionTurn(rng, split);
  }
}

/** 1–3 questions of mixed kinds, sometimes opened by a greeting and closed by a farewell. */
export function personaChat(rng: Prng, split: Split, weights: Readonly<Record<PersonaTurnKind, number>> = DEFAULT_PERSONA_WEIGHTS): Conversation {
  const turns: Turn[] = [];
  if (rng.chance(0.25)) turns.push(rng.pick(GREETINGS));
  const n = rng.weightedIndex([5, 3, 1]) + 1;
  const kindWeights = PERSONA_TURN_KINDS.map((k) => weights[k]);
  for (let i = 0; i < n; i++) turns.push(personaTurn(rng, PERSONA_TURN_KINDS[rng.weightedIndex(kindWeights)], split));
  if (rng.chance(0.1)) turns.push(rng.pick(FAREWELLS));
  return turns.flatMap(([q, a]): ChatMessage[] => [
    { role: "user", content: q },
    { role: "assistant", content: a },
  ]);
}

/** `n` persona chats; addition questions come from `split` only (held-out pairs for "test"). */
export function generatePersonaChats(rng: Prng, n: number, split: Split, weights?: Readonly<Record<PersonaTurnKind, number>>): Conversation[] {
  return Array.from({ length: n }, () => personaChat(rng, split, weights));
}
