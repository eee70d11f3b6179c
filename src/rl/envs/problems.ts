// Question/answer problems as RL data: one ProblemEnv per problem, a group of `groupSize` copies
// per problem, `batchSize` groups per batch. Used by math_rl's file and GSM8K envs, code_rl and tests.
import type { RLRenderer } from "../../renderers/policyRenderer.ts";
import { ProblemEnv, ProblemGroupBuilder, type ProblemEnvOptions } from "../problemEnv.ts";
import type { Env, EnvGroupBuilder, RLDataset } from "../types.ts";
import { Prng } from "../../data/synthetic/prng.ts";
import type { AnswerGrade } from "../../grading/index.ts";

/** Checks a response against a reference answer (src/grading: `grade`, `gradeFirstChunk`). */
export type AnswerGrader = (response: string, reference: string) => AnswerGrade;

export interface QAProblem {
  question: string;
  /** The reference answer, already in the form the grader compares against. */
  answer: string;
}

export class QuestionAnswerEnv extends ProblemEnv {
  constructor(
    renderer: RLRenderer,
    readonly problem: QAProblem,
    readonly grader: AnswerGrader,
    options: ProblemEnvOptions & { questionSuffix?: string; formatCheck?: (response: string) => boolean } = {},
  ) {
    super(renderer, options);
    this.questionSuffix = options.questionSuffix ?? "";
    this.formatCheck = options.formatCheck ?? ((r) => r.trim().length > 0);
  }

  private readonly questionSuffix: string;
  private readonly formatCheck: (response: string) => boolean;

  getQuestion(): string {
    return this.problem.question + this.questionSuffix;
  }

  checkAnswer(response: string): boolean {
    return this.grader(response, this.problem.answer).correct;
  }

  checkFormat(response: string): boolean {
    return this.formatCheck(response);
  }

  getReferenceAnswer(): string {
    return this.problem.answer;
  }
}

export interface ProblemDatasetOptions<P = QAProblem> {
  batchSize: number;
  groupSize: number;
  /** Builds the env for one problem (called once per group member). */
  makeEnv: (problem: P) => Env;
  datasetName: string;
  /** Shuffle once with this seed; null keeps file order. */
  shuffleSeed?: number | null;
}

/** Fixed list of problems, cut into batches; a trailing partial batch is dropped. */
export class ProblemListDataset<P = QAProblem> implements RLDataset {
  readonly problems: P[];

  constructor(
    problems: readonly P[],
    readonly options: ProblemDatasetOptions<P>,
  ) {
    if (options.batchSize <= 0 || options.groupSize <= 0) {
      throw new Error(`batch size and group size must be positive, got ${options.batchSize} and ${options.groupSize}`);
    }
    this.problems = [...problems];
    if (options.shuffleSeed !== undefined && options.shuffleSeed !== null) {
      const rng = new Prng(options.shuffleSeed);
      for (let i = this.problems.length - 1; i > 0; i--) {
        const j = rng.int(0, i);
        [this.problems[i], this.problems[j]] = [this.problems[j]!, this.problems[i]!];
      }
    }
  }

  get length(): number {
    return Math.floor(this.problems.length / this.options.batchSize);
  }

  getBatch(index: number): EnvGroupBuilder[] {
    if (index < 0 || index >= this.length) throw new RangeError(`batch ${index} out of range (dataset has ${this.length} batches)`);
    const { batchSize, groupSize, makeEnv, datasetName } = this.options;
    return this.problems.slice(index * batchSize, (index + 1) * batchSize).map((p) => new ProblemGroupBuilder(() => makeEnv(p), groupSize, datasetName));
  }
}
