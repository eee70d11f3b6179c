// AdamW with torch semantics and global-norm gradient clipping (docs/protocol.md#optimizer,
// docs/numerics.md#adamw-and-clipping). The step counter is per model; moments are per trainable tensor.
import { InvalidArgumentError } from "../../tinker/errors.ts";
import type { ResolvedAdamParams } from "../../tinker/types.ts";
import type { FloatArray, Kernels } from "../kernels/types.ts";
import { allocFloat, type Dtype, type Tensor } from "./tensor.ts";

export interface OptimizerState {
  step: number;
  m: Map<string, Float32Array>;
  v: Map<string, Float32Array>;
}

function validateAdam(p: ResolvedAdamParams): void {
  const check = (key: keyof ResolvedAdamParams, ok: boolean, expected: string): void => {
    if (!ok) throw new InvalidArgumentError(`adam_params.${key} must be ${expected}, got ${p[key]}`);
  };
  check("learning_rate", Number.isFinite(p.learning_rate) && p.learning_rate >= 0, "a finite number >= 0");
  check("beta1", p.beta1 >= 0 && p.beta1 < 1, "in [0, 1)");
  check("beta2", p.beta2 >= 0 && p.beta2 < 1, "in [0, 1)");
  check("eps", Number.isFinite(p.eps) && p.eps > 0, "a finite number > 0");
  check("weight_decay", Number.isFinite(p.weight_decay) && p.weight_decay >= 0, "a finite number >= 0");
  check("grad_clip_norm", Number.isFinite(p.grad_clip_norm) && p.grad_clip_norm >= 0, "a finite number >= 0 (0 = no clipping)");
}

export class AdamW {
  private step = 0;
  private readonly m = new Map<string, FloatArray>();
  private readonly v = new Map<string, FloatArray>();

  constructor(
    private readonly params: readonly Tensor[],
    private readonly dtype: Dtype,
  ) {
    this.reset();
  }

  reset(): void {
    this.step = 0;
    for (const p of this.params) {
      this.m.set(p.name, allocFloat(this.dtype, p.data.length));
      this.v.set(p.name, allocFloat(this.dtype, p.data.length));
    }
  }

  /** Global L2 norm of the accumulated gradients. */
  gradNorm(k: Kernels): number {
    let ss = 0;
    for (const p of this.params) if (p.grad !== null) ss += k.sumSquares(p.grad, p.grad.length);
    return Math.sqrt(ss);
  }

  /** Applies one step from the accumulated gradients, then zeroes them. */
  apply(k: Kernels, adam: ResolvedAdamParams): Record<string, number> {
    validateAdam(adam);
    const norm = this.gradNorm(k);
    // torch clip_grad_norm_: scale by max_norm / (norm + 1e-6) only when the norm exceeds max_norm.
    const clip = adam.grad_clip_norm;
    const scale = clip > 0 && norm > clip ? clip / (norm + 1e-6) : 1;
    this.step += 1;
    for (const p of this.params) {
      const g = p.grad;
      if (g === null) continue;
      const m = this.m.get(p.name) as FloatArray;
      const v = this.v.get(p.name) as FloatArray;
      k.adamw(p.data, g, m, v, p.data.length, adam.learning_rate, adam.beta1, adam.beta2, adam.eps, adam.weight_decay, this.step, scale);
      g.fill(0);
    }
    return { "grad_norm:mean": norm, "learning_rate:mean": adam.learning_rate, "optimizer_step:max": this.step };
  }

  state(): OptimizerState {
    const m = new Map<string, Float32Array>();
    const v = new Map<string, Float32Array>();
    for (const p of this.params) {
      m.set(p.name, Float32Array.from(this.m.get(p.name) as FloatArray));
      v.set(p.name, Float32Array.from(this.v.get(p.name) as FloatArray));
    }
    return { step: this.step, m, v };
  }

  /** Validates everything first, so a bad state leaves the optimizer as it was. */
  load(state: OptimizerState): void {
    if (!Number.isInteger(state.step) || state.step < 0) throw new Error(`optimizer state: step must be an integer >= 0, got ${state.step}`);
    for (const which of ["m", "v"] as const) {
      const map = state[which];
      for (const p of this.params) {
        const t = map.get(p.name);
        if (t === undefined) throw new Error(`optimizer state: ${which} is missing tensor "${p.name}"`);
        if (t.length !== p.data.length)
          throw new Error(`optimizer state: ${which}["${p.name}"] has ${t.length} elements, expected ${p.data.length} (shape [${p.shape.join(", ")}])`);
      }
      if (map.size !== this.params.length) {
        const known = new Set(this.params.map((p) => p.name));
        const extra = [...map.keys()].filter((n) => !known.has(n));
        throw new Error(`optimizer state: ${which} has unexpected tensor(s): ${extra.slice(0, 5).join(", ")}`);
      }
    }
    this.step = state.step;
    for (const p of this.params) {
      (this.m.get(p.name) as FloatArray).set(state.m.get(p.name) as Float32Array);
      (this.v.get(p.name) as FloatArray).set(state.v.get(p.name) as Float32Array);
    }
  }
}
