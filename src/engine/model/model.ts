// The engine's trainable decoder: Llama / Qwen2 / Qwen3 with LoRA or full training, Tinker's
// summed per-token losses, gradient accumulation until optimStep, and AdamW.
import type { LossFnName, ResolvedAdamParams } from "../../tinker/types.ts";
import type { BaseArray } from "../kernels/halfArray.ts";
import type { FloatArray, Kernels } from "../kernels/types.ts";
import { ActivationArena } from "./activations.ts";
import { packBatch, type SequenceInput } from "./batch.ts";
import type { ModelConfig } from "./config.ts";
import { copyKvSlot, createKvCache, forwardIncremental, type KvCache } from "./kvcache.ts";
import { resolveLoss } from "./losses.ts";
import { AdamW, type OptimizerState } from "./optimizer.ts";
import { buildParams, validateSetup, validateWeights, type ModelParams, type TrainableSetup } from "./params.ts";
import type { HeadResult } from "./head.ts";
import { forwardBackwardPass, passInputs, type PassInputs } from "./pass.ts";
import { randomWeights, type RandomWeightsOptions } from "./randomWeights.ts";
import type { Dtype, Tensor } from "./tensor.ts";

export type { SequenceInput } from "./batch.ts";
export type { TrainableSetup } from "./params.ts";
export type { OptimizerState } from "./optimizer.ts";
export type { KvCache } from "./kvcache.ts";
export type { Dtype, Tensor } from "./tensor.ts";

export interface ForwardBackwardResult {
  /** Per datum: log-prob of each target token ([N, K] row-major for a datum with K targets per position). */
  logprobs: Float32Array[];
  /** Per datum: targets per position, when any datum has more than one. */
  logprobWidths?: number[];
  /** Sum of the per-token losses over all tokens of all datums. */
  lossSum: number;
  /** "loss:sum". */
  metrics: Record<string, number>;
  /** Per datum: each token's loss. */
  elementwiseLoss?: Float32Array[];
}

export interface EngineModelOptions {
  /** float64 runs the reference kernels in double precision, for exact gradient checks. */
  dtype?: Dtype;
}

/** One datum's target log-probs, [N, K] row-major when it has K targets per position. */
function datumLogprobs(result: HeadResult, width: number, a: number, b: number, K: number): Float32Array {
  if (K === 1 || result.extraLogprobs === null) return Float32Array.from(result.logprobs.subarray(a, b));
  const out = new Float32Array((b - a) * K);
  const extra = width - 1;
  for (let t = a; t < b; t++) {
    out[(t - a) * K] = result.logprobs[t];
    for (let k = 1; k < K; k++) out[(t - a) * K + k] = result.extraLogprobs[t * extra + k - 1];
  }
  return out;
}

export class EngineModel {
  private readonly pass: PassInputs;
  private readonly params: ModelParams;
  private readonly optimizer: AdamW;
  readonly dtype: Dtype;

  private constructor(
    readonly config: ModelConfig,
    readonly setup: TrainableSetup,
    readonly kernels: Kernels,
    params: ModelParams,
    dtype: Dtype,
  ) {
    this.params = params;
    this.dtype = dtype;
    this.pass = passInputs(kernels, dtype, config, params, new ActivationArena());
    this.optimizer = new AdamW(params.trainable, dtype);
  }

  /**
   * Validates the weights (HF names, element counts) and the setup, then builds the model. In
   * LoRA float32 mode the frozen weights are shared with `weights`, not copied: 16-bit matrices
   * (HalfArray) stay 16-bit and the kernels widen them as they read them. Full mode (and float64)
   * trains float copies.
   */
  static create(config: ModelConfig, weights: Map<string, BaseArray>, setup: TrainableSetup, kernels: Kernels, options: EngineModelOptions = {}): EngineModel {
    const dtype = options.dtype ?? "float32";
    if (dtype === "float64" && kernels.name !== "reference") {
      throw new Error(`EngineModel: dtype float64 needs the reference kernels (got "${kernels.name}", which runs float32 only)`);
    }
    validateSetup(setup);
    validateWeights(config, weights);
    return new EngineModel(config, setup, kernels, buildParams(config, weights, setup, dtype), dtype);
  }

  static randomWeights(config: ModelConfig, seed: number, options?: RandomWeightsOptions): Map<string, Float32Array> {
    return randomWeights(config, seed, options);
  }

