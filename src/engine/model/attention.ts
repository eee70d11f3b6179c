// The attention half of a decoder layer: h = x + o_proj(Attention(RMSNorm(x))), with GQA, optional
// q/k/v biases (in the Linear), q/k RMSNorm before RoPE (per head for Qwen3, over the whole
// projection for OLMo 2), rotate_half RoPE, attention sinks (GPT-OSS), and for post-norm families
// (OLMo 2) h = x + RMSNorm(o_proj(Attention(x))) instead. Qwen3.5 gates the attention output per
// element by sigmoid of a second half of q_proj (each head's rows: query, then gate) and rotates
// only the first rotaryDim dims of each head
// (docs/numerics.md#rmsnorm, docs/numerics.md#rotary-embeddings,
// docs/numerics.md#attention-with-gqa, docs/numerics.md#qwen2-and-qwen3-differences).
import type { FloatArray } from "../kernels/types.ts";
import type { LayerActivations, Scratch } from "./activations.ts";
import type { BatchContext } from "./context.ts";
import { linearBackward, linearForward } from "./linear.ts";
import { attentionLinears, type LayerParams } from "./params.ts";
import { applyRope } from "./rope.ts";

/** The attention's (or linear attention's) input: the normed x in sc.xn, or x itself when the family has no input norm. */
export function attentionInput(c: BatchContext, p: LayerParams, la: LayerActivations, x: FloatArray, sc: Scratch): FloatArray {
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

/** q_proj's gated output [rows, H·2d] (per head: query, gate) split into q and gate [rows, H·d]. */
export function splitQueryGate(full: FloatArray, q: FloatArray, gate: FloatArray, rows: number, H: number, d: number): void {
  for (let r = 0; r < rows * H; r++) {
    q.set(full.subarray(2 * r * d, (2 * r + 1) * d), r * d);
    gate.set(full.subarray((2 * r + 1) * d, (2 * r + 2) * d), r * d);
  }
}

/** out = attn · sigmoid(gate) over n values. */
export function applyOutputGate(attn: FloatArray, gate: FloatArray, out: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) out[i] = attn[i] * (1 / (1 + Math.exp(-gate[i])));
}

/** The rotated width of each head (all of it unless the family rotates part). */
export function rotaryWidth(c: BatchContext): number {
  return c.config.rotaryDim ?? c.config.headDim;
}

/** Writes q, k (roped), v into la (and the normed input into sc.xn when there is an input norm). */
export function qkvForward(c: BatchContext, p: LayerParams, la: LayerActivations, x: FloatArray, sc: Scratch): void {
  const { k, config, T } = c;
  const { numHeads: H, numKvHeads: Hkv, headDim: d, rmsNormEps: eps } = config;
  const proj = attentionLinears(p);
  const xin = attentionInput(c, p, la, x, sc);
  if (la.qGate !== null && sc.qFull !== null) {
    linearForward(k, proj.q, xin, T, sc.qFull, la.hr.q, sc.ones);
    splitQueryGate(sc.qFull, la.qRaw ?? la.q, la.qGate, T, H, d);
  } else {
    linearForward(k, proj.q, xin, T, la.qRaw ?? la.q, la.hr.q, sc.ones);
  }
  linearForward(k, proj.k, xin, T, la.kRaw ?? la.k, la.hr.k, sc.ones);
  linearForward(k, proj.v, xin, T, la.v, la.hr.v, sc.ones);
  if (p.qNorm !== null && p.kNorm !== null && la.qRaw && la.kRaw && la.qRstd && la.kRstd) {
    const [qRows, qDim, kRows, kDim] = qkNormRows(c);
    k.rmsnormForward(la.qRaw, c.normWeight(p.qNorm), la.q, la.qRstd, qRows, qDim, eps);
    k.rmsnormForward(la.kRaw, c.normWeight(p.kNorm), la.k, la.kRstd, kRows, kDim, eps);
  }
  if (!c.rope) return;
  applyRope(k, la.q, c.positions, c.invFreq, T, H, d, rotaryWidth(c), false);
  applyRope(k, la.k, c.positions, c.invFreq, T, Hkv, d, rotaryWidth(c), false);
}

