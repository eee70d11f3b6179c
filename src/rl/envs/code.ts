// The cookbook's code-RL environment (docs/code-rl.md#prompt-and-reward): one reply per problem;
// its last fenced code block runs against the problem's hidden tests in the sandbox.
// reward = format_coef·(has_code_block − 1) + correct, where correct is 1 when every test passes
// (the cookbook's rule, reward=all) or the share of tests passed (reward=fraction). The tests'
// results are the last message of the transcript, so the TUI shows each test's outcome.
import { describeGrade, extractCodeBlock, gradeCode, type CodeGrade } from "../../grading/code.ts";
import { solutionSource, testsOf, type CodeTask } from "../../grading/codeTasks.ts";
import type { SandboxLimits } from "../../sandbox/index.ts";
import { messageText, type Message, type RLRenderer } from "../../renderers/policyRenderer.ts";
import { emptyModelInput } from "../tokenSeq.ts";
import { EpisodeEndReason, stopMetric, type Action, type ActionExtra, type Env, type InitialObservation, type StepResult } from "../types.ts";
import { ProblemListDataset } from "./problems.ts";

export type CodeRewardMode = "all" | "fraction";

const SANDBOX_STATUSES = ["ok", "error", "timeout", "memory", "output_limit", "not_run"] as const;

export interface CodeEnvOptions {
  formatCoef: number;
  reward: CodeRewardMode;
  testTimeoutSeconds: number;
  limits?: Partial<SandboxLimits>;
}

export class CodeEnv implements Env {
  constructor(
    readonly renderer: RLRenderer,
    readonly task: CodeTask,
    readonly options: CodeEnvOptions,
  ) {}

  private conversation(): Message[] {
    return [{ role: "user", content: this.task.prompt }];
  }

  async initialObservation(): Promise<InitialObservation> {
    return { observation: this.renderer.buildGenerationPrompt(this.conversation()), stopCondition: this.renderer.getStopSequences() };
  }

  async step(action: Action, extra: ActionExtra = {}): Promise<StepResult> {
    const { message } = this.renderer.parseResponse(action);
    const content = messageText(message);
    const code = extractCodeBlock(content);
    let grade: CodeGrade | null = null;
    if (code !== null)
      grade = await gradeCode(solutionSource(this.task, code), await testsOf(this.task), {
        testTimeoutSeconds: this.options.testTimeoutSeconds,
        setup: this.task.setup,
        limits: this.options.limits,
      });
    const format = code === null ? 0 : 1;
    const correct = grade?.allPassed === true ? 1 : 0;
    const fraction = grade === null ? 0 : grade.passed / Math.max(1, grade.total);
    const reward = this.options.formatCoef * (format - 1) + (this.options.reward === "all" ? correct : fraction);
    const sandboxStatus = grade?.run.status ?? "not_run";
    const report = grade === null ? "no ```python code block in the reply: nothing was run" : describeGrade(grade);
    return {
      reward,
      episodeDone: true,
      nextObservation: emptyModelInput(),
      nextStopCondition: this.renderer.getStopSequences(),
      metrics: {
        format,
        correct,
        tests_passed: fraction,
        // One-hot over every status, so the means over a batch are shares.
        ...Object.fromEntries(SANDBOX_STATUSES.map((s) => [`sandbox/${s}`, s === sandboxStatus ? 1 : 0])),
        [stopMetric(extra.stopReason === "length" ? EpisodeEndReason.MAX_TOKENS : EpisodeEndReason.COMPLETED)]: 1,
      },
      logs: {
        task: this.task.id,
        tests: grade === null ? "not run" : `${grade.passed}/${grade.total}`,
        sandbox: grade === null ? "not run" : `${grade.run.status}: ${grade.run.reason}`,
        ...(grade === null
          ? {}
          : { isolation: `network ${grade.run.isolation.network}; filesystem ${grade.run.isolation.filesystem}; ${grade.run.isolation.user}` }),
        ...(grade !== null && grade.run.isolation.notes.length > 0 ? { not_applied: grade.run.isolation.notes.join("; ") } : {}),
      },
      messages: [...this.conversation(), { ...message, role: message.role || "assistant" }, { role: "environment", name: "tests", content: report }],
    };
  }
}

export interface CodeDatasetOptions extends CodeEnvOptions {
  renderer: RLRenderer;
  batchSize: number;
  groupSize: number;
  datasetName: string;
  /** Shuffle once with this seed; null keeps file order. */
  shuffleSeed?: number | null;
}

/** Code tasks cut into batches of groups (a trailing partial batch is dropped). */
export function codeTaskDataset(tasks: readonly CodeTask[], options: CodeDatasetOptions): ProblemListDataset<CodeTask> {
  const { renderer, batchSize, groupSize, datasetName, shuffleSeed, ...env } = options;
  return new ProblemListDataset(tasks, {
    batchSize,
    groupSize,
    datasetName,
    shuffleSeed: shuffleSeed ?? null,
    makeEnv: (task) => new CodeEnv(renderer, task, env),
  });
}
