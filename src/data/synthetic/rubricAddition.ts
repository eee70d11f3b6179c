// The rubric recipe's shipped demo data (the cookbook's rubric/generate_data on addition): a
// conversation that shows one solved sum and asks another, and one rubric item asking the grader
// whether the chatbot gave the right answer. Sums stay within what tiny-chat learned (≤ 100 + 100).
// Also the grader warm-up's examples: a grader prompt for a reply that is right or near-miss
// wrong, and the score a careful grader writes.
import { Prng } from "./prng.ts";

export interface RubricItemData {
  rubric_str: string;
  extraction_regex?: string;
  grader_output_format_instruction?: string;
}

export interface RubricDatapointData {
  convo: { role: "user" | "assistant" | "system"; content: string }[];
  rubric_items: RubricItemData[];
}

export function additionRubricDatapoint(a: number, b: number): RubricDatapointData {
  return {
    convo: [
      { role: "user", content: "What is 4 + 5?" },
      { role: "assistant", content: "9" },
      { role: "user", content: `What is ${a} + ${b}?` },
    ],
    rubric_items: [{ rubric_str: `Does the chatbot correctly get the answer ${a + b}?` }],
  };
}

/** `count` addition datapoints, operands 0..100, all distinct. */
export function generateRubricAddition(seed: number, count: number): RubricDatapointData[] {
  const rng = new Prng(seed);
  const seen = new Set<string>();
  const out: RubricDatapointData[] = [];
  while (out.length < count) {
    const a = rng.int(0, 100);
    const b = rng.int(0, 100);
    if (seen.has(`${a}+${b}`)) continue;
    seen.add(`${a}+${b}`);
    out.push(additionRubricDatapoint(a, b));
  }
  return out;
}

/** A reply a policy might give: the right sum, or one off by a little (the mistakes graders must catch). */
export function additionReply(rng: Prng, a: number, b: number, rightShare: number): { reply: string; right: boolean } {
  if (rng.chance(rightShare)) return { reply: String(a + b), right: true };
  let wrong = a + b;
  while (wrong === a + b || wrong < 0) wrong = a + b + rng.pick([-10, -2, -1, 1, 2, 10, 11, -11]);
  return { reply: String(wrong), right: false };
}
