// The attention half of a decoder layer: h = x + o_proj(Attention(RMSNorm(x))), with GQA, optional
// q/k/v biases (in the Linear), q/k RMSNorm before RoPE (per head for Qwen3, over the whole
// projection for OLMo 2), rotate_half RoPE, attention sinks (GPT-OSS), and for post-norm families (OLMo 2)
// h = x + RMSNorm(o_proj(Attention(x))) instead
// (docs/numerics.md#rmsnorm, docs/numerics.md#rotary-embeddings,
// docs/numerics.md#attention-with-gqa, docs/numerics.md#qwen2-and-qwen3-differences).
import type { FloatArray } from "../kernels/types.ts";
import type { LayerActivations, Scratch } from "./activations.ts";
import type { BatchContext } from "./context.ts";
import { linearBackward, linearForward } from "./linear.ts";
import type { LayerParams } from "./params.ts";

/** The attention's input: the normed x in sc.xn, or x itself when the family has no input norm. */
function attentionInput(c: BatchContext, p: LayerParams, la: LayerActivations, x: FloatArray, sc: Scratch): FloatArray {
  if (p.inputNorm === null) return x;
  c.k.rmsnormForward(x, c.normWeight(p.inputNorm), sc.xn, la.rstd1, c.T, c.config.hiddenSize, c.config.rmsNormEps);
  return sc.xn;
}

/** [rows, width] of the q norm and of the k norm over T tokens (per head, or per whole projection). */
function qkNormRows(c: BatchContext): [number, number, number, number] {
  const { numHeads: H, numKvHeads: Hkv, headDim: d } = c.config;
  if (c.config.qkNormScope === "projection") return [c.T, H * d, c.T, Hkv * d];
  return [c.T * H, d, c.T * Hkv, d];
}

/** Writes q, k (roped), v into la (and the normed input into sc.xn when there is an input norm). */
export function qkvForward(c: BatchContext, p: LayerParams, la: LayerActivations, x: FloatArray, sc: Scratch): void {
  const { k, config, T } = c;
  const { numHeads: H, numKvHeads: Hkv, headDim: d, rmsNormEps: eps } = config;
  const xin = attentionInput(c, p, la, x, sc);
  linearForward(k, p.q, xin, T, la.qRaw ?? la.q, la.hr.q, sc.ones);
  linearForward(k, p.k, xin, T, la.kRaw ?? la.k, la.hr.k, sc.ones);
  linearForward(k, p.v, xin, T, la.v, la.hr.v, sc.ones);
  if (p.qNorm !== null && p.kNorm !== null && la.qRaw && la.kRaw && la.qRstd && la.kRstd) {
    const [qRows, qDim, kRows, kDim] = qkNormRows(c);
    k.rmsnormForward(la.qRaw, c.normWeight(p.qNorm), la.q, la.qRstd, qRows, qDim, eps);
    k.rmsnormForward(la.kRaw, c.normWeight(p.kNorm), la.k, la.kRstd, kRows, kDim, eps);
  }
  if (!c.rope) return;
  k.rope(la.q, c.positions, c.invFreq, T, H, d, false);
  k.rope(la.k, c.positions, c.invFreq, T, Hkv, d, false);
}

/** la.h = x + o_proj(attn), with o_proj's output normed first in post-norm families. */
export function attentionOutputForward(c: BatchContext, p: LayerParams, la: LayerActivations, x: FloatArray, attn: FloatArray, sc: Scratch): void {
  const { k, config, T } = c;
  const D = config.hiddenSize;
  if (p.attnOutNorm !== null && la.attnOut !== null && la.attnOutRstd !== null) {
    linearForward(k, p.o, attn, T, la.attnOut, la.hr.o, sc.ones);
    k.rmsnormForward(la.attnOut, c.normWeight(p.attnOutNorm), sc.tmp, la.attnOutRstd, T, D, config.rmsNormEps);
  } else {
    linearForward(k, p.o, attn, T, sc.tmp, la.hr.o, sc.ones);
  }
  k.add(x, sc.tmp, la.h, T * D);
}

/** la.h = x + attention(x). */
export function attentionBlockForward(c: BatchContext, p: LayerParams, la: LayerActivations, x: FloatArray, sc: Scratch): void {
  const { k, config } = c;
  const { numHeads: H, numKvHeads: Hkv, headDim: d } = config;
  qkvForward(c, p, la, x, sc);
  k.attentionForward(la.q, la.k, la.v, la.attn, la.probs, c.seqStarts, H, Hkv, d, c.attnScale, c.window, p.sinks?.data ?? null);
  attentionOutputForward(c, p, la, x, la.attn, sc);
}

/**
 * On entry sc.dres is the gradient wrt la.h; on return it is the gradient wrt x (the residual
 * path plus the attention branch). Parameter gradients accumulate. `needInputGrad = false` (the
 * first layer when the embeddings are frozen) skips the gradient wrt x where nothing else needs it.
 */
