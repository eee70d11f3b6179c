// What every layer function needs about the current batch besides its own parameters.
import type { FloatArray, Kernels } from "../kernels/types.ts";
import { layerUsesRope, layerWindow, type ModelConfig } from "./config.ts";
import type { RoutingStats } from "./moe.ts";
import type { Tensor } from "./tensor.ts";

export interface BatchContext {
  readonly k: Kernels;
  readonly config: ModelConfig;
  /** Packed tokens in the batch. */
  readonly T: number;
  readonly positions: Int32Array;
  readonly seqStarts: Int32Array;
  /** RoPE inverse frequencies of the current layer (Gemma's sliding layers have their own base). */
  readonly invFreq: FloatArray;
  /** head_dim^-0.5, or query_pre_attn_scalar^-0.5 (Gemma). */
  readonly attnScale: number;
  /** The current layer's sliding window in keys, 0 for full causal attention. */
  readonly window: number;
  /** Whether the current layer rotates q and k (SmolLM3's NoPE layers do not). */
  readonly rope: boolean;
  /** The array an RMSNorm kernel multiplies by for a norm tensor (norms.ts). */
  readonly normWeight: (t: Tensor) => FloatArray;
  /** Mixture-of-experts models: where the pass's sparse blocks count their routing (null: not counted). */
  readonly routing: RoutingStats | null;
}

/** Frequencies for the model's global and (when the family has them) sliding-window layers. */
export interface RopeTables {
  invFreq: FloatArray;
  invFreqLocal: FloatArray | null;
}

/** `c` for layer `l`: its window and its RoPE table. */
export function layerContext(c: BatchContext, rope: RopeTables, l: number): BatchContext {
  const window = layerWindow(c.config, l);
  const useRope = layerUsesRope(c.config, l);
  const local = c.config.slidingLayers?.[l] === true && rope.invFreqLocal !== null;
  if (window === c.window && useRope === c.rope && !local && c.invFreq === rope.invFreq) return c;
  return { ...c, window, rope: useRope, invFreq: local ? (rope.invFreqLocal as FloatArray) : rope.invFreq };
}
