// The MLP half of a decoder layer: out = h + down(silu(gate(n)) * up(n)), n = RMSNorm(h)
// (docs/numerics.md#swiglu-mlp); post-norm families (OLMo 2) read h itself and norm down's output
// before the add.
import type { FloatArray } from "../kernels/types.ts";
import type { LayerActivations, Scratch } from "./activations.ts";
import type { BatchContext } from "./context.ts";
import { linearBackward, linearForward } from "./linear.ts";
import type { LayerParams } from "./params.ts";

/** out = la.h + mlp(la.h). */
export function mlpBlockForward(c: BatchContext, p: LayerParams, la: LayerActivations, out: FloatArray, sc: Scratch): void {
  const { k, config, T } = c;
  const { hiddenSize: D, intermediateSize: F, rmsNormEps: eps } = config;
  const xin = mlpInput(c, p, la, sc);
  linearForward(k, p.gate, xin, T, la.gate, la.hr.gate, sc.ones);
  linearForward(k, p.up, xin, T, la.up, la.hr.up, sc.ones);
  gatedForward(c, la.gate, la.up, sc.act, T * F);
  if (p.mlpOutNorm !== null && la.mlpOut !== null && la.mlpOutRstd !== null) {
    linearForward(k, p.down, sc.act, T, la.mlpOut, la.hr.down, sc.ones);
    k.rmsnormForward(la.mlpOut, c.normWeight(p.mlpOutNorm), sc.tmp, la.mlpOutRstd, T, D, eps);
  } else {
    linearForward(k, p.down, sc.act, T, sc.tmp, la.hr.down, sc.ones);
  }
  k.add(la.h, sc.tmp, out, T * D);
}

/** act(gate) * up with the family's activation (SiLU, or Gemma's GELU-tanh). */
export function gatedForward(c: BatchContext, gate: FloatArray, up: FloatArray, out: FloatArray, n: number): void {
  if (c.config.hiddenAct === "gelu_tanh") c.k.gegluForward(gate, up, out, n);
  else c.k.swigluForward(gate, up, out, n);
}

/** The MLP's input: la.h normed into sc.xn, or la.h itself when the family has no MLP input norm. */
function mlpInput(c: BatchContext, p: LayerParams, la: LayerActivations, sc: Scratch): FloatArray {
  if (p.postNorm === null) return la.h;
  c.k.rmsnormForward(la.h, c.normWeight(p.postNorm), sc.xn, la.rstd2, c.T, c.config.hiddenSize, c.config.rmsNormEps);
  return sc.xn;
}

/** On entry sc.dres is the gradient wrt the layer output; on return, wrt la.h. */
export function mlpBlockBackward(c: BatchContext, p: LayerParams, la: LayerActivations, sc: Scratch): void {
  const { k, config, T } = c;
  const { hiddenSize: D, intermediateSize: F } = config;
  const xin = mlpInput(c, p, la, sc);
  gatedForward(c, la.gate, la.up, sc.act, T * F);
  let dOut = sc.dres;
  if (p.mlpOutNorm !== null && la.mlpOut !== null && la.mlpOutRstd !== null) {
    k.rmsnormBackward(sc.dres, la.mlpOut, c.normWeight(p.mlpOutNorm), la.mlpOutRstd, sc.dtmp, p.mlpOutNorm.grad, T, D);
    dOut = sc.dtmp;
  }
  linearBackward(k, p.down, sc.act, T, la.hr.down, dOut, sc.dact, 0, sc.dhr, sc.ones);
  if (c.config.hiddenAct === "gelu_tanh") k.gegluBackward(sc.dact, la.gate, la.up, sc.dgate, sc.dup, T * F);
  else k.swigluBackward(sc.dact, la.gate, la.up, sc.dgate, sc.dup, T * F);
  linearBackward(k, p.gate, xin, T, la.hr.gate, sc.dgate, sc.dxn, 0, sc.dhr, sc.ones);
  linearBackward(k, p.up, xin, T, la.hr.up, sc.dup, sc.dxn, 1, sc.dhr, sc.ones);
  if (p.postNorm === null) {
    k.add(sc.dres, sc.dxn, sc.dres, T * D);
    return;
  }
  k.rmsnormBackward(sc.dxn, la.h, c.normWeight(p.postNorm), la.rstd2, sc.dtmp, p.postNorm.grad, T, D);
  k.add(sc.dres, sc.dtmp, sc.dres, T * D);
}
