// The MLP half of a decoder layer: out = h + down(silu(gate(n)) * up(n)), n = RMSNorm(h)
// (docs/numerics.md#swiglu-mlp).
import type { FloatArray } from "../kernels/types.ts";
import type { LayerActivations, Scratch } from "./activations.ts";
import type { BatchContext } from "./context.ts";
import { linearBackward, linearForward } from "./linear.ts";
import type { LayerParams } from "./params.ts";

/** out = la.h + mlp(la.h). */
export function mlpBlockForward(c: BatchContext, p: LayerParams, la: LayerActivations, out: FloatArray, sc: Scratch): void {
  const { k, config, T } = c;
  const { hiddenSize: D, intermediateSize: F, rmsNormEps: eps } = config;
  k.rmsnormForward(la.h, p.postNorm.data, sc.xn, la.rstd2, T, D, eps);
  linearForward(k, p.gate, sc.xn, T, la.gate, la.hr.gate, sc.ones);
  linearForward(k, p.up, sc.xn, T, la.up, la.hr.up, sc.ones);
  k.swigluForward(la.gate, la.up, sc.act, T * F);
  linearForward(k, p.down, sc.act, T, sc.tmp, la.hr.down, sc.ones);
  k.add(la.h, sc.tmp, out, T * D);
}

/** On entry sc.dres is the gradient wrt the layer output; on return, wrt la.h. */
export function mlpBlockBackward(c: BatchContext, p: LayerParams, la: LayerActivations, sc: Scratch): void {
  const { k, config, T } = c;
  const { hiddenSize: D, intermediateSize: F, rmsNormEps: eps } = config;
  k.rmsnormForward(la.h, p.postNorm.data, sc.xn, la.rstd2, T, D, eps);
  k.swigluForward(la.gate, la.up, sc.act, T * F);
  linearBackward(k, p.down, sc.act, T, la.hr.down, sc.dres, sc.dact, 0, sc.dhr, sc.ones);
  k.swigluBackward(sc.dact, la.gate, la.up, sc.dgate, sc.dup, T * F);
  linearBackward(k, p.gate, sc.xn, T, la.hr.gate, sc.dgate, sc.dxn, 0, sc.dhr, sc.ones);
  linearBackward(k, p.up, sc.xn, T, la.hr.up, sc.dup, sc.dxn, 1, sc.dhr, sc.ones);
  k.rmsnormBackward(sc.dxn, la.h, p.postNorm.data, la.rstd2, sc.dtmp, p.postNorm.grad, T, D);
  k.add(sc.dres, sc.dtmp, sc.dres, T * D);
}
