// SDFT's problems: questions with a golden answer. The student sees the question (after the task's
// few-shot prefix); the teacher — the same model — sees the question with the golden answer as an
// in-context demonstration. The offline default is math_rl's addition: a seeded stream of training
// pairs and the held-out pairs, so a resumed run sees the batches it would have seen.
import { ADDITION_MAX, additionProblem, allAdditionPairs, sampleAdditionPair } from "../data/synthetic/arithmetic.ts";
import { Prng } from "../data/synthetic/prng.ts";
import type { Message } from "../renderers/types.ts";
import { ARITHMETIC_FEWSHOT, makeArithmeticEnv } from "../rl/envs/arithmetic.ts";
import { gradeFirstChunk } from "../grading/index.ts";
import { QuestionAnswerEnv, type QAProblem } from "../rl/envs/problems.ts";
import { ProblemGroupBuilder } from "../rl/problemEnv.ts";
import type { RLRenderer } from "../renderers/policyRenderer.ts";
import type { EnvGroupBuilder, RLDataset } from "../rl/types.ts";
import { sdftTeacherMessages } from "./sdft.ts";

export interface SdftPrompts {
  student: Message[];
  teacher: Message[];
}

/**
 * Both conversations for one problem: the few-shot prefix, then the bare question (student) or
 * the demonstrated one (teacher). With a `template` the demonstration is written into the question
 * (the cookbook's form); with null it is an earlier exchange of the same question and its golden
 * answer, the form a small chat model reads best.
 */
export function sdftPrompts(problem: QAProblem, template: string | null = null): SdftPrompts {
  const question: Message = { role: "user", content: problem.question };
  const teacher: Message[] =
    template === null
      ? [question, { role: "assistant", content: problem.answer }, question]
      : sdftTeacherMessages(problem.question, problem.answer, { template });
  return { student: [...ARITHMETIC_FEWSHOT, question], teacher: [...ARITHMETIC_FEWSHOT, ...teacher] };
}

/** Batch `index` of the training stream: `size` addition problems, a pure function of (seed, index). */
export function sdftTrainBatch(seed: number, index: number, size: number, maxOperand = ADDITION_MAX): QAProblem[] {
  const rng = new Prng((seed * 1_000_003 + index * 7919 + 23) >>> 0);
  return Array.from({ length: size }, () => {
    const [x, y] = sampleAdditionPair(rng, "train", maxOperand);
    return additionProblem(x, y);
  });
}

/** `n` held-out problems spread over the grid. */
export function sdftTestProblems(n: number, maxOperand = ADDITION_MAX): QAProblem[] {
  const pairs = allAdditionPairs("test", maxOperand);
  const stride = Math.max(1, Math.floor(pairs.length / Math.max(1, n)));
  return pairs
    .filter((_, i) => i % stride === 0)
    .slice(0, n)
    .map(([x, y]) => additionProblem(x, y));
}

/**
 * A graded test set for the RL evaluator. `asTeacher` shows each question with its golden answer
 * in context (the teacher's view), which measures how much better the demonstrated model is.
 */
export class SdftTestDataset implements RLDataset {
  constructor(
    readonly renderer: RLRenderer,
    readonly problems: readonly QAProblem[],
    readonly options: { asTeacher?: boolean; template?: string | null } = {},
  ) {}

  get length(): number {
    return this.problems.length > 0 ? 1 : 0;
  }

  getBatch(index: number): EnvGroupBuilder[] {
    if (index !== 0) throw new RangeError(`the SDFT test set has one batch, asked for ${index}`);
    return this.problems.map((p) => {
      if (!this.options.asTeacher) return new ProblemGroupBuilder(() => makeArithmeticEnv(this.renderer, p), 1, "arithmetic");
      // The teacher's view: everything before the final question becomes the env's prefix.
      const teacher = sdftPrompts(p, this.options.template ?? null).teacher;
      const last = teacher[teacher.length - 1]!;
      const shown = { question: typeof last.content === "string" ? last.content : p.question, answer: p.answer };
      return new ProblemGroupBuilder(
        () => new QuestionAnswerEnv(this.renderer, shown, gradeFirstChunk, { convoPrefix: teacher.slice(0, -1), formatCoef: 0.1 }),
        1,
        "arithmetic",
      );
    });
  }
}
