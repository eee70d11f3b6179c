// Two-number addition (the cookbook's math_rl `env=arithmetic`): "What is x + y?" after a one-shot
// example, graded on the first whitespace-separated chunk of the answer. Batches are a pure
// function of (seed, batch index), so a resumed run sees exactly the batches it would have.
import { ADDITION_MAX, ARITHMETIC_FEWSHOT_PREFIX, additionProblem, allAdditionPairs, sampleAdditionPair } from "../../data/synthetic/arithmetic.ts";
import { Prng } from "../../data/synthetic/prng.ts";
import { ProblemGroupBuilder } from "../problemEnv.ts";
import type { Message, RLRenderer } from "../../renderers/policyRenderer.ts";
import type { EnvGroupBuilder, RLDataset, RLDatasetBuilder } from "../types.ts";
import { gradeFirstChunk } from "../../grading/index.ts";
import { QuestionAnswerEnv, type QAProblem } from "./problems.ts";

export const ARITHMETIC_FEWSHOT: Message[] = ARITHMETIC_FEWSHOT_PREFIX.map((m) => ({ role: m.role, content: m.content }));

/** The answer starts with an integer (whatever follows it is ignored by the grader). */
function startsWithInteger(response: string): boolean {
  return /^[+-]?\d+(\s|$)/.test(response.trim());
}

export function makeArithmeticEnv(renderer: RLRenderer, problem: QAProblem, formatCoef = 0.1): QuestionAnswerEnv {
  return new QuestionAnswerEnv(renderer, problem, gradeFirstChunk, {
    convoPrefix: ARITHMETIC_FEWSHOT,
    formatCoef,
    formatCheck: startsWithInteger,
  });
}

export interface ArithmeticDatasetOptions {
  renderer: RLRenderer;
  batchSize: number;
  groupSize: number;
  numBatches: number;
  seed: number;
  formatCoef?: number;
  /** Operands are drawn from 0..maxOperand (the cookbook's range is 0..100). */
  maxOperand?: number;
}

/** Endless-style stream of training pairs (held-out pairs never appear), `numBatches` long. */
export class ArithmeticDataset implements RLDataset {
  constructor(readonly options: ArithmeticDatasetOptions) {}

  get length(): number {
    return this.options.numBatches;
  }

  getBatch(index: number): EnvGroupBuilder[] {
    const { renderer, batchSize, groupSize, seed, formatCoef, maxOperand } = this.options;
    // Distinct stream per batch; the odd multiplier keeps (seed, index) pairs apart.
    const rng = new Prng((seed * 1_000_003 + index * 7919 + 17) >>> 0);
    return Array.from({ length: batchSize }, () => {
      const [x, y] = sampleAdditionPair(rng, "train", maxOperand ?? ADDITION_MAX);
      const problem = additionProblem(x, y);
      return new ProblemGroupBuilder(() => makeArithmeticEnv(renderer, problem, formatCoef), groupSize, "arithmetic");
    });
  }
}

/** `n` held-out pairs spread over the grid, one group of `groupSize` each, in one batch. */
export class ArithmeticTestDataset implements RLDataset {
  readonly problems: QAProblem[];

  constructor(
    readonly renderer: RLRenderer,
    n: number,
    readonly groupSize: number,
    maxOperand = ADDITION_MAX,
  ) {
    const pairs = allAdditionPairs("test", maxOperand);
    const stride = Math.max(1, Math.floor(pairs.length / Math.max(1, n)));
    this.problems = pairs
      .filter((_, i) => i % stride === 0)
      .slice(0, n)
      .map(([x, y]) => additionProblem(x, y));
  }

  get length(): number {
    return this.problems.length > 0 ? 1 : 0;
  }

  getBatch(index: number): EnvGroupBuilder[] {
    if (index !== 0) throw new RangeError(`the arithmetic test set has one batch, asked for ${index}`);
    return this.problems.map((p) => new ProblemGroupBuilder(() => makeArithmeticEnv(this.renderer, p), this.groupSize, "arithmetic"));
  }
}

export function arithmeticDatasetBuilder(options: ArithmeticDatasetOptions & { testProblems?: number; testGroupSize?: number }): RLDatasetBuilder {
  return {
    async build() {
      const train = new ArithmeticDataset(options);
      const n = options.testProblems ?? 0;
      const test = n > 0 ? new ArithmeticTestDataset(options.renderer, n, options.testGroupSize ?? 1, options.maxOperand) : null;
      return { train, test };
    },
  };
}
