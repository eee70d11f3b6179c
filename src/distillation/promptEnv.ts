// Prompts with no task at all (the cookbook's PromptOnlyEnv): the student answers and the
// teacher's log-probs are the only signal. A conversation file's rows become prompts by cutting
// each conversation after its last user message.
import { messageText, type Message, type RLRenderer } from "../renderers/policyRenderer.ts";
import { seededShuffle } from "../data/shuffle.ts";
import { emptyModelInput } from "../rl/tokenSeq.ts";
import {
  EnvGroupBuilder,
  EpisodeEndReason,
  stopMetric,
  type Action,
  type ActionExtra,
  type Env,
  type InitialObservation,
  type RLDataset,
  type StepResult,
} from "../rl/types.ts";

export class PromptOnlyEnv implements Env {
  constructor(
    readonly renderer: RLRenderer,
    readonly prompt: readonly Message[],
  ) {}

  async initialObservation(): Promise<InitialObservation> {
    return { observation: this.renderer.buildGenerationPrompt(this.prompt), stopCondition: this.renderer.getStopSequences() };
  }

  async step(action: Action, extra: ActionExtra = {}): Promise<StepResult> {
    const { message } = this.renderer.parseResponse(action);
    return {
      reward: 0,
      episodeDone: true,
      nextObservation: emptyModelInput(),
      nextStopCondition: this.renderer.getStopSequences(),
      metrics: { [stopMetric(extra.stopReason === "length" ? EpisodeEndReason.MAX_TOKENS : EpisodeEndReason.COMPLETED)]: 1 },
      messages: [...this.prompt, { ...message, role: "assistant", content: messageText(message) }],
    };
  }
}

export class PromptGroupBuilder extends EnvGroupBuilder {
  constructor(
    readonly renderer: RLRenderer,
    readonly prompt: readonly Message[],
    readonly groupSize: number,
    readonly tag = "prompts",
  ) {
    super();
  }
  async makeEnvs(): Promise<Env[]> {
    return Array.from({ length: this.groupSize }, () => new PromptOnlyEnv(this.renderer, this.prompt));
  }
  override loggingTags(): string[] {
    return [this.tag];
  }
}

/** Each conversation up to and including its last user message; conversations without one are skipped. */
export function promptsFromConversations(conversations: readonly (readonly Message[])[]): Message[][] {
  const out: Message[][] = [];
  for (const messages of conversations) {
    let last = -1;
    messages.forEach((m, i) => {
      if (m.role === "user") last = i;
    });
    if (last >= 0) out.push(messages.slice(0, last + 1));
  }
  return out;
}

/** Batches of `batchSize` prompts in a seeded order, one group of `groupSize` samples each. */
export class PromptDataset implements RLDataset {
  private readonly order: Message[][];
  constructor(
    prompts: readonly Message[][],
    readonly renderer: RLRenderer,
    readonly batchSize: number,
    readonly groupSize: number,
    seed: number,
  ) {
    if (prompts.length < batchSize) throw new Error(`prompt dataset: ${prompts.length} prompts is fewer than one batch of ${batchSize}`);
    this.order = seededShuffle(prompts, seed);
  }
  get length(): number {
    return Math.floor(this.order.length / this.batchSize);
  }
  getBatch(index: number): EnvGroupBuilder[] {
    return this.order.slice(index * this.batchSize, (index + 1) * this.batchSize).map((p) => new PromptGroupBuilder(this.renderer, p, this.groupSize));
  }
}
