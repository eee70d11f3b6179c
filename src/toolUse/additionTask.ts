// The tool_use recipe's task: add two numbers longer than the tiny model can add in its head,
// with a calculator at hand. Reward is 1 for an exactly correct final answer and 0 otherwise
// (tool use itself earns nothing); `called_tool` is the share of episodes that used the tool.
// Also the warm-up's synthetic transcripts: they teach the `<call>` syntax and reading the
// result back, and demonstrate the decision to call in only a chosen share of them.
import type { Renderer } from "../renderers/base.ts";
import type { Message } from "../renderers/types.ts";
import type { Datum } from "../tinker/types.ts";
import { Prng } from "../data/synthetic/prng.ts";
import { gradeFirstNumber } from "../grading/index.ts";
import { datumFromModelInputWeights } from "../supervised/common.ts";
import { SupervisedDatasetFromRows } from "../supervised/data.ts";
import type { SupervisedDatasetBuilder } from "../supervised/types.ts";
import { EnvGroupBuilder, type Env, type RLDataset, type RLDatasetBuilder } from "../rl/types.ts";
import { AgentToolEnv, answerText } from "./agentToolEnv.ts";
import { textToolCallShort, toolCallFormatFor } from "./callFormat.ts";
import type { RolloutConfig } from "./rolloutLimits.ts";
import { toolSpec } from "./tool.ts";
import { calculatorTool } from "./tools/calculator.ts";

export interface AdditionProblem {
  a: number;
  b: number;
  /** Absent: "+". */
  op?: TaskOp;
}

export type TaskOp = "+" | "-";

export function problemAnswer(p: AdditionProblem): number {
  return p.op === "-" ? p.a - p.b : p.a + p.b;
}

export const ADDITION_SYSTEM_PROMPT = "Answer with the number.";

export function additionQuestion(p: AdditionProblem): string {
  return `What is ${p.a} ${p.op ?? "+"} ${p.b}?`;
}

/**
 * Operands with exactly `digits` digits. For "-" the difference is two digits (10..99), a
 * variant whose result is shorter to copy (tiny-chat never learned subtraction either).
 */
export function sampleProblem(rng: Prng, digits: number, op: TaskOp = "+"): AdditionProblem {
  const lo = 10 ** (digits - 1);
  const hi = 10 ** digits - 1;
  if (op === "-") {
    const a = rng.int(Math.max(lo + 99, 100), hi);
    const b = a - rng.int(10, 99);
    return { a, b, op };
  }
  return { a: rng.int(lo, hi), b: rng.int(lo, hi) };
}

/** 1 when the answer's first number is the exact result (src/grading's `gradeFirstNumber`). */
export function gradeAddition(p: AdditionProblem, answer: Message): number {
  return gradeFirstNumber(answerText(answer), String(problemAnswer(p))).correct ? 1 : 0;
}

export class AdditionToolGroupBuilder extends EnvGroupBuilder {
  constructor(
    readonly renderer: Renderer,
    readonly problem: AdditionProblem,
    readonly groupSize: number,
    readonly rollout: RolloutConfig,
    readonly maxGenerationTokens: number,
  ) {
    super();
  }

  async makeEnvs(): Promise<Env[]> {
    return Array.from(
      { length: this.groupSize },
      () =>
        new AgentToolEnv({
          renderer: this.renderer,
          tools: [calculatorTool],
          systemPrompt: ADDITION_SYSTEM_PROMPT,
          task: [{ role: "user", content: additionQuestion(this.problem) }],
          rollout: this.rollout,
          maxGenerationTokens: this.maxGenerationTokens,
          grade: (answer) => {
            const correct = gradeAddition(this.problem, answer);
            return { reward: correct, metrics: { correct } };
          },
        }),
    );
  }

  override loggingTags(): string[] {
    return ["addition_tool"];
  }
}

export interface AdditionToolDatasetOptions {
  renderer: Renderer;
  batchSize: number;
  groupSize: number;
  numBatches: number;
  seed: number;
  digits: number;
  op: TaskOp;
  rollout: RolloutConfig;
  maxGenerationTokens: number;
}

