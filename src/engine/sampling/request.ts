// Checks a sample request against the model it runs on, with the hosted service's messages where
// the protocol records them (docs/protocol.md#sampling-parameters, docs/protocol.md#errors), and fills the defaults.
import { InvalidArgumentError } from "../../tinker/errors.ts";
import type { SamplingParams } from "../../tinker/types.ts";

/** What the host sends to the worker: the raw parameters, checked there against the model. */
export interface SampleRequestSpec {
  prompt: Int32Array;
  numSamples: number;
  params: SamplingParams;
  promptLogprobs: boolean;
  topkPromptLogprobs: number;
  /** The seed used when params.seed is absent (drawn by the host, so the worker stays pure). */
  fallbackSeed: number;
}

export interface ResolvedSampleRequest {
  prompt: Int32Array;
  numSamples: number;
  /** Tokens to generate at most per sample. */
  maxTokens: number;
  temperature: number;
  topK: number;
  topP: number;
  seed: number;
  stopTokens: ReadonlySet<number>;
  stopStrings: readonly string[];
  promptLogprobs: boolean;
  topkPromptLogprobs: number;
}

export interface ModelLimits {
  vocabSize: number;
  contextLength: number;
}

function bad(message: string): never {
  throw new InvalidArgumentError(message);
}

export function checkPrompt(prompt: Int32Array, limits: ModelLimits): void {
  if (prompt.length === 0) bad("prompt is empty; a sample or compute_logprobs request needs at least one prompt token");
  for (let i = 0; i < prompt.length; i++) {
    const t = prompt[i];
    if (t < 0 || t >= limits.vocabSize) bad(`prompt token ${i} is ${t}, outside the model's vocabulary (ids 0..${limits.vocabSize - 1})`);
  }
  if (prompt.length > limits.contextLength) {
    bad(`Prompt length exceeds the model's context window: ${prompt.length} > ${limits.contextLength}`);
  }
}

function parseStop(stop: SamplingParams["stop"], vocabSize: number): { tokens: Set<number>; strings: string[] } {
  const tokens = new Set<number>();
  const strings: string[] = [];
  if (stop === undefined || stop === null) return { tokens, strings };
  if (typeof stop === "string") {
    if (stop.length === 0) bad("sampling_params.stop: a stop string must not be empty");
    strings.push(stop);
    return { tokens, strings };
  }
  if (!Array.isArray(stop)) bad(`sampling_params.stop must be a string, a list of strings or a list of token ids, got ${typeof stop}`);
  const kinds = new Set(stop.map((s) => typeof s));
  if (kinds.size > 1) {
    bad(`sampling_params.stop mixes strings and token ids (${JSON.stringify(stop).slice(0, 120)}); give either stop strings or stop token ids, not both`);
  }
  for (const s of stop as unknown[]) {
    if (typeof s === "string") {
      if (s.length === 0) bad("sampling_params.stop: a stop string must not be empty");
      strings.push(s);
    } else if (typeof s === "number" && Number.isInteger(s)) {
      if (s < 0 || s >= vocabSize) bad(`sampling_params.stop: token id ${s} is outside the model's vocabulary (ids 0..${vocabSize - 1})`);
      tokens.add(s);
    } else {
      bad(`sampling_params.stop: ${JSON.stringify(s)} is neither a string nor an integer token id`);
    }
  }
  return { tokens, strings };
}

export function resolveSampleRequest(spec: SampleRequestSpec, limits: ModelLimits): ResolvedSampleRequest {
  const p = spec.params ?? {};
  if (!Number.isInteger(spec.numSamples) || spec.numSamples < 1) bad(`num_samples must be a positive integer, got ${spec.numSamples}`);
  checkPrompt(spec.prompt, limits);
  const T = spec.prompt.length;
  let maxTokens: number;
  if (p.max_tokens === undefined || p.max_tokens === null) {
    // No budget: generate until a stop or the end of the context window.
    maxTokens = limits.contextLength - T;
    if (maxTokens < 1) bad(`Prompt length plus max_tokens exceeds the model's context window: ${T} + 1 > ${limits.contextLength}`);
  } else {
    maxTokens = p.max_tokens;
    if (!Number.isInteger(maxTokens) || maxTokens < 1) bad(`sampling_params.max_tokens must be a positive integer, got ${maxTokens}`);
    if (T + maxTokens > limits.contextLength) {
      bad(`Prompt length plus max_tokens exceeds the model's context window: ${T} + ${maxTokens} > ${limits.contextLength}`);
    }
  }
  const temperature = p.temperature ?? 1;
  if (typeof temperature !== "number" || !Number.isFinite(temperature) || temperature < 0) {
    bad(`sampling_params.temperature must be a finite number >= 0 (0 = greedy), got ${temperature}`);
  }
  const topK = p.top_k ?? -1;
  if (!Number.isInteger(topK) || topK < -1) bad(`sampling_params.top_k must be -1 (no limit) or a positive integer, got ${topK}`);
  const topP = p.top_p ?? 1;
  if (typeof topP !== "number" || !(topP > 0 && topP <= 1)) bad(`sampling_params.top_p must be in (0, 1], got ${topP}`);
  const seed = p.seed ?? spec.fallbackSeed;
  if (!Number.isSafeInteger(seed) || seed < 0) bad(`sampling_params.seed must be a non-negative integer, got ${seed}`);
  const { tokens, strings } = parseStop(p.stop, limits.vocabSize);
  const k = spec.topkPromptLogprobs ?? 0;
  if (!Number.isInteger(k) || k < 0) bad(`topk_prompt_logprobs must be a non-negative integer, got ${k}`);
  return {
    prompt: spec.prompt,
    numSamples: spec.numSamples,
    maxTokens,
    temperature,
    topK,
    topP,
    seed,
    stopTokens: tokens,
    stopStrings: strings,
    promptLogprobs: spec.promptLogprobs === true,
    topkPromptLogprobs: Math.min(k, limits.vocabSize),
  };
}
