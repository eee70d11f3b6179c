// What this server is configured to offer beyond the engine's defaults: a subset of models, a
// LoRA rank ceiling, no top-k prompt logprobs. Lets `cookbook serve` stand in for a smaller
// server (SkyRL tx serves one model, caps the rank, refuses top-k) so clients' capability checks
// can be tried against it; refusals are 400s naming the option.
import type { ServerCapabilities } from "../tinker/types.ts";
import { HttpError } from "./http.ts";
import type { ResolvedServeOptions } from "./options.ts";

export class ServedFeatures {
  constructor(private readonly o: Pick<ResolvedServeOptions, "models" | "maxLoraRank" | "topkPromptLogprobs">) {}

  /** The engine's capabilities narrowed to the configured models, with the rank ceiling added. */
  capabilities(engine: ServerCapabilities): ServerCapabilities & { max_lora_rank?: number } {
    const allowed = this.o.models;
    const models =
      allowed === undefined
        ? engine.supported_models
        : allowed.map((name) => engine.supported_models.find((m) => m.model_name === name) ?? { model_name: name });
    return { supported_models: models, ...(this.o.maxLoraRank !== undefined ? { max_lora_rank: this.o.maxLoraRank } : {}) };
  }

  checkModel(baseModel: string): void {
    const allowed = this.o.models;
    if (allowed !== undefined && !allowed.includes(baseModel)) {
      throw new HttpError(
        400,
        `base model ${JSON.stringify(baseModel)} is not served here; this server serves ${allowed.map((m) => JSON.stringify(m)).join(", ")}`,
      );
    }
  }

  checkLoraRank(rank: number): void {
    if (this.o.maxLoraRank !== undefined && rank > this.o.maxLoraRank) {
      throw new HttpError(400, `LoRA rank ${rank} is above this server's maximum of ${this.o.maxLoraRank}`);
    }
  }

  checkTopk(k: number): void {
    if (k > 0 && !this.o.topkPromptLogprobs) {
      throw new HttpError(400, "topk_prompt_logprobs is not supported by this server (it was started with --no-topk-prompt-logprobs)");
    }
  }
}
