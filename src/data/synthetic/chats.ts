// Short synthetic chats: greetings and small talk, questions about the made-up world, simple
// number and word tasks, addition, and guess-the-number games. Every answer is short and
// determined by the question, so a few-million-parameter model can learn the lot.
import { additionConversation, type Split } from "./arithmetic.ts";
import { guessNumberGame } from "./guessNumber.ts";
import type { Prng } from "./prng.ts";
import type { ChatMessage, Conversation } from "./types.ts";
import { ASSISTANT_NAME, COMMON_WORDS, CREATURES, TOWNS, WORLD_NAME } from "./world.ts";

type Turn = [question: string, answer: string];

const user = (content: string): ChatMessage => ({ role: "user", content });
const assistant = (content: string): ChatMessage => ({ role: "assistant", content });

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

const GREETINGS: readonly Turn[] = [
  ["Hi!", "Hello! How can I help you today?"],
  ["Hello", "Hi there! What can I do for you?"],
  ["Hey", "Hey! How can I help?"],
  ["Good morning!", "Good morning! I hope you slept well."],
  ["Good evening.", "Good evening! How was your day?"],
  ["Hi, how are you?", "I am doing well, thank you. How are you?"],
];

const SMALL_TALK: readonly Turn[] = [
  ["How are you?", "I am doing well, thank you."],
  ["I am fine, thanks.", "Glad to hear it!"],
  ["I am tired.", "Then get some rest. Sleep helps a lot."],
  ["What is your name?", `My name is ${ASSISTANT_NAME}.`],
  ["Who are you?", `I am ${ASSISTANT_NAME}, a small assistant from ${WORLD_NAME}.`],
  ["Where are you from?", `I am from ${WORLD_NAME}.`],
  ["What can you do?", "I can answer simple questions, add numbers and chat."],
  ["Tell me a joke.", "Why did the puddlebug cross the road? To get to the other puddle."],
  ["What is your favorite color?", "I like blue, like a glimmerfox."],
  ["Are you a robot?", "I am a tiny language model."],
  ["Thank you!", "You are welcome!"],
  ["Thanks a lot.", "Happy to help!"],
];

const FAREWELLS: readonly Turn[] = [
  ["Bye!", "Goodbye! Have a nice day."],
  ["Goodbye.", "Bye! See you soon."],
  ["See you later.", "See you later!"],
  ["Good night.", "Good night! Sleep well."],
];

function creatureTurn(rng: Prng): Turn {
  const c = rng.pick(CREATURES);
  switch (rng.int(0, 5)) {
    case 0:
      return [`What color is a ${c.name}?`, `A ${c.name} is ${c.color}.`];
    case 1:
      return [`What does a ${c.name} eat?`, `A ${c.name} eats ${c.food}.`];
    case 2:
      return [`Where does a ${c.name} live?`, `A ${c.name} lives in ${c.home}.`];
    case 3:
      return [`What sound does a ${c.name} make?`, `A ${c.name} says "${c.sound}".`];
    case 4: {
      const byColor = CREATURES.filter((x) => x.color === c.color);
      return [`Which creature in ${WORLD_NAME} is ${c.color}?`, `The ${byColor[0].name} is ${c.color}.`];
    }
    default:
      return [`Tell me about the ${c.name}.`, `The ${c.name} is a ${c.color} creature that lives in ${c.home} and eats ${c.food}.`];
  }
}

function townTurn(rng: Prng): Turn {
  const t = rng.pick(TOWNS);
  switch (rng.int(0, 4)) {
    case 0:
      return [`Who is the mayor of ${t.name}?`, `The mayor of ${t.name} is ${t.mayor}.`];
    case 1:
      return [`Which river flows through ${t.name}?`, `${capitalize(t.river)} flows through ${t.name}.`];
    case 2:
      return [`What is ${t.name} known for?`, `${t.name} is known for ${t.knownFor}.`];
    case 3:
      return [`Which town has ${t.mayor} as mayor?`, `${t.mayor} is the mayor of ${t.name}.`];
    default:
      return [`Tell me about ${t.name}.`, `${t.name} is a town in ${WORLD_NAME} on ${t.river}, known for ${t.knownFor}.`];
  }
}

function worldTurn(rng: Prng): Turn {
  if (rng.chance(0.08)) {
    return rng.pick<Turn>([
      [`What is ${WORLD_NAME}?`, `${WORLD_NAME} is a small land with ${TOWNS.length} towns and many odd creatures.`],
      [`How many towns are in ${WORLD_NAME}?`, `There are ${TOWNS.length} towns in ${WORLD_NAME}.`],
      [`Name a town in ${WORLD_NAME}.`, `${rng.pick(TOWNS).name} is a town in ${WORLD_NAME}.`],
    ]);
  }
  return rng.chance(0.55) ? creatureTurn(rng) : townTurn(rng);
}