/** o_proj's input: attn itself, or attn gated by sigmoid(la.qGate) into sc.gated. */
function outputInput(c: BatchContext, la: LayerActivations, attn: FloatArray, sc: Scratch): FloatArray {
  if (la.qGate === null || sc.gated === null) return attn;
  applyOutputGate(attn, la.qGate, sc.gated, c.T * c.config.numHeads * c.config.headDim);
  return sc.gated;
}

/** la.h = x + o_proj(attn), with o_proj's output normed first in post-norm families. */
export function attentionOutputForward(c: BatchContext, p: LayerParams, la: LayerActivations, x: FloatArray, attn: FloatArray, sc: Scratch): void {
  const { k, config, T } = c;
  const D = config.hiddenSize;
  const o = attentionLinears(p).o;
  const oin = outputInput(c, la, attn, sc);
  if (p.attnOutNorm !== null && la.attnOut !== null && la.attnOutRstd !== null) {
    linearForward(k, o, oin, T, la.attnOut, la.hr.o, sc.ones);
    k.rmsnormForward(la.attnOut, c.normWeight(p.attnOutNorm), sc.tmp, la.attnOutRstd, T, D, config.rmsNormEps);
  } else {
    linearForward(k, o, oin, T, sc.tmp, la.hr.o, sc.ones);
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
  const proj = attentionLinears(p);
  // Recompute what the forward pass did not keep: the normed input (and the probabilities when
  // they were not saved).
  const xin = attentionInput(c, p, la, x, sc);
  let dOut = sc.dres;
  if (p.attnOutNorm !== null && la.attnOut !== null && la.attnOutRstd !== null) {
    k.rmsnormBackward(sc.dres, la.attnOut, c.normWeight(p.attnOutNorm), la.attnOutRstd, sc.dtmp, p.attnOutNorm.grad, T, D);
    dOut = sc.dtmp;
  }
  linearBackward(k, proj.o, outputInput(c, la, la.attn, sc), T, la.hr.o, dOut, sc.dattn, 0, sc.dhr, sc.ones);
  if (la.qGate !== null && sc.dqGate !== null) {
    // o_proj read attn·s, s = sigmoid(gate): dgate = d·attn·s(1 − s), dattn = d·s.
    for (let i = 0; i < T * H * d; i++) {
      const s = 1 / (1 + Math.exp(-la.qGate[i]));
      sc.dqGate[i] = sc.dattn[i] * la.attn[i] * s * (1 - s);
      sc.dattn[i] *= s;
    }
  }
  if (la.probs !== null) {
    k.attentionBackward(sc.dattn, la.q, la.k, la.v, la.probs, sc.dq, sc.dk, sc.dv, c.seqStarts, H, Hkv, d, c.attnScale, p.sinks?.grad ?? null);
  } else {
    attentionBackwardPerSequence(c, p, la, sc);
  }
  if (c.rope) {
    applyRope(k, sc.dq, c.positions, c.invFreq, T, H, d, rotaryWidth(c), true);
    applyRope(k, sc.dk, c.positions, c.invFreq, T, Hkv, d, rotaryWidth(c), true);
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
  if (la.qGate !== null && sc.dqGate !== null && sc.qFull !== null) {
    // q_proj's gradient, interleaved per head as its output was (the forward's qFull is free now).
    for (let r = 0; r < T * H; r++) {
      sc.qFull.set(dq.subarray(r * d, (r + 1) * d), 2 * r * d);
      sc.qFull.set(sc.dqGate.subarray(r * d, (r + 1) * d), (2 * r + 1) * d);
    }
    dq = sc.qFull;
  }
  linearBackward(k, proj.q, xin, T, la.hr.q, dq, dxn, 0, sc.dhr, sc.ones);
  linearBackward(k, proj.k, xin, T, la.hr.k, dk, dxn, 1, sc.dhr, sc.ones);
  linearBackward(k, proj.v, xin, T, la.hr.v, sc.dv, dxn, 1, sc.dhr, sc.ones);
  inputNormBackward(c, p, x, la, sc, dxn);
}

/**
 * The tail of a mixer block's backward pass: from dxn (the gradient wrt the mixer's input, null
 * when nothing needs it) through the input norm, added into sc.dres.
 */
export function inputNormBackward(c: BatchContext, p: LayerParams, x: FloatArray, la: LayerActivations, sc: Scratch, dxn: FloatArray | null): void {
  const { k, T } = c;
  const D = c.config.hiddenSize;
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
