// Forward and backward of one (optionally LoRA-adapted, optionally biased) linear layer over a
// block of token rows (docs/numerics.md#lora-gradients). Weights are [out, in], so y = x W^T
// (or [in, out] when the Linear is `transposed`: y = x W).
import type { FloatArray, Kernels } from "../kernels/types.ts";
import type { Linear } from "./tensor.ts";

/**
 * y[rows, out] = x W^T (+ b) (+ s (x A^T) B^T). `hr` ([rows, rank]) receives x A^T when the layer
 * has an adapter (kept for the backward pass). `ones` holds at least `rows` ones (bias as a GEMM).
 */
export function linearForward(k: Kernels, lin: Linear, x: FloatArray, rows: number, y: FloatArray, hr: FloatArray | null, ones: FloatArray): void {
  const { inDim, outDim } = lin;
  k.gemm(false, lin.transposed !== true, rows, outDim, inDim, 1, x, lin.weight.data, 0, y);
  if (lin.bias !== null) k.gemm(false, false, rows, outDim, 1, 1, ones, lin.bias.data, 1, y);
  const lora = lin.lora;
  if (lora !== null) {
    if (hr === null) throw new Error("linearForward: an adapted layer needs an hr buffer");
    k.gemm(false, true, rows, lora.rank, inDim, 1, x, lora.a.data, 0, hr);
    k.gemm(false, true, rows, outDim, lora.rank, lora.scale, hr, lora.b.data, 1, y);
  }
}

/**
 * Accumulates parameter gradients (+=) from dy and writes dx (overwrite when dxBeta = 0, add when 1;
 * dx null skips it). `dhr` is [rows, rank] scratch.
 */
export function linearBackward(
  k: Kernels,
  lin: Linear,
  x: FloatArray,
  rows: number,
  hr: FloatArray | null,
  dy: FloatArray,
  dx: FloatArray | null,
  dxBeta: 0 | 1,
  dhr: FloatArray,
  ones: FloatArray,
): void {
  const { inDim, outDim } = lin;
  const w = lin.weight;
  const t = lin.transposed === true;
  if (w.grad !== null) {
    if (t) k.gemm(true, false, inDim, outDim, rows, 1, x, dy, 1, w.grad);
    else k.gemm(true, false, outDim, inDim, rows, 1, dy, x, 1, w.grad);
  }
  if (lin.bias !== null && lin.bias.grad !== null) k.gemm(false, false, 1, outDim, rows, 1, ones, dy, 1, lin.bias.grad);
  if (dx !== null) k.gemm(false, t, rows, inDim, outDim, 1, dy, w.data, dxBeta, dx);
  const lora = lin.lora;
  if (lora !== null) {
    if (hr === null) throw new Error("linearBackward: an adapted layer needs its saved hr");
    const r = lora.rank;
    if (lora.b.grad !== null) k.gemm(true, false, outDim, r, rows, lora.scale, dy, hr, 1, lora.b.grad);
    k.gemm(false, false, rows, r, outDim, lora.scale, dy, lora.b.data, 0, dhr);
    if (lora.a.grad !== null) k.gemm(true, false, r, inDim, rows, 1, dhr, x, 1, lora.a.grad);
    if (dx !== null) k.gemm(false, false, rows, inDim, r, 1, dhr, lora.a.data, 1, dx);
  }
}
