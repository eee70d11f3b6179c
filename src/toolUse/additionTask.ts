// The tool_use recipe's task: add two numbers longer than the tiny model can add in its head,
// with a calculator at hand. Reward is 1 for an exactly correct final answer and 0 otherwise
// (tool use itself earns nothing); `called_tool` is the share of episodes that used the tool.
// Also the synthetic transcripts of the warm-up that teaches the `<call>` syntax.
import type { Renderer } from "../renderers/base.ts";
import type { Message } from "../renderers/types.ts";
import { Prng } from "../data/synthetic/prng.ts";
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
  /** Training episodes add; the warm-up also multiplies, so the model learns to copy the tool's result rather than redo the sum. */
  op?: "+" | "-" | "*";
}

export function problemAnswer(p: AdditionProblem): number {
  return p.op === "*" ? p.a * p.b : p.op === "-" ? p.a - p.b : p.a + p.b;
}

export type TaskOp = "+" | "-" | "*";

export const ADDITION_SYSTEM_PROMPT = "Answer with the number.";

export function additionQuestion(p: AdditionProblem): string {
  return `What is ${p.a} ${p.op ?? "+"} ${p.b}?`;
}

/** Operands with exactly `digits` digits. */
/**
 * Operands with exactly `digits` digits. For "-" the difference is two digits (10..99): the
 * tiny model never learned subtraction, and a two-digit result is short enough for it to copy.
 */
export function sampleProblem(rng: Prng, digits: number, op: TaskOp = "+"): AdditionProblem {
  const lo = 10 ** (digits - 1);
  const hi = 10 ** digits - 1;
  if (op === "-") {
    const a = rng.int(Math.max(lo + 99, 100), hi);
    const b = a - rng.int(10, 99);
    return { a, b, op };
  }
  const p: AdditionProblem = { a: rng.int(lo, hi), b: rng.int(lo, hi) };
  if (op === "*") p.op = "*";
  return p;
}

/** 1 when the answer's first integer is the exact result. */
export function gradeAddition(p: AdditionProblem, answer: Message): number {
  const m = /-?\d+/.exec(answerText(answer));
  return m !== null && Number(m[0]) === problemAnswer(p) ? 1 : 0;
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
    return Array.from({ length: o.batchSize }, () => new AdditionToolGroupBuilder(o.renderer, sampleProblem(rng, o.digits, o.op), o.groupSize, o.rollout, o.maxGenerationTokens));
  }
}

export function additionToolDatasetBuilder(options: AdditionToolDatasetOptions): RLDatasetBuilder {
  return { build: async () => ({ train: new AdditionToolDataset(options), test: null }) };
}

/**
 * One synthetic episode: with probability `toolShare` the tool-using transcript (call, result,
 * answer copied from the result), else a direct answer. Teaching both leaves RL to learn when the
 * tool pays off.
 */
export function warmupTranscript(renderer: Renderer, problem: AdditionProblem, useTool: boolean): Message[] {
  const format = toolCallFormatFor(renderer);
  const sum = String(problemAnswer(problem));
  const head: Message[] = [...format.declareTools([toolSpec(calculatorTool)], ADDITION_SYSTEM_PROMPT), { role: "user", content: additionQuestion(problem) }];
  if (!useTool) return [...head, { role: "assistant", content: sum }];
  const args = { expression: `${problem.a} ${problem.op ?? "+"} ${problem.b}` };
  const call = { type: "function" as const, id: "functions.calculator:0", function: { name: "calculator", arguments: JSON.stringify(args) } };
  const callMessage: Message =
    format.kind === "text" ? { role: "assistant", content: textToolCallShort("calculator", args.expression), tool_calls: [call] } : { role: "assistant", content: "", tool_calls: [call] };
  return [...head, callMessage, format.toolResultMessage(call, sum), { role: "assistant", content: sum }];
}

export function warmupDatasetBuilder(options: {
  renderer: Renderer;
  examples: number;
  batchSize: number;
  digits: number;
  toolShare: number;
  /** Share of warm-up problems that multiply (always with the tool: the answer must be copied). */
  multiplyShare: number;
  op: TaskOp;
  seed: number;
}): SupervisedDatasetBuilder {
  return {
    build: async () => {
      const rng = new Prng(options.seed * 7919 + 17);
      const rows = Array.from({ length: options.examples }, () => {
        const multiply = rng.chance(options.multiplyShare);
        return warmupTranscript(options.renderer, sampleProblem(rng, options.digits, multiply ? "*" : options.op), multiply || rng.chance(options.toolShare));
      });
      const train = new SupervisedDatasetFromRows(rows, options.batchSize, (messages) => {
        const ex = options.renderer.buildSupervisedExample(messages, "all_assistant_messages");
        return datumFromModelInputWeights(ex.modelInput, ex.weights);
      });
      return { train, test: null };
    },
  };
}
