// Parameter storage shared by the model's pieces. A model runs in one dtype: float32 for real use
// (native kernels), float64 for exact finite-difference gradient checks with the reference kernels.
import type { FloatArray } from "../kernels/types.ts";

export type Dtype = "float32" | "float64";

export function allocFloat(dtype: Dtype, n: number): FloatArray {
  return dtype === "float32" ? new Float32Array(n) : new Float64Array(n);
}

export function toDtype(dtype: Dtype, src: ArrayLike<number>): FloatArray {
  const out = allocFloat(dtype, src.length);
  out.set(src);
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

/** y = x W^T (+ b) (+ scale * (x A^T) B^T). */
export interface Linear {
  readonly inDim: number;
  readonly outDim: number;
  readonly weight: Tensor;
  readonly bias: Tensor | null;
  readonly lora: LoraAdapter | null;
}
