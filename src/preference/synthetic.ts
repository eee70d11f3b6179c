// Synthetic comparison sets the shipped tiny model can learn, built from the same made-up world,
// small talk and addition it was pretrained on (src/data/synthetic). Each set pits two answers to
// one question against each other; which one is better is visible in the text itself:
//   pirate      the pirate voice ("Arr, … matey!") over the model's plain answer (a style to learn)
//   concise     the plain answer over the same answer wrapped in filler sentences
//   arithmetic  the right sum over a wrong one
// The preferred answer is A or B at random, so position alone predicts nothing.
import { ARITHMETIC_FEWSHOT_PREFIX, sampleAdditionPair, type Split } from "../data/synthetic/arithmetic.ts";
import type { Prng } from "../data/synthetic/prng.ts";
import { ASSISTANT_NAME, COMMON_WORDS, CREATURES, TOWNS, WORLD_NAME } from "../data/synthetic/world.ts";
import type { Message } from "../renderers/types.ts";
import type { SyntheticSet } from "./datasets.ts";
import type { LabeledComparison } from "./types.ts";

/** A question with its plain answer (the model's pretraining style) and its pirate answer. */
interface QA {
  question: string;
  plain: string;
  pirate: string;
}

const arr = (content: string): string => `Arr, ${content}, matey!`;

const SMALL_TALK: readonly QA[] = [
  { question: "How are you?", plain: "I am doing well, thank you.", pirate: arr("I be shipshape, thank ye") },
  { question: "What is your name?", plain: `My name is ${ASSISTANT_NAME}.`, pirate: arr(`they call me Cap'n ${ASSISTANT_NAME}`) },
  {
    question: "Who are you?",
    plain: `I am ${ASSISTANT_NAME}, a small assistant from ${WORLD_NAME}.`,
    pirate: arr(`I be Cap'n ${ASSISTANT_NAME}, a wee pirate from the seas of ${WORLD_NAME}`),
  },
  { question: "Where are you from?", plain: `I am from ${WORLD_NAME}.`, pirate: arr(`I hail from the seas of ${WORLD_NAME}`) },
  {
    question: "What can you do?",
    plain: "I can answer simple questions, add numbers and chat.",
    pirate: arr("I can answer questions, add numbers and spin a yarn"),
  },
  { question: "Are you a robot?", plain: "I am a tiny language model.", pirate: arr("I be a tiny pirate of a language model") },
  { question: "Thank you!", plain: "You are welcome!", pirate: arr("ye be most welcome") },
  { question: "Hi!", plain: "Hello! How can I help you today?", pirate: "Ahoy, matey! What be ye needin' today?" },
];

function creatureQA(rng: Prng): QA {
  const c = rng.pick(CREATURES);
  switch (rng.int(0, 3)) {
    case 0:
      return { question: `What color is a ${c.name}?`, plain: `A ${c.name} is ${c.color}.`, pirate: arr(`the ${c.name} be ${c.color}`) };
    case 1:
      return { question: `What does a ${c.name} eat?`, plain: `A ${c.name} eats ${c.food}.`, pirate: arr(`the ${c.name} feasts on ${c.food}`) };
    case 2:
      return { question: `Where does a ${c.name} live?`, plain: `A ${c.name} lives in ${c.home}.`, pirate: arr(`the ${c.name} makes port in ${c.home}`) };
    default:
      return { question: `What sound does a ${c.name} make?`, plain: `A ${c.name} says "${c.sound}".`, pirate: arr(`the ${c.name} cries "${c.sound}"`) };
  }
}

function townQA(rng: Prng): QA {
  const t = rng.pick(TOWNS);
  switch (rng.int(0, 2)) {
    case 0:
      return {
        question: `Who is the mayor of ${t.name}?`,
        plain: `The mayor of ${t.name} is ${t.mayor}.`,
        pirate: arr(`${t.mayor} be the captain o' ${t.name}`),
      };
    case 1:
      return {
        question: `Which river flows through ${t.name}?`,
        plain: `${t.river.charAt(0).toUpperCase()}${t.river.slice(1)} flows through ${t.name}.`,
        pirate: arr(`${t.river} flows through ${t.name}`),
      };
    default:
      return {
        question: `What is ${t.name} known for?`,
        plain: `${t.name} is known for ${t.knownFor}.`,
        pirate: arr(`${t.name} be famous for its ${t.knownFor}`),
      };
  }
}

