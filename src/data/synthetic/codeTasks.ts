// The shipped code tasks (fixtures/data/code_tasks_*.jsonl, written by scripts/makeCodeTasks.ts):
// "Write a Python function solve(a, b) that returns the sum of a and b." with hidden functional
// tests. Each task is one of six binary operators in one of four wordings; the right reply differs
// from the wrong ones in the operator alone (one token for tiny-chat), so a model that has learned
// the reply's format still has to learn which wording asks for which operator. A pure function of
// the seed, like every synthetic dataset.
import { Prng } from "./prng.ts";

export interface CodeOp {
  symbol: "+" | "-" | "*" | "%" | ">" | "<";
  wordings: string[];
  apply(a: number, b: number): number | boolean;
}

export const CODE_OPS: readonly CodeOp[] = [
  {
    symbol: "+",
    wordings: ["returns the sum of a and b", "adds b to a and returns the result", "returns a plus b", "returns the total of a and b"],
    apply: (a, b) => a + b,
  },
  {
    symbol: "-",
    wordings: [
      "returns the difference a minus b",
      "subtracts b from a and returns the result",
      "returns a minus b",
      "returns what is left when b is taken away from a",
    ],
    apply: (a, b) => a - b,
  },
  {
    symbol: "*",
    wordings: ["returns the product of a and b", "multiplies a by b and returns the result", "returns a times b", "returns a multiplied by b"],
    apply: (a, b) => a * b,
  },
  {
    symbol: "%",
    wordings: ["returns the remainder of a divided by b", "returns a modulo b", "returns what is left over when a is divided by b", "returns a mod b"],
    apply: (a, b) => a % b,
  },
  {
    symbol: ">",
    wordings: [
      "returns True when a is greater than b, else False",
      "checks whether a is larger than b",
      "returns whether a exceeds b",
      "returns True if a is bigger than b",
    ],
    apply: (a, b) => a > b,
  },
  {
    symbol: "<",
    wordings: [
      "returns True when a is less than b, else False",
      "checks whether a is smaller than b",
      "returns whether a is below b",
      "returns True if a is lower than b",
    ],
    apply: (a, b) => a < b,
  },
];

export const CODE_STARTER = "def solve(a, b):";

export interface GeneratedCodeTask {
  id: string;
  question: string;
  starter_code: string;
  tests: { kind: "functional"; fn: string; input: string; output: string }[];
  /** The operator the task asks for (not shown to the model). */
  op: CodeOp["symbol"];
}

/** The reply that solves a task with operator `symbol`, as a fenced block. */
export function codeReply(symbol: string): string {
  return `\`\`\`python\n${CODE_STARTER}\n    return a${symbol}b\n\`\`\``;
}

/** `count` tasks cycling through every operator and wording, with `testsPerTask` hidden tests each. */
export function generateCodeTasks(seed: number, count: number, testsPerTask = 5, idPrefix = "t"): GeneratedCodeTask[] {
  const rng = new Prng(seed);
  const kinds = CODE_OPS.flatMap((op) => op.wordings.map((wording) => ({ op, wording })));
  const out: GeneratedCodeTask[] = [];
  for (let i = 0; i < count; i++) {
    const { op, wording } = kinds[i % kinds.length]!;
    const draw = () =>
      Array.from({ length: testsPerTask }, () => {
        // b ≥ 1 keeps a % b defined; a ≠ b keeps the two comparisons from agreeing.
        const a = rng.int(1, 60);
        let b = rng.int(1, 59);
        if (b >= a) b += 1;
        return { a, b };
      });
    // Drawn again until no other operator passes every test (a % b = a − b whenever b ≤ a < 2b).
    let pairs = draw();
    while (CODE_OPS.some((other) => other !== op && pairs.every(({ a, b }) => other.apply(a, b) === op.apply(a, b)))) pairs = draw();
    const tests = pairs.map(({ a, b }) => ({ kind: "functional" as const, fn: "solve", input: `${a}\n${b}`, output: JSON.stringify(op.apply(a, b)) }));
    out.push({
      id: `${idPrefix}${i}`,
      question: `Write a Python function solve(a, b) that ${wording}. a and b are integers.`,
      starter_code: CODE_STARTER,
      tests,
      op: op.symbol,
    });
  }
  return rng.shuffled(out);
}

/** The operator whose reply passes every test of a shipped-style task (functional `solve(a, b)` tests), or null. */
export function operatorOfTests(tests: readonly { kind: string; input?: string; output?: string; code?: string }[]): CodeOp | null {
  const cases = tests.map((t) => ({ args: (t.input ?? "").split("\n").map(Number), output: t.output ?? "" }));
  if (cases.length === 0 || tests.some((t) => t.kind !== "functional") || cases.some((c) => c.args.length !== 2 || c.args.some((x) => !Number.isInteger(x))))
    return null;
  return CODE_OPS.find((op) => cases.every((c) => JSON.stringify(op.apply(c.args[0]!, c.args[1]!)) === c.output)) ?? null;
}
