// Sampling interfaces at two levels: tokens (what RL rollouts use, since RL trains on tokens)
// and messages (evaluators, multi-agent opponents). Both wrap a SamplingClient.
import { mixSeed } from "./random/seeds.ts";
import type { SamplingClient } from "./tinker/clients.ts";
import type { ModelInput, StopReason as SamplerStopReason } from "./tinker/types.ts";
import type { Message, RLRenderer } from "./renderers/policyRenderer.ts";
import { modelInputLength } from "./tinker/modelInput.ts";

/** Stop strings, or stop token ids. */
export type StopCondition = string[] | number[];

export interface TokensWithLogprobs {
  tokens: number[];
  /** Per-token sampled logprobs; null when the sampler did not return them. */
  logprobs: number[] | null;
  stopReason: SamplerStopReason;
}

/** Logprobs of an action, failing loudly when training needs them and they are missing. */
export function requireLogprobs(ac: TokensWithLogprobs): number[] {
  if (ac.logprobs === null) throw new Error("sampled action has no logprobs; RL training needs the sampler to return them");
  if (ac.logprobs.length !== ac.tokens.length) {
    throw new Error(`sampled action has ${ac.tokens.length} tokens but ${ac.logprobs.length} logprobs`);
  }
  return ac.logprobs;
}

export interface TokenCompleter {
  /** `maxTokens` caps this one call; the completer's own cap still applies (the smaller wins). */
  complete(modelInput: ModelInput, stop: StopCondition, options?: { maxTokens?: number }): Promise<TokensWithLogprobs>;
  /**
   * A completer for one member of a group whose sampling seed depends only on `key` (and the
   * parent's seed), so concurrent rollouts draw the same tokens whatever order they finish in.
   */
  fork?(key: number): TokenCompleter;
}

export interface MessageCompleter {
  complete(messages: Message[]): Promise<Message>;
  /** A completer with its own seed stream drawn from `key` (see TokenCompleter.fork). */
  fork?(key: number): MessageCompleter;
}

/** Samples one completion per call; `contextWindow`, when known, shrinks max_tokens so prompt + generation fit. */
export class TinkerTokenCompleter implements TokenCompleter {
  /** Calls made so far: the n-th call of a seeded completer samples with seed mix(seed, n). */
  private calls = 0;

  constructor(
    readonly samplingClient: SamplingClient,
    readonly maxTokens: number,
    readonly temperature = 1.0,
    readonly contextWindow?: number,
    /** When set, every call is seeded (reproducible runs); unseeded calls use the sampler's entropy. */
    readonly seed?: number,
  ) {}

  fork(key: number): TinkerTokenCompleter {
    if (this.seed === undefined) return this;
    return new TinkerTokenCompleter(this.samplingClient, this.maxTokens, this.temperature, this.contextWindow, mixSeed(this.seed, key));
  }

  async complete(modelInput: ModelInput, stop: StopCondition, options: { maxTokens?: number } = {}): Promise<TokensWithLogprobs> {
    let maxTokens = options.maxTokens !== undefined ? Math.min(this.maxTokens, options.maxTokens) : this.maxTokens;
    if (this.contextWindow !== undefined) {
      const promptLength = modelInputLength(modelInput);
      maxTokens = Math.min(maxTokens, this.contextWindow - promptLength);
      if (maxTokens <= 0) {
        throw new Error(`prompt length (${promptLength}) fills the context window (${this.contextWindow}); no room for generation`);
      }
    }
    const seed = this.seed === undefined ? undefined : mixSeed(this.seed, this.calls++);
    const response = await this.samplingClient.sample(modelInput, 1, {
      stop,
      max_tokens: maxTokens,
      temperature: this.temperature,
      ...(seed === undefined ? {} : { seed }),
    });
    const seq = response.sequences[0];
    if (seq === undefined) throw new Error("sampler returned no sequences for a request of 1 sample");
    return { tokens: seq.tokens, logprobs: seq.logprobs ?? null, stopReason: seq.stop_reason };
  }
}

export class TinkerMessageCompleter implements MessageCompleter {
  readonly stopCondition: StopCondition;
  readonly temperature: number;
  readonly topP: number;
  /** When set, the n-th call samples with seed mix(seed, n), as TinkerTokenCompleter does. */
  readonly seed: number | undefined;
  private calls = 0;

  constructor(
    readonly samplingClient: SamplingClient,
    readonly renderer: RLRenderer,
    readonly maxTokens: number,
    private readonly options: { stopCondition?: StopCondition; temperature?: number; topP?: number; seed?: number } = {},
  ) {
    this.stopCondition = options.stopCondition ?? renderer.getStopSequences();
    this.temperature = options.temperature ?? 1.0;
    this.topP = options.topP ?? 1.0;
    this.seed = options.seed;
  }

  fork(key: number): TinkerMessageCompleter {
    if (this.seed === undefined) return this;
    return new TinkerMessageCompleter(this.samplingClient, this.renderer, this.maxTokens, { ...this.options, seed: mixSeed(this.seed, key) });
  }

  async complete(messages: Message[]): Promise<Message> {
    const prompt = this.renderer.buildGenerationPrompt(messages);
    const seed = this.seed === undefined ? undefined : mixSeed(this.seed, this.calls++);
    const response = await this.samplingClient.sample(prompt, 1, {
      stop: this.stopCondition,
      max_tokens: this.maxTokens,
      temperature: this.temperature,
      ...(this.topP < 1 ? { top_p: this.topP } : {}),
      ...(seed === undefined ? {} : { seed }),
    });
    const seq = response.sequences[0];
    if (seq === undefined) throw new Error("sampler returned no sequences for a request of 1 sample");
    const { message } = this.renderer.parseResponse(seq.tokens);
    const out: Message = { role: "assistant", content: message.content };
    if (message.tool_calls !== undefined) out.tool_calls = message.tool_calls;
    return out;
  }
}
