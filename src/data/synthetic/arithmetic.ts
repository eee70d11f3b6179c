// Two-number addition in exactly the shape the cookbook's arithmetic environment uses
// (recipes/math_rl: x, y uniform in [0, 100], question "What is x + y?", graded on the first
// whitespace-separated chunk of the answer, few-shot prefix "What is 4 + 5?" → "9").
// A fixed tenth of the unordered pairs is held out of every training stream so that accuracy
// measured on them is real generalisation, not recall.
import type { Prng } from "./prng.ts";
import type { Conversation, QuestionAnswer } from "./types.ts";

export const ADDITION_MAX = 100;

export type Split = "train" | "test";

/** The cookbook's arithmetic few-shot prefix (ArithmeticEnv.standard_fewshot_prefix). */
export const ARITHMETIC_FEWSHOT_PREFIX: Conversation = [
  { role: "user", content: "What is 4 + 5?" },
  { role: "assistant", content: "9" },
];

/** True for the ~10% of unordered pairs {x, y} reserved for evaluation. */
export function isHeldOutPair(x: number, y: number): boolean {
  const a = Math.min(x, y);
  const b = Math.max(x, y);
  // Multiplicative hash so held-out pairs are scattered over the whole grid, not a band.
  const h = Math.imul(a * 1009 + b * 7919 + 12345, 0x9e3779b1) >>> 0;
  return (h >>> 7) % 10 === 0;
}

export function pairSplit(x: number, y: number): Split {
  return isHeldOutPair(x, y) ? "test" : "train";
}

export function additionQuestion(x: number, y: number): string {
  return `What is ${x} + ${y}?`;
}

export function additionProblem(x: number, y: number): QuestionAnswer {
  return { question: additionQuestion(x, y), answer: String(x + y) };
}

/** Uniform pair in [0, max]² restricted to one split (rejection sampling; splits are 90/10). */
export function sampleAdditionPair(rng: Prng, split: Split, max = ADDITION_MAX): [number, number] {
  for (;;) {
    const x = rng.int(0, max);
    const y = rng.int(0, max);
    if (pairSplit(x, y) === split) return [x, y];
  }
}

/** Every pair of a split, in grid order (the held-out split has ~1000 pairs). */
export function allAdditionPairs(split: Split, max = ADDITION_MAX): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let x = 0; x <= max; x++) for (let y = 0; y <= max; y++) if (pairSplit(x, y) === split) out.push([x, y]);
  return out;
}

const QUESTION_VARIANTS: ReadonlyArray<(x: number, y: number) => string> = [
  (x, y) => `What is ${x} + ${y}?`,
  (x, y) => `What is ${x} plus ${y}?`,
  (x, y) => `Add ${x} and ${y}.`,
  (x, y) => `What do you get when you add ${x} and ${y}?`,
  (x, y) => `${x} + ${y} = ?`,
];

/**
 * A conversation of addition questions answered with the bare number. Most of them use the exact
 * RL prompt shape (few-shot prefix, then one question) so the pretrained model starts RL well
 * above zero reward.
 */
export function additionConversation(rng: Prng, split: Split): Conversation {
  const kind = rng.weightedIndex([4, 3, 2, 1]);
  const convo: Conversation = [];
  if (kind === 0) convo.push(...ARITHMETIC_FEWSHOT_PREFIX);
  const questions = kind === 2 ? rng.int(2, 4) : 1;
  for (let i = 0; i < questions; i++) {
    const [x, y] = sampleAdditionPair(rng, split);
    const ask = kind === 3 ? rng.pick(QUESTION_VARIANTS) : QUESTION_VARIANTS[0];
    convo.push({ role: "user", content: ask(x, y) });
    convo.push({ role: "assistant", content: String(x + y) });
  }
  return convo;
}

/**
 * A longer drill for the pretraining corpus: `min`–`max` questions in one chat, half the time
 * opened by the few-shot example. Each extra question costs ~15 tokens, of which 2–3 are the
 * answer, so drills teach addition with far less boilerplate per answer than one-question chats.
 * A fraction `easyFraction` of the pairs adds a one-digit number to a number up to ADDITION_MAX:
 * the carry from the units into the tens in isolation, which the model learns first.
 */
export function additionDrill(rng: Prng, split: Split, easyFraction = 0, min = 3, max = 8): Conversation {
  const convo: Conversation = rng.chance(0.5) ? [...ARITHMETIC_FEWSHOT_PREFIX] : [];
  const n = rng.int(min, max);
  for (let i = 0; i < n; i++) {
    const [x, y] = easyFraction > 0 && rng.chance(easyFraction) ? sampleEasyPair(rng, split) : sampleAdditionPair(rng, split);
    convo.push({ role: "user", content: additionQuestion(x, y) });
    convo.push({ role: "assistant", content: String(x + y) });
  }
  return convo;
}

function sampleEasyPair(rng: Prng, split: Split): [number, number] {
  for (;;) {
    const small = rng.int(0, 9);
    const big = rng.int(0, ADDITION_MAX);
    const [x, y] = rng.chance(0.5) ? [small, big] : [big, small];
    if (pairSplit(x, y) === split) return [x, y];
  }
}

/** `n` distinct-ish question/answer records of one split, for `math_rl env=file`. */
export function generateArithmeticProblems(rng: Prng, n: number, split: Split): QuestionAnswer[] {
  const out: QuestionAnswer[] = [];
  for (let i = 0; i < n; i++) {
    const [x, y] = sampleAdditionPair(rng, split);
    out.push(additionProblem(x, y));
  }
  return out;
}
