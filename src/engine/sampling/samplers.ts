// The samplers a compute worker holds. A sampler is pinned to one set of weights: a base model, a
// checkpoint, or a snapshot of a training model taken when it was created (later training does
// not reach it). What a sampler keeps is its *source* (shared base weights plus, for LoRA, the
// small adapter tensors). It decodes with the adapter unmerged (weights.ts), so a snapshot of a
// training model costs a copy of the adapter, and any number of samplers share one base.
import type { BaseArray } from "../kernels/halfArray.ts";
import type { Kernels } from "../kernels/types.ts";
import type { ModelConfig } from "../model/config.ts";
import { inferenceModel, type InferenceModel } from "./forward.ts";
import type { ModelLimits } from "./request.ts";
import type { SamplerHandle } from "./scheduler.ts";
import { loadTokenDecoder, type TokenDecoder } from "./stop.ts";
import { buildInferenceWeights, ownedBytes, type AdapterTensors } from "./weights.ts";

export interface SamplerSource {
  config: ModelConfig;
  /**
   * HF-named weights: the frozen base (shared with training models; matrices possibly 16-bit, as
   * mapped from the checkpoint), or a full model's own copy.
   */
  weights: Map<string, BaseArray>;
  /** Key of the shared base in the session (keeps it loaded while this sampler lives). */
  baseKey?: string;
  adapter: AdapterTensors | null;
  /** Folder with the tokenizer (for stop strings), when known. */
  tokenizerDir?: string;
}

export class Sampler implements SamplerHandle {
  private built: InferenceModel | null = null;
  private builtBytes = 0;
  private decoderPromise: Promise<TokenDecoder> | null = null;
  readonly limits: ModelLimits;

  constructor(
    readonly id: string,
    readonly source: SamplerSource,
    private readonly registry: SamplerRegistry,
  ) {
    this.limits = { vocabSize: source.config.vocabSize, contextLength: source.config.maxPositionEmbeddings };
  }

  model(): InferenceModel {
    if (this.built === null) {
      const w = buildInferenceWeights(this.source.config, this.source.weights, this.source.adapter);
      this.built = inferenceModel(w, this.registry.kernels);
      this.builtBytes = ownedBytes(w, this.source.weights);
    }
    return this.built;
  }

  /** Bytes this sampler holds beyond the shared base once built: its adapter factors. */
  get residentBytes(): number {
    return this.built === null ? 0 : this.builtBytes;
  }

  decoder(): Promise<TokenDecoder> {
    if (this.decoderPromise === null) {
      const dir = this.source.tokenizerDir;
      this.decoderPromise =
        dir === undefined
          ? Promise.reject(new Error(`stop strings need the model's tokenizer, and sampler ${this.id} has no tokenizer folder; pass stop token ids instead`))
          : loadTokenDecoder(dir);
      // A failed load is retried by the next request (the files may appear).
      this.decoderPromise.catch(() => (this.decoderPromise = null));
    }
    return this.decoderPromise;
  }
}

export class SamplerRegistry {
  private readonly samplers = new Map<string, Sampler>();
  constructor(readonly kernels: Kernels) {}

  add(id: string, source: SamplerSource): Sampler {
    if (this.samplers.has(id)) throw new Error(`sampler id ${id} is already in use`);
    const s = new Sampler(id, source, this);
    this.samplers.set(id, s);
    return s;
  }

  get(id: string): Sampler | undefined {
    return this.samplers.get(id);
  }

  remove(id: string): Sampler | undefined {
    const s = this.samplers.get(id);
    this.samplers.delete(id);
    return s;
  }

  /** Base keys that samplers still use. */
  baseKeys(): Set<string> {
    const out = new Set<string>();
    for (const s of this.samplers.values()) if (s.source.baseKey !== undefined) out.add(s.source.baseKey);
    return out;
  }

  get size(): number {
    return this.samplers.size;
  }
}
