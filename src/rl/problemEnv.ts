// Single-turn question → answer env with a format + correctness reward (docs/cookbook-parity.md#env-helpers).
import type { StopCondition } from "../completers.ts";
import { messageText, type Message, type RLRenderer } from "../renderers/policyRenderer.ts";
import { emptyModelInput } from "./tokenSeq.ts";
import { EnvGroupBuilder, EpisodeEndReason, stopMetric, type Action, type ActionExtra, type Env, type InitialObservation, type StepResult } from "./types.ts";

export interface ProblemEnvOptions {
  convoPrefix?: Message[];
  formatCoef?: number;
  /** When true, only a response ending in the renderer's stop sequence counts as well formed. */
  requireStopSequenceForFormat?: boolean;
}

/**
 * reward = format_coef·(format_ok − 1) + correct: a malformed answer costs format_coef, a
 * correct one earns 1. Subclasses say what the question is and how to grade.
 */
export abstract class ProblemEnv implements Env {
  readonly convoPrefix: Message[];
  readonly formatCoef: number;
  readonly requireStopSequenceForFormat: boolean;

  constructor(
    readonly renderer: RLRenderer,
    options: ProblemEnvOptions = {},
  ) {
    this.convoPrefix = options.convoPrefix ?? [];
    this.formatCoef = options.formatCoef ?? 0.1;
    this.requireStopSequenceForFormat = options.requireStopSequenceForFormat ?? true;
  }

  abstract getQuestion(): string;
  abstract checkAnswer(response: string): boolean;
  abstract checkFormat(response: string): boolean;
  abstract getReferenceAnswer(): string;

  get stopCondition(): StopCondition {
    return this.renderer.getStopSequences();
  }

  protected conversation(): Message[] {
    return [...this.convoPrefix, { role: "user", content: this.getQuestion() }];
  }

  async initialObservation(): Promise<InitialObservation> {
    return { observation: this.renderer.buildGenerationPrompt(this.conversation()), stopCondition: this.stopCondition };
  }

  async step(action: Action, extra: ActionExtra = {}): Promise<StepResult> {
    const { message, termination } = this.renderer.parseResponse(action);
    const content = messageText(message);
    const wellFormed = this.requireStopSequenceForFormat ? termination === "stop_sequence" : termination !== "malformed";
    const format = wellFormed && this.checkFormat(content) ? 1 : 0;
    const correct = this.checkAnswer(content) ? 1 : 0;
    const reward = this.formatCoef * (format - 1) + correct;
    return {
      reward,
      episodeDone: true,
      nextObservation: emptyModelInput(),
      nextStopCondition: this.stopCondition,
      // One-hot stop reason, so transcripts and `env/all/stop/*` say whether answers were cut off.
      metrics: { format, correct, [stopMetric(extra.stopReason === "length" ? EpisodeEndReason.MAX_TOKENS : EpisodeEndReason.COMPLETED)]: 1 },
      logs: { reference_answer: this.getReferenceAnswer(), format_valid: format === 1, correct: correct === 1, format_coef: this.formatCoef },
      messages: [...this.conversation(), { ...message, role: message.role || "assistant" }],
    };
  }
}

/** `numEnvs` copies of one problem (any single-problem env); rewards come from the envs' own steps. */
export class ProblemGroupBuilder extends EnvGroupBuilder {
  constructor(
    readonly envThunk: () => Env,
    readonly numEnvs: number,
    readonly datasetName = "problems",
  ) {
    super();
  }

  async makeEnvs(): Promise<Env[]> {
    return Array.from({ length: this.numEnvs }, () => this.envThunk());
  }

  override loggingTags(): string[] {
    return [this.datasetName];
  }
}
