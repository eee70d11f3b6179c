// Parameter storage shared by the model's pieces. A model runs in one dtype: float32 for real use
// (native kernels), float64 for exact finite-difference gradient checks with the reference kernels.
import { HalfArray, type WeightArray } from "../kernels/halfArray.ts";
import type { FloatArray } from "../kernels/types.ts";

export type Dtype = "float32" | "float64";

export function allocFloat(dtype: Dtype, n: number): FloatArray {
  return dtype === "float32" ? new Float32Array(n) : new Float64Array(n);
}

/** A new array of `dtype` with the values of `src` (16-bit weights widened). */
export function toDtype(dtype: Dtype, src: ArrayLike<number> | HalfArray): FloatArray {
  const values = src instanceof HalfArray ? src.widen() : src;
  if (dtype === "float32" && values !== src) return values as Float32Array;
  const out = allocFloat(dtype, values.length);
  out.set(values);
  return out;
}

/** A named tensor. `grad` is null for frozen tensors and accumulates (+=) for trainable ones. */
export interface Tensor {
  readonly name: string;
  readonly shape: readonly number[];
  data: FloatArray;
  grad: FloatArray | null;
}

export interface LoraAdapter {
  /** [rank, in], PEFT orientation. */
  readonly a: Tensor;
  /** [out, rank]. */
  readonly b: Tensor;
  readonly rank: number;
  /** alpha / rank. */
  readonly scale: number;
}

/**
 * A weight matrix: trainable (full mode: float data with a gradient), or frozen, whose data may be
 * the checkpoint's 16-bit values (HalfArray), read by the kernels without a float32 copy.
 */
export interface WeightTensor {
  readonly name: string;
  readonly shape: readonly number[];
  data: WeightArray;
  grad: FloatArray | null;
}

/** y = x W^T (+ b) (+ scale * (x A^T) B^T); y = x W (+ …) when `transposed`. */
export interface Linear {
  readonly inDim: number;
  readonly outDim: number;
  /** [out, in], or [in, out] when transposed (GPT-OSS's expert tensors, stored for x·W). */
  readonly weight: WeightTensor;
  readonly transposed?: boolean;
  readonly bias: Tensor | null;
  readonly lora: LoraAdapter | null;
}