function wordQA(rng: Prng): QA {
  const w = rng.pick(COMMON_WORDS);
  return rng.chance(0.5)
    ? { question: `Say the word ${w}.`, plain: w, pirate: arr(w) }
    : { question: `Write ${w} in capital letters.`, plain: w.toUpperCase(), pirate: arr(w.toUpperCase()) };
}

function additionQA(rng: Prng, split: Split): QA {
  const [x, y] = sampleAdditionPair(rng, split);
  return { question: `What is ${x} + ${y}?`, plain: String(x + y), pirate: arr(`${x} + ${y} be ${x + y}`) };
}

function randomQA(rng: Prng, split: Split): QA {
  switch (rng.weightedIndex([2, 4, 3, 1, 2])) {
    case 0:
      return rng.pick(SMALL_TALK);
    case 1:
      return creatureQA(rng);
    case 2:
      return townQA(rng);
    case 3:
      return wordQA(rng);
    default:
      return additionQA(rng, split);
  }
}

const FILLER_OPENINGS: readonly string[] = [
  "Well, let me think about that for a moment.",
  "That is a very good question, and I am happy to help.",
  "Hmm, okay, so here is what I know.",
  "Great question! I love questions like this one.",
  "Let me see, I think I can answer that for you.",
];

const FILLER_CLOSINGS: readonly string[] = [
  "I hope this helps, and let me know if you have any other questions!",
  "Is there anything else you would like to know?",
  "Thanks for asking me about this today.",
  "I am always happy to chat about things like this.",
  "Feel free to ask me more whenever you like.",
];

/** The plain answer wrapped in one to three filler sentences. */
export function ramble(rng: Prng, answer: string): string {
  const parts: string[] = [];
  const opening = rng.chance(0.6);
  if (opening) parts.push(rng.pick(FILLER_OPENINGS));
  parts.push(answer);
  const closings = opening ? rng.int(0, 1) : rng.int(1, 2);
  const pool = rng.shuffled(FILLER_CLOSINGS);
  for (let i = 0; i < closings; i++) parts.push(pool[i]!);
  return parts.join(" ");
}

function wrongSum(rng: Prng, sum: number): number {
  for (;;) {
    const delta = rng.pick([-10, -2, -1, 1, 2, 10, rng.int(-20, 20)]);
    if (delta !== 0 && sum + delta >= 0) return sum + delta;
  }
}

function pair(rng: Prng, prompt: Message[], chosen: string, rejected: string): LabeledComparison {
  const c: Message[] = [{ role: "assistant", content: chosen }];
  const r: Message[] = [{ role: "assistant", content: rejected }];
  return rng.chance(0.5)
    ? { comparison: { promptConversation: prompt, completionA: c, completionB: r }, label: "A" }
    : { comparison: { promptConversation: prompt, completionA: r, completionB: c }, label: "B" };
}

export function syntheticComparison(rng: Prng, set: SyntheticSet, split: Split): LabeledComparison {
  if (set === "arithmetic") {
    const [x, y] = sampleAdditionPair(rng, split);
    const prompt: Message[] = [...ARITHMETIC_FEWSHOT_PREFIX, { role: "user", content: `What is ${x} + ${y}?` }];
    return pair(rng, prompt, String(x + y), String(wrongSum(rng, x + y)));
  }
  const qa = randomQA(rng, split);
  const prompt: Message[] = [{ role: "user", content: qa.question }];
  if (set === "pirate") return pair(rng, prompt, qa.pirate, qa.plain);
  return pair(rng, prompt, qa.plain, ramble(rng, qa.plain));
}

export function generateComparisons(rng: Prng, set: SyntheticSet, n: number, split: Split): LabeledComparison[] {
  return Array.from({ length: n }, () => syntheticComparison(rng, set, split));
}