export function attentionBlockBackward(c: BatchContext, p: LayerParams, la: LayerActivations, x: FloatArray, sc: Scratch, needInputGrad = true): void {
  const { k, config, T } = c;
  const { hiddenSize: D, numHeads: H, numKvHeads: Hkv, headDim: d } = config;
  // Recompute what the forward pass did not keep: the normed input (and the probabilities when
  // they were not saved).
  const xin = attentionInput(c, p, la, x, sc);
  let dOut = sc.dres;
  if (p.attnOutNorm !== null && la.attnOut !== null && la.attnOutRstd !== null) {
    k.rmsnormBackward(sc.dres, la.attnOut, c.normWeight(p.attnOutNorm), la.attnOutRstd, sc.dtmp, p.attnOutNorm.grad, T, D);
    dOut = sc.dtmp;
  }
  linearBackward(k, p.o, la.attn, T, la.hr.o, dOut, sc.dattn, 0, sc.dhr, sc.ones);
  if (la.probs !== null) {
    k.attentionBackward(sc.dattn, la.q, la.k, la.v, la.probs, sc.dq, sc.dk, sc.dv, c.seqStarts, H, Hkv, d, c.attnScale, p.sinks?.grad ?? null);
  } else {
    attentionBackwardPerSequence(c, p, la, sc);
  }
  if (c.rope) {
    k.rope(sc.dq, c.positions, c.invFreq, T, H, d, true);
    k.rope(sc.dk, c.positions, c.invFreq, T, Hkv, d, true);
  }
  let dq = sc.dq;
  let dk = sc.dk;
  if (p.qNorm !== null && p.kNorm !== null && la.qRaw && la.kRaw && la.qRstd && la.kRstd && sc.dqRaw && sc.dkRaw) {
    const [qRows, qDim, kRows, kDim] = qkNormRows(c);
    k.rmsnormBackward(sc.dq, la.qRaw, c.normWeight(p.qNorm), la.qRstd, sc.dqRaw, p.qNorm.grad, qRows, qDim);
    k.rmsnormBackward(sc.dk, la.kRaw, c.normWeight(p.kNorm), la.kRstd, sc.dkRaw, p.kNorm.grad, kRows, kDim);
    dq = sc.dqRaw;
    dk = sc.dkRaw;
  }
  // The input norm's weight gradient needs the gradient wrt the normed input even when x needs none.
  const dxn = needInputGrad || (p.inputNorm !== null && p.inputNorm.grad !== null) ? sc.dxn : null;
  linearBackward(k, p.q, xin, T, la.hr.q, dq, dxn, 0, sc.dhr, sc.ones);
  linearBackward(k, p.k, xin, T, la.hr.k, dk, dxn, 1, sc.dhr, sc.ones);
  linearBackward(k, p.v, xin, T, la.hr.v, sc.dv, dxn, 1, sc.dhr, sc.ones);
  if (dxn === null) return;
  if (p.inputNorm === null) {
    k.add(sc.dres, dxn, sc.dres, T * D);
    return;
  }
  k.rmsnormBackward(dxn, x, c.normWeight(p.inputNorm), la.rstd1, sc.dtmp, p.inputNorm.grad, T, D);
  k.add(sc.dres, sc.dtmp, sc.dres, T * D);
}

/**
 * Attention backward one sequence at a time, re-running that sequence's forward to get its
 * probabilities: they need H·maxLen² floats rather than H·Σlen² for the whole batch.
 */
function attentionBackwardPerSequence(c: BatchContext, p: LayerParams, la: LayerActivations, sc: Scratch): void {
  const { k, config } = c;
  const { numHeads: H, numKvHeads: Hkv, headDim: d } = config;
  const qw = H * d;
  const kw = Hkv * d;
  const local = new Int32Array(2);
  const starts = c.seqStarts;
  for (let s = 0; s + 1 < starts.length; s++) {
    const a = starts[s];
    const b = starts[s + 1];
    if (b === a) continue;
    local[1] = b - a;
    const q = la.q.subarray(a * qw, b * qw);
    const kk = la.k.subarray(a * kw, b * kw);
    const v = la.v.subarray(a * kw, b * kw);
    // The output goes to scratch: only the probabilities are wanted.
    k.attentionForward(q, kk, v, sc.attn.subarray(a * qw, b * qw), sc.probs, local, H, Hkv, d, c.attnScale, c.window, p.sinks?.data ?? null);
    k.attentionBackward(
      sc.dattn.subarray(a * qw, b * qw),
      q,
      kk,
      v,
      sc.probs,
      sc.dq.subarray(a * qw, b * qw),
      sc.dk.subarray(a * kw, b * kw),
      sc.dv.subarray(a * kw, b * kw),
      local,
      H,
      Hkv,
      d,
      c.attnScale,
      p.sinks?.grad ?? null,
    );
  }
}