  /**
   * `backward = false` is Tinker's `forward`: no gradient is touched. With `backward`, gradients
   * add to those of earlier calls until optimStep.
   */
  forwardBackward(batch: SequenceInput[], lossFn: LossFnName, lossFnConfig: Record<string, number> | undefined, backward: boolean): ForwardBackwardResult {
    const loss = resolveLoss(lossFn, lossFnConfig);
    const packed = packBatch(batch, loss, this.config);
    const logprobs: Float32Array[] = [];
    const elementwiseLoss: Float32Array[] = [];
    if (packed.T === 0) {
      for (let s = 0; s < batch.length; s++) {
        logprobs.push(new Float32Array(0));
        elementwiseLoss.push(new Float32Array(0));
      }
      return { logprobs, lossSum: 0, metrics: { "loss:sum": 0 }, elementwiseLoss };
    }
    const result = forwardBackwardPass(this.pass, packed, loss, backward);
    const metrics = { "loss:sum": 0, ...(result.routing?.metrics() ?? {}) };
    let lossSum = 0;
    for (let t = 0; t < packed.T; t++) lossSum += result.losses[t];
    for (let s = 0; s < batch.length; s++) {
      const a = packed.seqStarts[s];
      const b = packed.seqStarts[s + 1];
      logprobs.push(datumLogprobs(result, packed.width, a, b, batch[s].targetWidth ?? 1));
      elementwiseLoss.push(Float32Array.from(result.losses.subarray(a, b)));
    }
    metrics["loss:sum"] = lossSum;
    if (packed.width === 1) return { logprobs, lossSum, metrics, elementwiseLoss };
    const logprobWidths = batch.map((d) => d.targetWidth ?? 1);
    return { logprobs, logprobWidths, lossSum, metrics, elementwiseLoss };
  }

  /** AdamW on the accumulated gradients (global-norm clipped when grad_clip_norm > 0), then zero them. */
  optimStep(adam: ResolvedAdamParams): Record<string, number> {
    return this.optimizer.apply(this.kernels, adam);
  }

  /** Trainable tensors by checkpoint name (PEFT names for LoRA, HF names in full mode), as copies. */
  trainableTensors(): Map<string, Float32Array> {
    const out = new Map<string, Float32Array>();
    for (const t of this.params.trainable) out.set(t.name, Float32Array.from(t.data));
    return out;
  }

  /** Replaces every trainable tensor; all names and sizes are checked before anything changes. */
  loadTrainableTensors(tensors: Map<string, Float32Array>): void {
    const known = new Set<string>();
    for (const t of this.params.trainable) {
      known.add(t.name);
      const src = tensors.get(t.name);
      if (src === undefined) throw new Error(`loadTrainableTensors: tensor "${t.name}" is missing`);
      if (src.length !== t.data.length) {
        throw new Error(
          `loadTrainableTensors: tensor "${t.name}" has ${src.length} elements, expected shape [${t.shape.join(", ")}] (${t.data.length} elements)`,
        );
      }
    }
    const extra = [...tensors.keys()].filter((n) => !known.has(n));
    if (extra.length > 0) {
      throw new Error(
        `loadTrainableTensors: unexpected tensor(s) for this ${this.setup.mode} model: ${extra.slice(0, 5).join(", ")}${extra.length > 5 ? ", ..." : ""}`,
      );
    }
    for (const t of this.params.trainable) t.data.set(tensors.get(t.name) as Float32Array);
  }

  optimizerState(): OptimizerState {
    return this.optimizer.state();
  }

  loadOptimizerState(state: OptimizerState): void {
    this.optimizer.load(state);
  }

  resetOptimizerState(): void {
    this.optimizer.reset();
  }

  /**
   * Frozen weights by HF name (16-bit and MXFP4 matrices as they are); in full mode, the current (trained)
   * weights. float32 and 16-bit arrays are live; float64 ones come back rounded to float32 copies.
   */
  baseWeights(): Map<string, BaseArray> {
    const out = new Map<string, BaseArray>();
    const tensors = this.setup.mode === "full" ? this.params.trainable : [...this.params.frozen.values()];
    for (const t of tensors) out.set(t.name, t.data instanceof Float64Array ? Float32Array.from(t.data) : t.data);
    for (const [name, m] of this.params.quantized) out.set(name, m);
    return out;
  }

  /** The live trainable tensors with their gradient buffers (tests and diagnostics). */
  parameters(): readonly Tensor[] {
    return this.params.trainable;
  }

  /** Global L2 norm of the accumulated gradients. */
  gradNorm(): number {
    return this.optimizer.gradNorm(this.kernels);
  }

  /**
   * Frees the activation buffers kept from the last forward(_backward) for reuse by the next call
   * with the same batch shape (hundreds of MB for a training batch).
   */
  releaseActivations(): void {
    this.pass.arena?.release();
  }

  zeroGrad(): void {
    for (const t of this.params.trainable) t.grad?.fill(0);
  }

  /** A KV cache for `batch` independent sequences of up to maxTokens tokens each. */
  createKvCache(maxTokens: number, batch: number): KvCache {
    return createKvCache(this.pass, maxTokens, batch);
  }

  /** See kvcache.ts: appends tokens to cache slots and returns logits [rows, V] in the model's dtype. */
  forwardIncremental(cache: KvCache, tokens: Int32Array, positions: Int32Array, cacheSlots: Int32Array, logitRows?: Int32Array): FloatArray {
    return forwardIncremental(this.pass, cache, tokens, positions, cacheSlots, logitRows);
  }

  copyKvSlot(cache: KvCache, from: number, to: number, length: number): void {
    copyKvSlot(cache, from, to, length);
  }
}
