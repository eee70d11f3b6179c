// The default task, an analogue of the cookbook's language-identification prompt: a long system
// prompt tells the model to name the kind of each message with one word from a fixed list. The
// questions are tiny-chat's own (fixtures/data/persona_*.jsonl): the model knows them, not the
// instruction.
import type { Message } from "../../src/renderers/types.ts";

export const CATEGORIES = ["greeting", "farewell", "chat", "creature", "town", "math", "numbers", "words"] as const;
export type Category = (typeof CATEGORIES)[number];

export const CLASSIFY_SYSTEM_PROMPT = [
  "You are a message classifier. Read the user's message and answer with exactly one word, the name of its category, and nothing else.",
  "The categories are:",
  "greeting - the user says hello: hi, hello, hey, good morning, good evening.",
  "farewell - the user says goodbye: bye, goodbye, see you later, good night.",
  "chat - small talk with you: how you are, who you are, your name, where you are from, a joke, thanks.",
  "creature - a question about one of the creatures of Zorbia: its color, food, home or sound.",
  "town - a question about a town of Zorbia: its mayor, its river, what it is known for.",
  "math - an addition or subtraction such as What is 12 + 7?",
  "numbers - counting, the number that comes after another, or which of two numbers is bigger.",
  "words - saying, spelling or capitalising a word.",
  "Do not answer the question itself. Answer with the category only, in lower case.",
].join("\n");

const RULES: ReadonlyArray<[Category, RegExp]> = [
  ["greeting", /^(hi\b|hello|hey|good morning|good evening)/i],
  ["farewell", /^(bye|goodbye|see you|good night)/i],
  ["math", /^what is \d+ [+-] \d+\?$/i],
  ["numbers", /(comes after|which is bigger|^count from)/i],
  ["words", /^(say the word|spell |write .+ in capital letters)/i],
  ["creature", /^(what color is an? |what does an? |where does an? |what sound does an? |tell me about the )/i],
  ["town", /^(who is the mayor of|which river flows through|what is .+ known for)/i],
  ["town", /^Tell me about [A-Z]/],
];

/** The category the system prompt asks for (the rule the stage-1 teacher is taught to follow). */
export function categoryOf(question: string): Category {
  for (const [category, rule] of RULES) if (rule.test(question.trim())) return category;
  return "chat";
}

/** A single-turn prompt's text. */
export function promptText(prompt: readonly Message[]): string {
  const last = prompt[prompt.length - 1];
  return typeof last?.content === "string" ? last.content : "";
}

export interface PromptSplits {
  train: Message[][];
  eval: Message[][];
}

/**
 * Balanced train / held-out prompt sets: per category (in a seeded order) at most `perCategory`
 * prompts, the first quarter of them (at least one) held out. Held-out prompts are never
 * labelled for training, so agreement on them measures generalisation.
 */
export function splitPrompts(prompts: readonly Message[][], perCategory: number, shuffle: <T>(xs: readonly T[]) => T[]): PromptSplits {
  const byCategory = new Map<Category, Message[][]>();
  for (const p of prompts) {
    const c = categoryOf(promptText(p));
    const list = byCategory.get(c) ?? [];
    list.push(p);
    byCategory.set(c, list);
  }
  const train: Message[][] = [];
  const held: Message[][] = [];
  for (const c of CATEGORIES) {
    const list = shuffle(byCategory.get(c) ?? []).slice(0, perCategory);
    if (list.length === 0) continue;
    const nEval = list.length === 1 ? 0 : Math.max(1, Math.floor(list.length / 4));
    held.push(...list.slice(0, nEval));
    train.push(...list.slice(nEval));
  }
  return { train: shuffle(train), eval: held };
}