function numberTurn(rng: Prng): Turn {
  switch (rng.int(0, 4)) {
    case 0: {
      const n = rng.int(0, 998);
      return [`What number comes after ${n}?`, String(n + 1)];
    }
    case 1: {
      const n = rng.int(1, 999);
      return [`What number comes before ${n}?`, String(n - 1)];
    }
    case 2: {
      const a = rng.int(0, 200);
      let b = rng.int(0, 200);
      if (b === a) b = a + 1;
      return [`Which is bigger, ${a} or ${b}?`, String(Math.max(a, b))];
    }
    case 3: {
      const start = rng.int(0, 20);
      const len = rng.int(3, 6);
      const seq = Array.from({ length: len }, (_, i) => String(start + i));
      return [`Count from ${start} to ${start + len - 1}.`, seq.join(", ")];
    }
    default: {
      const a = rng.int(0, 20);
      const b = rng.int(0, a);
      return [`What is ${a} - ${b}?`, String(a - b)];
    }
  }
}

const COLOR_THINGS: ReadonlyArray<[color: string, thing: string]> = [
  ["red", "a tomato"],
  ["blue", "the sky"],
  ["green", "grass"],
  ["yellow", "a lemon"],
  ["purple", "a plum"],
  ["orange", "a carrot"],
  ["pink", "a flamingo"],
  ["brown", "a tree trunk"],
  ["black", "the night"],
  ["white", "snow"],
  ["grey", "a rain cloud"],
  ["teal", "the sea"],
];

function wordTurn(rng: Prng): Turn {
  const w = rng.pick(COMMON_WORDS);
  switch (rng.int(0, 4)) {
    case 0:
      return [`Say the word ${w}.`, w];
    case 1:
      return [`Spell ${w}.`, w.split("").join("-")];
    case 2:
      return [`What is the first letter of ${w}?`, w[0]];
    case 3:
      return [`Write ${w} in capital letters.`, w.toUpperCase()];
    default: {
      const [c, thing] = rng.pick(COLOR_THINGS);
      return [`Name something ${c}.`, `${capitalize(thing)} is ${c}.`];
    }
  }
}

export type ChatKind = "small_talk" | "world" | "numbers" | "words" | "addition" | "guess_number";

export const CHAT_KINDS: readonly ChatKind[] = ["small_talk", "world", "numbers", "words", "addition", "guess_number"];

/** Default mix for the supervised fixtures: mostly everyday chat, with some addition. */
export const DEFAULT_CHAT_WEIGHTS: Readonly<Record<ChatKind, number>> = {
  small_talk: 3,
  world: 4,
  numbers: 2,
  words: 2,
  addition: 2,
  guess_number: 0.5,
};

function turnsToConversation(turns: Turn[]): Conversation {
  return turns.flatMap(([q, a]) => [user(q), assistant(a)]);
}

/** 1–3 question/answer turns drawn from one generator, optionally opened by a greeting. */
function taskChat(rng: Prng, gen: (rng: Prng) => Turn): Conversation {
  const turns: Turn[] = [];
  if (rng.chance(0.2)) turns.push(rng.pick(GREETINGS));
  const n = rng.weightedIndex([5, 3, 1]) + 1;
  for (let i = 0; i < n; i++) turns.push(gen(rng));
  if (rng.chance(0.1)) turns.push(rng.pick(FAREWELLS));
  return turnsToConversation(turns);
}

function smallTalkChat(rng: Prng): Conversation {
  const turns: Turn[] = [rng.pick(GREETINGS)];
  const n = rng.int(0, 2);
  for (let i = 0; i < n; i++) turns.push(rng.pick(SMALL_TALK));
  if (rng.chance(0.4)) turns.push(rng.pick(FAREWELLS));
  // Some chats open straight with a question instead of a greeting.
  if (turns.length > 1 && rng.chance(0.3)) turns.shift();
  return turnsToConversation(turns);
}

/** One chat of the given kind; addition questions come from `split` only. */
export function chatOfKind(rng: Prng, kind: ChatKind, split: Split): Conversation {
  switch (kind) {
    case "small_talk":
      return smallTalkChat(rng);
    case "world":
      return taskChat(rng, worldTurn);
    case "numbers":
      return taskChat(rng, numberTurn);
    case "words":
      return taskChat(rng, wordTurn);
    case "addition":
      return additionConversation(rng, split);
    case "guess_number":
      return guessNumberGame(rng, { historyRole: "assistant", noise: 0.35 });
  }
}

export function randomChat(rng: Prng, split: Split, weights: Readonly<Record<ChatKind, number>> = DEFAULT_CHAT_WEIGHTS): Conversation {
  const kind = CHAT_KINDS[rng.weightedIndex(CHAT_KINDS.map((k) => weights[k]))];
  return chatOfKind(rng, kind, split);
}

export function generateChats(rng: Prng, n: number, split: Split, weights?: Readonly<Record<ChatKind, number>>): Conversation[] {
  return Array.from({ length: n }, () => randomChat(rng, split, weights));
}
