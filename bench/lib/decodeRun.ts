// What the decode benchmarks share: a sampler handle over an inference model, and timing one batch
// of sample requests through a DecodeScheduler (wall and process CPU seconds, tokens produced).
import type { ModelConfig } from "../../src/engine/model/config.ts";
import type { InferenceModel } from "../../src/engine/sampling/forward.ts";
import { resolveSampleRequest } from "../../src/engine/sampling/request.ts";
import type { DecodeScheduler, SamplerHandle } from "../../src/engine/sampling/scheduler.ts";

export function benchHandle(inf: InferenceModel, config: ModelConfig): SamplerHandle {
  return {
    id: "bench",
    limits: { vocabSize: config.vocabSize, contextLength: config.maxPositionEmbeddings },
    model: () => inf,
    decoder: () => Promise.reject(new Error("no tokenizer")),
  };
}

export const cpuSeconds = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** Deterministic random prompts (an LCG), the same on every run. */
export function promptMaker(vocab: number, seed = 12345): (n: number) => Int32Array {
  let state = seed;
  const rand = (): number => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 4294967296;
  };
  return (n) => Int32Array.from({ length: n }, () => Math.floor(rand() * vocab));
}

export interface Timing {
  wall: number;
  cpu: number;
  tokens: number;
}

/** `requests` concurrent requests of `samples` samples each, `maxTokens` per sample, temperature 1. */
export async function timeRequests(
  scheduler: DecodeScheduler,
  handle: SamplerHandle,
  requests: number,
  samples: number,
  prompt: Int32Array,
  maxTokens: number,
): Promise<Timing> {
  const c0 = cpuSeconds();
  const t0 = performance.now();
  const rs = await Promise.all(
    Array.from({ length: requests }, (_, i) =>
      scheduler.submit(
        handle,
        resolveSampleRequest(
          {
            prompt,
            numSamples: samples,
            params: { max_tokens: maxTokens, temperature: 1, seed: 1000 + i },
            promptLogprobs: false,
            topkPromptLogprobs: 0,
            fallbackSeed: 0,
          },
          handle.limits,
        ),
      ),
    ),
  );
  const wall = (performance.now() - t0) / 1000;
  const tokens = rs.reduce((a, r) => a + r.sequences.reduce((b, s) => b + s.tokens.length, 0), 0);
  return { wall, cpu: cpuSeconds() - c0, tokens };
}
