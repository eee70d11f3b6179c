// The weight an RMSNorm kernel multiplies by. Most families store it as it is; Gemma stores w and
// scales by (1 + w) (docs/numerics.md#model-families). The kernels take one weight array, so for
// Gemma the (1 + w) arrays are recomputed at the start of every pass (full training changes w in
// place); d(1 + w)/dw = 1, so the kernels' weight gradients are w's as they are.
import type { FloatArray } from "../kernels/types.ts";
import { allocFloat, type Dtype, type Tensor } from "./tensor.ts";
import type { ModelParams } from "./params.ts";

export class NormWeights {
  private readonly effective = new Map<Tensor, FloatArray>();

  constructor(
    private readonly offset: boolean,
    private readonly tensors: readonly Tensor[],
    dtype: Dtype,
  ) {
    if (offset) for (const t of tensors) this.effective.set(t, allocFloat(dtype, t.data.length));
    this.refresh();
  }

  /** Recomputes 1 + w from the tensors' current values (a no-op without the offset). */
  refresh(): void {
    if (!this.offset) return;
    for (const t of this.tensors) {
      const out = this.effective.get(t) as FloatArray;
      // torch forms 1.0 + w in fp32 for fp32 weights: the Float32Array store rounds it the same way.
      for (let i = 0; i < out.length; i++) out[i] = 1 + t.data[i];
    }
  }

  /** The array the kernels multiply by for norm tensor `t`. */
  get(t: Tensor): FloatArray {
    return this.offset ? (this.effective.get(t) as FloatArray) : (t.data as FloatArray);
  }
}

/** Every RMSNorm weight of the model (layer norms, q/k norms, the final norm). */
export function normTensors(params: ModelParams): Tensor[] {
  const out: Tensor[] = [];
  for (const l of params.layers) {
    for (const t of [l.inputNorm, l.qNorm, l.kNorm, l.attnOutNorm, l.postNorm, l.mlpOutNorm]) if (t !== null) out.push(t);
  }
  out.push(params.finalNorm);
  return out;
}
