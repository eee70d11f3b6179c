// The embedded engine's SamplingClient: a handle on a sampler held by the compute worker. Sample
// requests are posted at once and batched there with every other request on the same sampler.
import { randomInt } from "node:crypto";
import type { SampleOptions, SamplingClient } from "../tinker/clients.ts";
import { InvalidArgumentError } from "../tinker/errors.ts";
import { modelInputToInts } from "../tinker/modelInput.ts";
import type { ModelInput, SampleResponse, SamplingParams } from "../tinker/types.ts";
import type { EngineWorkerHost } from "./worker/host.ts";
import type { CreateSamplerResult } from "./worker/protocol.ts";

// Samplers a program dropped without release() are freed in the worker once collected here.
const finalizer = new FinalizationRegistry<{ host: EngineWorkerHost; samplerId: string }>(({ host, samplerId }) => {
  host.submit({ op: "releaseSampler", samplerId }).catch(() => undefined);
});

function promptTokens(prompt: ModelInput): Int32Array {
  if (prompt === null || typeof prompt !== "object" || !Array.isArray(prompt.chunks)) {
    throw new InvalidArgumentError("prompt must be a ModelInput ({ chunks: [...] })");
  }
  try {
    return Int32Array.from(modelInputToInts(prompt));
  } catch (err) {
    throw new InvalidArgumentError(
      `prompt: ${(err as Error).message} (the embedded engine runs text-only models: it has no vision tower, so sample with images from a remote Tinker service)`,
    );
  }
}

export class EmbeddedSamplingClient implements SamplingClient {
  private released = false;

  constructor(
    private readonly host: EngineWorkerHost,
    /** The worker's id for this sampler. */
    readonly samplerId: string,
    readonly baseModel: string,
    readonly modelPath: string | undefined,
    /** Vocabulary size and context window of the model (embedded only). */
    readonly info: CreateSamplerResult,
  ) {
    finalizer.register(this, { host, samplerId }, this);
  }

  private live(): void {
    if (this.released) throw new InvalidArgumentError(`sampling client ${this.samplerId} was released; create a new one`);
  }

  async sample(prompt: ModelInput, numSamples: number, params: SamplingParams, options: SampleOptions = {}): Promise<SampleResponse> {
    this.live();
    const r = await this.host.submit({
      op: "sample",
      samplerId: this.samplerId,
      spec: {
        prompt: promptTokens(prompt),
        numSamples,
        params: params ?? {},
        promptLogprobs: options.includePromptLogprobs ?? false,
        topkPromptLogprobs: options.topkPromptLogprobs ?? 0,
        fallbackSeed: randomInt(0, 2 ** 47),
      },
    });
    const out: SampleResponse = { type: "sample", sequences: r.sequences };
    if (r.prompt_logprobs !== undefined) out.prompt_logprobs = r.prompt_logprobs;
    if (r.topk_prompt_logprobs !== undefined) out.topk_prompt_logprobs = r.topk_prompt_logprobs;
    return out;
  }

  async computeLogprobs(prompt: ModelInput): Promise<(number | null)[]> {
    this.live();
    return this.host.submit({ op: "computeLogprobs", samplerId: this.samplerId, prompt: promptTokens(prompt) });
  }

  /** Embedded only: frees the sampler's weights and caches in the worker now (otherwise on garbage collection). */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    finalizer.unregister(this);
    await this.host.submit({ op: "releaseSampler", samplerId: this.samplerId });
  }
}
