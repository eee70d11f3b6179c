// Message-level envs (the conversation as messages) and the adapter that turns one into a
// token-level Env by rendering prompts and parsing sampled responses (docs/cookbook-parity.md#env-helpers).
import type { StopCondition } from "../completers.ts";
import type { ModelInput } from "../tinker/types.ts";
import type { Message, RLRenderer } from "../renderers/policyRenderer.ts";
import { emptyModelInput, modelInputLength } from "./tokenSeq.ts";
import {
  InitialObservationOverflow,
  EpisodeEndReason,
  stopMetric,
  type Action,
  type ActionExtra,
  type Env,
  type InitialObservation,
  type Logs,
  type Metrics,
  type StepResult,
} from "./types.ts";

export interface MessageStepResult {
  reward: number;
  episodeDone: boolean;
  /** The whole conversation so far, which becomes the next prompt. */
  nextMessages: Message[];
  metrics?: Metrics;
  logs?: Logs;
  nextStopCondition?: StopCondition;
}

export interface MessageEnv {
  initialObservation(): Promise<Message[]>;
  step(message: Message): Promise<MessageStepResult>;
}

export interface EnvFromMessageEnvOptions {
  /** Reward of a response the renderer could not parse cleanly. */
  failedParseReward?: number;
  terminateOnParseError?: boolean;
  /** Prompt + generation budget; a conversation that would exceed it ends the episode. */
  maxTrajectoryTokens?: number;
  /** Generation tokens reserved when checking maxTrajectoryTokens. */
  maxGenerationTokens?: number;
  contextOverflowReward?: number;
}

export class EnvFromMessageEnv implements Env {
  readonly failedParseReward: number;
  readonly terminateOnParseError: boolean;
  readonly maxTrajectoryTokens: number | undefined;
  readonly maxGenerationTokens: number | undefined;
  readonly contextOverflowReward: number;
  private readonly baseStop: StopCondition;

  constructor(
    readonly renderer: RLRenderer,
    readonly messageEnv: MessageEnv,
    options: EnvFromMessageEnvOptions = {},
  ) {
    this.failedParseReward = options.failedParseReward ?? -1.0;
    this.terminateOnParseError = options.terminateOnParseError ?? true;
    this.maxTrajectoryTokens = options.maxTrajectoryTokens;
    this.maxGenerationTokens = options.maxGenerationTokens;
    this.contextOverflowReward = options.contextOverflowReward ?? -0.1;
    this.baseStop = renderer.getStopSequences();
  }

  private exceedsContext(observationLength: number): boolean {
    if (this.maxTrajectoryTokens === undefined) return false;
    return observationLength + (this.maxGenerationTokens ?? 0) > this.maxTrajectoryTokens;
  }

  private lastMessages: Message[] = [];

  async initialObservation(): Promise<InitialObservation | InitialObservationOverflow> {
    const messages = await this.messageEnv.initialObservation();
    this.lastMessages = messages;
    const prompt: ModelInput = this.renderer.buildGenerationPrompt(messages);
    const length = modelInputLength(prompt);
    if (this.exceedsContext(length)) {
      return new InitialObservationOverflow(
        this.contextOverflowReward,
        { max_tokens_reached: 1, [stopMetric(EpisodeEndReason.MAX_TOKENS)]: 1 },
        {
          initial_observation_overflow: `initial observation (${length} tokens) + max_generation_tokens (${this.maxGenerationTokens ?? 0}) exceeds max_trajectory_tokens (${this.maxTrajectoryTokens})`,
        },
      );
    }
    return { observation: prompt, stopCondition: this.baseStop };
  }

  private end(reward: number, metrics: Metrics, logs: Logs = {}, messages?: Message[]): StepResult {
    const out: StepResult = { reward, episodeDone: true, nextObservation: emptyModelInput(), nextStopCondition: this.baseStop, metrics, logs };
    if (messages !== undefined) out.messages = messages;
    return out;
  }

  async step(action: Action, extra: ActionExtra = {}): Promise<StepResult> {
    if (extra.stopReason === "length") {
      // The sampler hit max_tokens without a stop sequence: the turn is unfinished, so the
      // episode ends here; earlier turns keep their training signal.
      // The cut-off text still goes to the transcript, so a reader sees what ran long.
      const { message } = this.renderer.parseResponse(action);
      return this.end(this.contextOverflowReward, { max_tokens_reached: 1, [stopMetric(EpisodeEndReason.MAX_TOKENS)]: 1 }, {}, [...this.lastMessages, message]);
    }
    const { message, termination } = this.renderer.parseResponse(action);
    const shown = [...this.lastMessages, message];
    if (termination === "malformed") {
      const metrics: Metrics = { parse_error: 1 };
      if (this.terminateOnParseError) metrics[stopMetric(EpisodeEndReason.PARSE_ERROR)] = 1;
      return {
        reward: this.failedParseReward,
        episodeDone: this.terminateOnParseError,
        nextObservation: emptyModelInput(),
        nextStopCondition: this.baseStop,
        metrics,
        logs: {},
        messages: shown,
      };
    }
    const result = await this.messageEnv.step(message);
    this.lastMessages = result.nextMessages;
    const nextObservation = this.renderer.buildGenerationPrompt(result.nextMessages);
    if (!result.episodeDone && this.exceedsContext(modelInputLength(nextObservation))) {
      return this.end(
        this.contextOverflowReward,
        { ...(result.metrics ?? {}), context_overflow: 1, [stopMetric(EpisodeEndReason.CONTEXT_OVERFLOW)]: 1 },
        result.logs ?? {},
        shown,
      );
    }
    return {
      reward: result.reward,
      episodeDone: result.episodeDone,
      nextObservation,
      nextStopCondition: result.nextStopCondition ?? this.baseStop,
      metrics: result.metrics ?? {},
      logs: result.logs ?? {},
      messages: shown,
    };
  }
}