class AdditionToolDataset implements RLDataset {
  constructor(readonly options: AdditionToolDatasetOptions) {}

  get length(): number {
    return this.options.numBatches;
  }

  getBatch(index: number): EnvGroupBuilder[] {
    const o = this.options;
    const rng = new Prng(o.seed * 1_000_003 + index);
    return Array.from(
      { length: o.batchSize },
      () => new AdditionToolGroupBuilder(o.renderer, sampleProblem(rng, o.digits, o.op), o.groupSize, o.rollout, o.maxGenerationTokens),
    );
  }
}

export function additionToolDatasetBuilder(options: AdditionToolDatasetOptions): RLDatasetBuilder {
  return { build: async () => ({ train: new AdditionToolDataset(options), test: null }) };
}

/** One synthetic episode: the tool-using transcript (call, result, answer copied from the result) or a direct answer. */
export function warmupTranscript(renderer: Renderer, problem: AdditionProblem, useTool: boolean): Message[] {
  const format = toolCallFormatFor(renderer);
  const sum = String(problemAnswer(problem));
  const head: Message[] = [...format.declareTools([toolSpec(calculatorTool)], ADDITION_SYSTEM_PROMPT), { role: "user", content: additionQuestion(problem) }];
  if (!useTool) return [...head, { role: "assistant", content: sum }];
  const args = { expression: `${problem.a} ${problem.op ?? "+"} ${problem.b}` };
  const call = { type: "function" as const, id: "functions.calculator:0", function: { name: "calculator", arguments: JSON.stringify(args) } };
  const callMessage: Message =
    format.kind === "text"
      ? { role: "assistant", content: textToolCallShort("calculator", args.expression), tool_calls: [call] }
      : { role: "assistant", content: "", tool_calls: [call] };
  return [...head, callMessage, format.toolResultMessage(call, sum), { role: "assistant", content: sum }];
}

/** One warm-up row: a transcript and whether its first trained token (the decision) is trained. */
export interface WarmupRow {
  messages: Message[];
  /** False: the opening token of the reply (call or answer) is shown but not trained. */
  trainDecision: boolean;
}

/**
 * The warm-up's datum: every assistant token of the transcript is trained, except the reply's
 * opening token when the row does not demonstrate the decision. That token alone decides
 * between calling the tool and answering directly.
 */
export function warmupDatum(renderer: Renderer, row: WarmupRow): Datum {
  const ex = renderer.buildSupervisedExample(row.messages, "all_assistant_messages");
  const weights = Array.from(ex.weights);
  if (!row.trainDecision) {
    const first = weights.findIndex((w) => w > 0);
    if (first >= 0) weights[first] = 0;
  }
  return datumFromModelInputWeights(ex.modelInput, weights);
}

export interface WarmupOptions {
  renderer: Renderer;
  examples: number;
  batchSize: number;
  digits: number;
  /** Share of problems whose transcript uses the tool (the rest answer directly). */
  toolShare: number;
  /**
   * Share of tool transcripts whose opening token, the decision to call, is trained. Below 1
   * the warm-up teaches how to call and how to read the result on every tool transcript, but
   * demonstrates making the call less often than answering directly: RL learns when it pays.
   */
  decisionShare: number;
  op: TaskOp;
  seed: number;
}

export function warmupRows(options: WarmupOptions): WarmupRow[] {
  const rng = new Prng(options.seed * 7919 + 17);
  return Array.from({ length: options.examples }, () => {
    const problem = sampleProblem(rng, options.digits, options.op);
    const useTool = rng.chance(options.toolShare);
    return { messages: warmupTranscript(options.renderer, problem, useTool), trainDecision: !useTool || rng.chance(options.decisionShare) };
  });
}

export function warmupDatasetBuilder(options: WarmupOptions): SupervisedDatasetBuilder {
  return {
    build: async () => {
      const train = new SupervisedDatasetFromRows(warmupRows(options), options.batchSize, (row) => warmupDatum(options.renderer, row));
      return { train, test: null };
    },
  };
}
