// The MLP half of a decoder layer: out = h + down(silu(gate(n)) * up(n)), n = RMSNorm(h)
// (docs/numerics.md#swiglu-mlp); post-norm families (OLMo 2) read h itself and norm down's output
// before the add. Mixture-of-experts layers replace the MLP by the sparse block of moe.ts.
import type { FloatArray } from "../kernels/types.ts";
import type { LayerActivations, Scratch } from "./activations.ts";
import type { BatchContext } from "./context.ts";
import { gatedBackward, gatedForward } from "./gated.ts";
import { linearBackward, linearForward } from "./linear.ts";
import { moeBlockBackward, moeBlockForward } from "./moe.ts";
import type { ExpertParams, LayerParams } from "./params.ts";
import type { Linear } from "./tensor.ts";

function denseMlp(p: LayerParams): ExpertParams & { up: Linear } {
  if (p.gate === null || p.up === null || p.down === null) throw new Error("a dense MLP layer without gate/up/down projections");
  return { gate: p.gate, up: p.up, down: p.down };
}

/** out = la.h + mlp(la.h). */
export function mlpBlockForward(c: BatchContext, p: LayerParams, la: LayerActivations, out: FloatArray, sc: Scratch): void {
  const { k, config, T } = c;
  const { hiddenSize: D, intermediateSize: F, rmsNormEps: eps } = config;
  const xin = mlpInput(c, p, la, sc);
  const normed = p.mlpOutNorm !== null && la.mlpOut !== null && la.mlpOutRstd !== null;
  const y = normed ? (la.mlpOut as FloatArray) : sc.tmp;
  if (p.moe !== null) {
    if (la.moe === null || sc.moe === null) throw new Error("mixture-of-experts layer without its activation buffers");
    moeBlockForward(c, p.moe, xin, la.moe, sc.moe, y, sc.ones);
  } else {
    const mlp = denseMlp(p);
    linearForward(k, mlp.gate, xin, T, la.gate, la.hr.gate, sc.ones);
    linearForward(k, mlp.up, xin, T, la.up, la.hr.up, sc.ones);
    gatedForward(config, k, la.gate, la.up, sc.act, T * F);
    linearForward(k, mlp.down, sc.act, T, y, la.hr.down, sc.ones);
  }
  if (normed && p.mlpOutNorm !== null && la.mlpOutRstd !== null) k.rmsnormForward(y, c.normWeight(p.mlpOutNorm), sc.tmp, la.mlpOutRstd, T, D, eps);
  k.add(la.h, sc.tmp, out, T * D);
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
  let dOut = sc.dres;
  if (p.mlpOutNorm !== null && la.mlpOut !== null && la.mlpOutRstd !== null) {
    k.rmsnormBackward(sc.dres, la.mlpOut, c.normWeight(p.mlpOutNorm), la.mlpOutRstd, sc.dtmp, p.mlpOutNorm.grad, T, D);
    dOut = sc.dtmp;
  }
  if (p.moe !== null) {
    if (la.moe === null || sc.moe === null) throw new Error("mixture-of-experts layer without its activation buffers");
    moeBlockBackward(c, p.moe, xin, la.moe, sc.moe, dOut, sc.dxn, sc.dhr, sc.ones);
  } else {
    const mlp = denseMlp(p);
    gatedForward(config, k, la.gate, la.up, sc.act, T * F);
    linearBackward(k, mlp.down, sc.act, T, la.hr.down, dOut, sc.dact, 0, sc.dhr, sc.ones);
    gatedBackward(config, k, sc.dact, la.gate, la.up, sc.dgate, sc.dup, T * F);
    linearBackward(k, mlp.gate, xin, T, la.hr.gate, sc.dgate, sc.dxn, 0, sc.dhr, sc.ones);
    linearBackward(k, mlp.up, xin, T, la.hr.up, sc.dup, sc.dxn, 1, sc.dhr, sc.ones);
  }
  if (p.postNorm === null) {
    k.add(sc.dres, sc.dxn, sc.dres, T * D);
    return;
  }
  k.rmsnormBackward(sc.dxn, la.h, c.normWeight(p.postNorm), la.rstd2, sc.dtmp, p.postNorm.grad, T, D);
  k.add(sc.dres, sc.dtmp, sc.dres, T * D);
}
