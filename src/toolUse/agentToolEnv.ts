// The agent tool environment (the cookbook's AgentToolMessageEnv / build_agent_tool_env): the
// policy answers, its tool calls are parsed with the renderer's format, run with a per-call
// timeout and fed back as tool messages; the episode ends on a final answer (graded), or when a
// rollout limit, the parse-error policy or a tool ends it.
import type { StopCondition } from "../completers.ts";
import { getTextContent } from "../renderers/content.ts";
import type { Renderer } from "../renderers/base.ts";
import { RendererError, type Message, type ParsedResponse, type ToolCall } from "../renderers/types.ts";
import { emptyModelInput, modelInputLength } from "../rl/tokenSeq.ts";
import {
  InitialObservationOverflow,
  PARSE_ERROR_MASKED_METRIC_KEY,
  EpisodeEndReason,
  stopMetric,
  type Action,
  type ActionExtra,
  type Env,
  type InitialObservation,
  type Metrics,
  type StepResult,
} from "../rl/types.ts";
import { toolCallFormatFor, type ToolCallFormat } from "./callFormat.ts";
import { terminationReward, type RolloutConfig } from "./rolloutLimits.ts";
import { errorToolResult, runToolCall, toolSpec, type Tool, type ToolResult } from "./tool.ts";

export interface FinalAnswerGrade {
  reward: number;
  metrics?: Metrics;
}

export interface AgentToolEnvOptions {
  renderer: Renderer;
  tools: readonly Tool[];
  /** The task: usually one user message. */
  task: Message[];
  systemPrompt?: string;
  rollout: RolloutConfig;
  /** Scores the message that ends the episode without a tool call. */
  grade(answer: Message, conversation: readonly Message[]): FinalAnswerGrade | Promise<FinalAnswerGrade>;
  /** Default: the renderer's own tool format, else the `<call>` text convention. */
  format?: ToolCallFormat;
  /** Generation tokens reserved when checking max_trajectory_tokens (the loop's max_tokens). */
  maxGenerationTokens?: number;
  now?: () => number;
}

export class AgentToolEnv implements Env {
  readonly format: ToolCallFormat;
  private readonly toolsByName: Map<string, Tool>;
  private messages: Message[] = [];
  private turns = 0;
  private sampledTokens = 0;
  private toolCalls = 0;
  private toolErrors = 0;
  private parseErrors = 0;
  private startedAt = 0;
  private readonly now: () => number;

  constructor(readonly options: AgentToolEnvOptions) {
    this.format = options.format ?? toolCallFormatFor(options.renderer);
    this.toolsByName = new Map(options.tools.map((t) => [t.name, t]));
    this.now = options.now ?? Date.now;
  }

  private get limits() {
    return this.options.rollout.limits;
  }

  private stop(): StopCondition {
    return this.format.stopCondition();
  }

  private overflows(promptLength: number): boolean {
    const max = this.limits.max_trajectory_tokens;
    return max !== null && promptLength + (this.options.maxGenerationTokens ?? 0) > max;
  }

  async initialObservation(): Promise<InitialObservation | InitialObservationOverflow> {
    this.startedAt = this.now();
    const prefix = this.options.tools.length > 0 ? this.format.declareTools(this.options.tools.map(toolSpec), this.options.systemPrompt ?? "") : [];
    const system: Message[] = prefix.length === 0 && this.options.systemPrompt ? [{ role: "system", content: this.options.systemPrompt }] : prefix;
    this.messages = [...system, ...this.options.task];
    const prompt = this.options.renderer.buildGenerationPrompt(this.messages);
    if (this.overflows(modelInputLength(prompt))) {
      const reward = this.options.rollout.termination_reward.context_overflow;
      return new InitialObservationOverflow(
        reward,
        { [stopMetric(EpisodeEndReason.CONTEXT_OVERFLOW)]: 1 },
        { initial_observation_overflow: `prompt of ${modelInputLength(prompt)} tokens` },
      );
    }
    return { observation: prompt, stopCondition: this.stop() };
  }

  private episodeMetrics(): Metrics {
    return {
      turns: this.turns,
      tool_calls: this.toolCalls,
      called_tool: this.toolCalls > 0 ? 1 : 0,
      tool_errors: this.toolErrors,
      parse_errors: this.parseErrors,
    };
  }

  private end(reason: EpisodeEndReason, reward: number, metrics: Metrics = {}): StepResult {
    return {
      reward,
      episodeDone: true,
      nextObservation: emptyModelInput(),
      nextStopCondition: this.stop(),
      metrics: { ...this.episodeMetrics(), ...metrics, [stopMetric(reason)]: 1 },
      logs: {},
      messages: [...this.messages],
    };
  }

  private endOnBudget(reason: EpisodeEndReason, metrics: Metrics = {}): StepResult {
    return this.end(reason, terminationReward(this.options.rollout.termination_reward, reason), metrics);
  }

  private continueWith(reward: number, metrics: Metrics = {}): StepResult {
    const nextObservation = this.options.renderer.buildGenerationPrompt(this.messages);
    if (this.overflows(modelInputLength(nextObservation))) return this.endOnBudget(EpisodeEndReason.CONTEXT_OVERFLOW, metrics);
    return { reward, episodeDone: false, nextObservation, nextStopCondition: this.stop(), metrics, logs: {}, messages: [...this.messages] };
  }

  private async runCall(call: ToolCall): Promise<ToolResult> {
    const tool = this.toolsByName.get(call.function.name);
    if (tool === undefined) {
      return errorToolResult(`unknown tool ${JSON.stringify(call.function.name)}; available: ${[...this.toolsByName.keys()].join(", ")}`);
    }
    return runToolCall(tool, call.function.arguments, this.options.rollout.tool_timeout_seconds * 1000);
  }

  async step(action: Action, extra: ActionExtra = {}): Promise<StepResult> {
    this.turns += 1;
    this.sampledTokens += action.length;
    const parsed = this.parse(action);
    this.messages.push(parsed.message);

    if (extra.stopReason === "length") return this.endOnBudget(EpisodeEndReason.MAX_TOKENS, { max_tokens_reached: 1 });
    if (this.limits.max_sampled_tokens !== null && this.sampledTokens > this.limits.max_sampled_tokens) {
      return this.endOnBudget(EpisodeEndReason.MAX_SAMPLED_TOKENS);
    }
    if (this.limits.max_wall_seconds !== null && (this.now() - this.startedAt) / 1000 > this.limits.max_wall_seconds) {
      return this.endOnBudget(EpisodeEndReason.ROLLOUT_TIMEOUT);
    }

    const unparsed = parsed.message.unparsed_tool_calls ?? [];
    if (parsed.termination === "malformed" || unparsed.length > 0) {
      this.parseErrors += 1;
      return this.onParseError(unparsed.map((u) => u.error).join("; ") || "the response did not end cleanly");
    }

    const calls = parsed.message.tool_calls ?? [];
    if (calls.length === 0) {
      const grade = await this.options.grade(parsed.message, this.messages);
      return this.end(EpisodeEndReason.COMPLETED, grade.reward, grade.metrics ?? {});
    }

    const metrics: Metrics = {};
    if (this.limits.max_tool_calls !== null && this.toolCalls + calls.length > this.limits.max_tool_calls) {
      return this.endOnBudget(EpisodeEndReason.MAX_TOOL_CALLS);
    }
    let stopEpisode = false;
    for (const call of calls) {
      this.toolCalls += 1;
      const result = await this.runCall(call);
      if (result.isError) this.toolErrors += 1;
      for (const [k, v] of Object.entries(result.metrics ?? {})) metrics[`tool/${k}`] = (metrics[`tool/${k}`] ?? 0) + v;
      this.messages.push(this.format.toolResultMessage(call, result.content));
      if (result.stopEpisode) stopEpisode = true;
    }
    if (stopEpisode) return this.end(EpisodeEndReason.TOOL_STOPPED, 0, metrics);
    if (this.turns >= this.limits.max_turns) return this.endOnBudget(EpisodeEndReason.MAX_TURNS, metrics);
    return this.continueWith(0, metrics);
  }

  /**
   * A response the renderer refuses (e.g. two stop tokens, which a sampler given the stop
   * sequences never produces but a person at `cookbook play` can type) is a parse error with the
   * renderer's reason, so the parse-error policy decides instead of the rollout crashing.
   */
  private parse(action: Action): ParsedResponse {
    try {
      return this.format.parse(action);
    } catch (err) {
      if (!(err instanceof RendererError)) throw err;
      const text = this.options.renderer.tokenizer.decode([...action]);
      return { message: { role: "assistant", content: text, unparsed_tool_calls: [{ raw_text: text, error: err.message }] }, termination: "malformed" };
    }
  }

  private onParseError(error: string): StepResult {
    const policy = this.options.rollout.parse_error;
    if (policy.mode === "mask") return this.end(EpisodeEndReason.PARSE_ERROR, 0, { [PARSE_ERROR_MASKED_METRIC_KEY]: 1 });
    const retriesLeft = policy.mode === "feedback" && this.parseErrors <= policy.max_retries && this.turns < this.limits.max_turns;
    if (!retriesLeft) return this.end(EpisodeEndReason.PARSE_ERROR, policy.reward);
    this.messages.push({ role: "user", content: `Your last message could not be parsed: ${error}. Try again.` });
    return this.continueWith(policy.reward);
  }
}

/** The visible text of the final answer (for graders). */
export function answerText(message: Message): string {
  return getTextContent(message).trim();
}
