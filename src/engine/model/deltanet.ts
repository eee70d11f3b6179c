// Qwen3.5's Gated DeltaNet, the linear attention of its hybrid layers (docs/numerics.md#gated-deltanet).
// Per token: in_proj_qkv → a depthwise causal conv1d over the qkv channels → SiLU → q, k, v; q and
// k L2-normalised (q also scaled by dk^-0.5); β = sigmoid(in_proj_b), g = −exp(A_log)·softplus(in_proj_a + dt_bias).
// Each value head keeps a state S [dk, dv] (its key head is shared by Hv/Hk value heads):
//   S ← exp(g)·S;  δ = β·(v − Sᵀk);  S ← S + k·δᵀ;  o = Sᵀq
// (the plain recurrent form of transformers' torch_recurrent_gated_delta_rule; its chunked form
// computes the same sums in another order). The output is RMSNorm(o)·w·silu(in_proj_z) per value
// head, then out_proj. The backward pass runs the recurrence in reverse; the states it needs are
// recomputed chunk by chunk from checkpoints the forward pass saved every CHECKPOINT_TOKENS tokens.
// The per-token pieces (conv step, gates, L2 norm, delta step) are shared with the sampler, which
// keeps each sequence's conv window and S as its recurrent state instead of a KV cache.
import type { FloatArray, Kernels } from "../kernels/types.ts";
import type { LayerActivations, Scratch } from "./activations.ts";
import { attentionInput, inputNormBackward } from "./attention.ts";
import type { LinearAttentionConfig } from "./config.ts";
import type { BatchContext } from "./context.ts";
import { linearBackward, linearForward } from "./linear.ts";
import type { LayerParams } from "./params.ts";
import type { Linear, Tensor } from "./tensor.ts";

/** The forward pass saves each head's state every this many tokens of a sequence. */
export const CHECKPOINT_TOKENS = 64;

/** transformers' l2norm epsilon (inside the square root, added to the sum of squares). */
const L2_EPS = 1e-6;

export interface LinearAttnParams {
  readonly inProjQkv: Linear;
  readonly inProjZ: Linear;
  readonly inProjB: Linear;
  readonly inProjA: Linear;
  readonly outProj: Linear;
  /** conv1d.weight [C, 1, K]: channel c's taps, oldest input first. */
  readonly conv: Tensor;
  readonly dtBias: Tensor;
  readonly aLog: Tensor;
  /** The gated RMSNorm's weight [dv] (multiplied as it is, no 1 + w). */
  readonly norm: Tensor;
}

/** What a linear-attention layer keeps for its backward pass (T tokens). */
export interface LinearAttnActivations {
  /** in_proj_qkv's output [T, C] (the conv's input) and the conv's output before SiLU [T, C]. */
  mixed: FloatArray;
  conv: FloatArray;
  /** SiLU of the conv output [T, C]: q | k | v per row. */
  act: FloatArray;
  /** Normalised (q scaled) queries and keys [T, Hk·dk], and their inverse norms [T·Hk]. */
  qn: FloatArray;
  kn: FloatArray;
  qr: FloatArray;
  kr: FloatArray;
  z: FloatArray;
  /** in_proj_b and in_proj_a outputs [T, Hv], and β, g from them. */
  b: FloatArray;
  a: FloatArray;
  beta: FloatArray;
  g: FloatArray;
  /** The delta rule's output [T, Vd], its RMSNorm (times w) [T, Vd] with rstd [T·Hv], and the gated result [T, Vd]. */
  o: FloatArray;
  normed: FloatArray;
  rstd: FloatArray;
  y: FloatArray;
  /** Checkpointed states [checkpoints, Hv, dk, dv] (see checkpointCount). */
  states: FloatArray;
  hr: { qkv: FloatArray | null; z: FloatArray | null; b: FloatArray | null; a: FloatArray | null; out: FloatArray | null };
}

/** Temporaries of the backward pass, shared by the layers. */
export interface LinearAttnScratch {
  dy: FloatArray;
  dnormed: FloatArray;
  dz: FloatArray;
  do: FloatArray;
  /** Gradient wrt act (q | k | v), then wrt the conv output, [T, C]. */
  dact: FloatArray;
  dmixed: FloatArray;
  dqn: FloatArray;
  dkn: FloatArray;
  dbeta: FloatArray;
  dg: FloatArray;
  /** One chunk's states, [(CHECKPOINT_TOKENS + 1), dk, dv]; dS [dk, dv] (the forward pass's running state). */
  chunk: FloatArray;
  dS: FloatArray;
  /** Per-step vectors of width max(dk, dv). */
  vec: FloatArray;
  vec2: FloatArray;
}

export interface LinearDims {
  Hk: number;
  Hv: number;
  dk: number;
  dv: number;
  /** Hk·dk: the width of q and of k. */
  Kd: number;
  Vd: number;
  /** Conv channels 2·Kd + Vd. */
  C: number;
  K: number;
}

export function linearDims(la: LinearAttentionConfig): LinearDims {
  const Kd = la.numKeyHeads * la.keyHeadDim;
  const Vd = la.numValueHeads * la.valueHeadDim;
  return { Hk: la.numKeyHeads, Hv: la.numValueHeads, dk: la.keyHeadDim, dv: la.valueHeadDim, Kd, Vd, C: 2 * Kd + Vd, K: la.convKernel };
}

/** State checkpoints a batch needs: one per started CHECKPOINT_TOKENS tokens of each sequence. */
export function checkpointCount(seqStarts: Int32Array): number {
  let n = 0;
  for (let s = 0; s + 1 < seqStarts.length; s++) n += Math.ceil((seqStarts[s + 1] - seqStarts[s]) / CHECKPOINT_TOKENS);
  return n;
}

export function silu(x: number): number {
  return x / (1 + Math.exp(-x));
}

function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/** torch's softplus (beta 1, threshold 20: linear above it). */
function softplus(x: number): number {
  return x > 20 ? x : Math.log1p(Math.exp(x));
}

/**
 * out[c] = Σⱼ w[c,j]·window[c,j] + w[c,K−1]·x[c] over the K−1 previous inputs of channel c
 * (window [C, K−1], oldest first), then shifts x into the window. One token of the causal conv.
 */
export function convStep(w: FloatArray, window: FloatArray, x: FloatArray, xo: number, out: FloatArray, oo: number, C: number, K: number): void {
  const h = K - 1;
  for (let c = 0; c < C; c++) {
    const wb = c * K;
    const sb = c * h;
    const xc = x[xo + c];
    let acc = w[wb + h] * xc;
    for (let j = 0; j < h; j++) acc += w[wb + j] * window[sb + j];
    out[oo + c] = acc;
    for (let j = 0; j + 1 < h; j++) window[sb + j] = window[sb + j + 1];
    if (h > 0) window[sb + h - 1] = xc;
  }
}

/** β and g of one token's Hv heads from its in_proj_b / in_proj_a outputs. */
export function gatesStep(b: FloatArray, a: FloatArray, ro: number, aLog: FloatArray, dtBias: FloatArray, Hv: number, beta: FloatArray, g: FloatArray): void {
  for (let h = 0; h < Hv; h++) {
    beta[ro + h] = sigmoid(b[ro + h]);
    g[ro + h] = -Math.exp(aLog[h]) * softplus(a[ro + h] + dtBias[h]);
  }
}

/** y = x·scale/√(Σx² + ε) over `n` values at xo; returns 1/√(Σx² + ε). */
export function l2normalize(x: FloatArray, xo: number, y: FloatArray, yo: number, n: number, scale: number): number {
  let ss = 0;
  for (let i = 0; i < n; i++) ss += x[xo + i] * x[xo + i];
  const r = 1 / Math.sqrt(ss + L2_EPS);
  for (let i = 0; i < n; i++) y[yo + i] = x[xo + i] * r * scale;
  return r;
}

/** q̂ (scaled by dk^-0.5) and k̂ of one token from its act row (q | k | v); saves the inverse norms when given. */
export function qkNormalizeStep(
  d: LinearDims,
  act: FloatArray,
  ao: number,
  qn: FloatArray,
  kn: FloatArray,
  ko: number,
  qr: FloatArray | null,
  kr: FloatArray | null,
  ro: number,
): void {
  const scale = 1 / Math.sqrt(d.dk);
  for (let h = 0; h < d.Hk; h++) {
    const rq = l2normalize(act, ao + h * d.dk, qn, ko + h * d.dk, d.dk, scale);
    const rk = l2normalize(act, ao + d.Kd + h * d.dk, kn, ko + h * d.dk, d.dk, 1);
    if (qr !== null) qr[ro + h] = rq;
    if (kr !== null) kr[ro + h] = rk;
  }
}

/**
 * One step of the gated delta rule for one value head: S [dk, dv] at so is updated in place,
 * out[oo..oo+dv) = Sᵀq. `kv` is dv floats of scratch.
 */
export function deltaStep(
  S: FloatArray,
  so: number,
  dk: number,
  dv: number,
  q: FloatArray,
  qo: number,
  k: FloatArray,
  ko: number,
  v: FloatArray,
  vo: number,
  g: number,
  beta: number,
  out: FloatArray,
  oo: number,
  kv: FloatArray,
): void {
  const decay = Math.exp(g);
  const n = dk * dv;
  for (let i = 0; i < n; i++) S[so + i] *= decay;
  for (let j = 0; j < dv; j++) kv[j] = 0;
  for (let i = 0; i < dk; i++) {
    const ki = k[ko + i];
    const row = so + i * dv;
    for (let j = 0; j < dv; j++) kv[j] += S[row + j] * ki;
  }
  for (let j = 0; j < dv; j++) kv[j] = (v[vo + j] - kv[j]) * beta;
  for (let i = 0; i < dk; i++) {
    const ki = k[ko + i];
    const row = so + i * dv;
    for (let j = 0; j < dv; j++) S[row + j] += ki * kv[j];
  }
  for (let j = 0; j < dv; j++) out[oo + j] = 0;
  for (let i = 0; i < dk; i++) {
    const qi = q[qo + i];
    const row = so + i * dv;
    for (let j = 0; j < dv; j++) out[oo + j] += S[row + j] * qi;
  }
}

/**
 * The backward of deltaStep. Sp: the state before the step (at spo), St: after it (at sto).
 * dS [dk, dv] holds the gradient wrt St on entry and wrt Sp on return. dq, dk add (+=) into
 * their rows; dv is overwritten. Returns [dg, dβ]. kv, dd: dv floats of scratch.
 */
export function deltaStepBackward(
  Sp: FloatArray,
  spo: number,
  St: FloatArray,
  sto: number,
  dS: FloatArray,
  dk: number,
  dv: number,
  q: FloatArray,
  qo: number,
  k: FloatArray,
  ko: number,
  v: FloatArray,
  vo: number,
  g: number,
  beta: number,
  dOut: FloatArray,
  doo: number,
  dq: FloatArray,
  dkk: FloatArray,
  dvv: FloatArray,
  dvo: number,
  kv: FloatArray,
  dd: FloatArray,
): [number, number] {
  const a = Math.exp(g);
  // o = Stᵀq.
  for (let i = 0; i < dk; i++) {
    let acc = 0;
    const row = sto + i * dv;
    const qi = q[qo + i];
    for (let j = 0; j < dv; j++) {
      acc += St[row + j] * dOut[doo + j];
      dS[i * dv + j] += qi * dOut[doo + j];
    }
    dq[qo + i] += acc;
  }
  // Recompute kv = (a·Sp)ᵀk and δ = β(v − kv).
  for (let j = 0; j < dv; j++) kv[j] = 0;
  for (let i = 0; i < dk; i++) {
    const ki = k[ko + i];
    const row = spo + i * dv;
    for (let j = 0; j < dv; j++) kv[j] += a * Sp[row + j] * ki;
  }
  // St = S' + k·δᵀ: dδ = dSᵀk, dk += dS·δ.
  for (let j = 0; j < dv; j++) dd[j] = 0;
  for (let i = 0; i < dk; i++) {
    const ki = k[ko + i];
    let acc = 0;
    for (let j = 0; j < dv; j++) {
      const delta = beta * (v[vo + j] - kv[j]);
      acc += dS[i * dv + j] * delta;
      dd[j] += dS[i * dv + j] * ki;
    }
    dkk[ko + i] += acc;
  }
  let dbeta = 0;
  for (let j = 0; j < dv; j++) {
    dbeta += dd[j] * (v[vo + j] - kv[j]);
    dvv[dvo + j] = beta * dd[j];
    // dd becomes the gradient wrt kv.
    dd[j] = -beta * dd[j];
  }
  // kv = S'ᵀk: dk += S'·dkv, dS' += k·dkvᵀ; then S' = a·Sp.
  let da = 0;
  for (let i = 0; i < dk; i++) {
    const ki = k[ko + i];
    const row = spo + i * dv;
    let acc = 0;
    for (let j = 0; j < dv; j++) {
      acc += Sp[row + j] * dd[j];
      const ds = dS[i * dv + j] + ki * dd[j];
      da += ds * Sp[row + j];
      dS[i * dv + j] = a * ds;
    }
    dkk[ko + i] += a * acc;
  }
  return [da * a, dbeta];
}

/** One sequence's recurrent state in one layer: its conv window [C, K−1] and its delta-rule state [Hv, dk, dv]. */
export interface RecurrentState {
  conv: FloatArray;
  delta: FloatArray;
}

/** The buffers recurrentTokens reads (mixed, b, a) and writes (act, qn, kn, beta, g, o), n rows each. */
export interface RecurrentRows {
  mixed: FloatArray;
  act: FloatArray;
  qn: FloatArray;
  kn: FloatArray;
  b: FloatArray;
  a: FloatArray;
  beta: FloatArray;
  g: FloatArray;
  o: FloatArray;
}

/**
 * Decoding: n tokens through the conv, the gates, the L2 norms and the delta rule in call order,
 * token i reading and advancing the state `stateOf(i)` (a state starts over at position 0). The
 * sampler and EngineModel's incremental forward both decode with it.
 */
export function recurrentTokens(
  d: LinearDims,
  conv: FloatArray,
  aLog: FloatArray,
  dtBias: FloatArray,
  rows: RecurrentRows,
  n: number,
  positions: Int32Array,
  stateOf: (i: number) => RecurrentState,
  kv: FloatArray,
): void {
  const { C, K, Kd, Vd, Hv, Hk, dk, dv } = d;
  const rep = Hv / Hk;
  for (let i = 0; i < n; i++) {
    const state = stateOf(i);
    if (positions[i] === 0) {
      state.conv.fill(0);
      state.delta.fill(0);
    }
    convStep(conv, state.conv, rows.mixed, i * C, rows.act, i * C, C, K);
    for (let j = i * C; j < (i + 1) * C; j++) rows.act[j] = silu(rows.act[j]);
    gatesStep(rows.b, rows.a, i * Hv, aLog, dtBias, Hv, rows.beta, rows.g);
    qkNormalizeStep(d, rows.act, i * C, rows.qn, rows.kn, i * Kd, null, null, 0);
    for (let h = 0; h < Hv; h++) {
      const ko = i * Kd + Math.floor(h / rep) * dk;
      deltaStep(
        state.delta,
        h * dk * dv,
        dk,
        dv,
        rows.qn,
        ko,
        rows.kn,
        ko,
        rows.act,
        i * C + 2 * Kd + h * dv,
        rows.g[i * Hv + h],
        rows.beta[i * Hv + h],
        rows.o,
        i * Vd + h * dv,
        kv,
      );
    }
  }
}

/** out [T, C] = SiLU(in), elementwise. */
function siluRows(x: FloatArray, out: FloatArray, n: number): void {
  for (let i = 0; i < n; i++) out[i] = silu(x[i]);
}

/** The causal conv over each packed sequence: conv[t] from mixed[t−K+1..t] of the same sequence. */
function convForward(d: LinearDims, w: FloatArray, mixed: FloatArray, conv: FloatArray, seqStarts: Int32Array): void {
  const { C, K } = d;
  for (let s = 0; s + 1 < seqStarts.length; s++) {
    const a = seqStarts[s];
    const b = seqStarts[s + 1];
    for (let t = a; t < b; t++) {
      for (let c = 0; c < C; c++) {
        let acc = 0;
        for (let j = 0; j < K; j++) {
          const src = t - (K - 1) + j;
          if (src >= a) acc += w[c * K + j] * mixed[src * C + c];
        }
        conv[t * C + c] = acc;
      }
    }
  }
}

/** dmixed (overwritten) and dw (+=, when given) from dconv. */
function convBackward(
  d: LinearDims,
  w: FloatArray,
  mixed: FloatArray,
  dconv: FloatArray,
  dmixed: FloatArray,
  dw: FloatArray | null,
  seqStarts: Int32Array,
  T: number,
): void {
  const { C, K } = d;
  dmixed.fill(0, 0, T * C);
  for (let s = 0; s + 1 < seqStarts.length; s++) {
    const a = seqStarts[s];
    const b = seqStarts[s + 1];
    for (let t = a; t < b; t++) {
      for (let c = 0; c < C; c++) {
        const g = dconv[t * C + c];
        for (let j = 0; j < K; j++) {
          const src = t - (K - 1) + j;
          if (src < a) continue;
          dmixed[src * C + c] += w[c * K + j] * g;
          if (dw !== null) dw[c * K + j] += g * mixed[src * C + c];
        }
      }
    }
  }
}

/**
 * Runs the recurrence over every sequence and value head into la.o; when la.states has room
 * (training), saves each head's state at the start of every CHECKPOINT_TOKENS-token chunk.
 */
function deltaRuleForward(d: LinearDims, la: LinearAttnActivations, sc: LinearAttnScratch, seqStarts: Int32Array): void {
  const { Hv, Hk, dk, dv, Kd, Vd, C } = d;
  const rep = Hv / Hk;
  const n = dk * dv;
  const keep = la.states.length > 0;
  const state = sc.dS;
  let ck = 0;
  for (let s = 0; s + 1 < seqStarts.length; s++) {
    const a = seqStarts[s];
    const b = seqStarts[s + 1];
    for (let h = 0; h < Hv; h++) {
      const kh = Math.floor(h / rep);
      state.fill(0, 0, n);
      for (let t = a; t < b; t++) {
        const local = t - a;
        if (keep && local % CHECKPOINT_TOKENS === 0) la.states.set(state.subarray(0, n), ((ck + local / CHECKPOINT_TOKENS) * Hv + h) * n);
        const ko = t * Kd + kh * dk;
        deltaStep(
          state,
          0,
          dk,
          dv,
          la.qn,
          ko,
          la.kn,
          ko,
          la.act,
          t * C + 2 * Kd + h * dv,
          la.g[t * Hv + h],
          la.beta[t * Hv + h],
          la.o,
          t * Vd + h * dv,
          sc.vec,
        );
      }
    }
    ck += Math.ceil((b - a) / CHECKPOINT_TOKENS);
  }
}

/** The full forward of a linear-attention mixer: out [T, D] from its input xin [T, D]. */
export function linearAttentionForward(
  c: BatchContext,
  lin: LinearAttentionConfig,
  p: LinearAttnParams,
  xin: FloatArray,
  la: LinearAttnActivations,
  sc: LinearAttnScratch,
  out: FloatArray,
  ones: FloatArray,
): void {
  const { T } = c;
  const d = linearDims(lin);
  const { Hv, Kd, C } = d;
  projectInputs(c, p, xin, la, ones);
  convForward(d, p.conv.data, la.mixed, la.conv, c.seqStarts);
  siluRows(la.conv, la.act, T * C);
  for (let t = 0; t < T; t++) {
    gatesStep(la.b, la.a, t * Hv, p.aLog.data, p.dtBias.data, Hv, la.beta, la.g);
    qkNormalizeStep(d, la.act, t * C, la.qn, la.kn, t * Kd, la.qr, la.kr, t * d.Hk);
  }
  deltaRuleForward(d, la, sc, c.seqStarts);
  projectOutput(c, d, p, la, out, ones);
}

/** in_proj_qkv, in_proj_z, in_proj_b, in_proj_a of xin [T, D] into la. */
function projectInputs(c: BatchContext, p: LinearAttnParams, xin: FloatArray, la: LinearAttnActivations, ones: FloatArray): void {
  const { k, T } = c;
  linearForward(k, p.inProjQkv, xin, T, la.mixed, la.hr.qkv, ones);
  linearForward(k, p.inProjZ, xin, T, la.z, la.hr.z, ones);
  linearForward(k, p.inProjB, xin, T, la.b, la.hr.b, ones);
  linearForward(k, p.inProjA, xin, T, la.a, la.hr.a, ones);
}

/** out [T, D] = out_proj(RMSNorm(la.o)·w·silu(la.z)). */
function projectOutput(c: BatchContext, d: LinearDims, p: LinearAttnParams, la: LinearAttnActivations, out: FloatArray, ones: FloatArray): void {
  const { k, T } = c;
  gatedNormForward(k, c.config.rmsNormEps, p.norm.data, la.o, la.z, la.normed, la.rstd, la.y, T * d.Hv, d.dv);
  linearForward(k, p.outProj, la.y, T, out, la.hr.out, ones);
}

/** The mixer's output [T, D] for T decoded tokens, each advancing its state (recurrentTokens). */
export function linearAttentionDecode(
  c: BatchContext,
  lin: LinearAttentionConfig,
  p: LinearAttnParams,
  xin: FloatArray,
  la: LinearAttnActivations,
  sc: LinearAttnScratch,
  stateOf: (i: number) => RecurrentState,
  out: FloatArray,
  ones: FloatArray,
): void {
  const d = linearDims(lin);
  projectInputs(c, p, xin, la, ones);
  recurrentTokens(d, p.conv.data, p.aLog.data, p.dtBias.data, la, c.T, c.positions, stateOf, sc.vec);
  projectOutput(c, d, p, la, out, ones);
}

/** y = RMSNorm(o)·w·silu(z) per row of width dv (rows = tokens·Hv); normed and rstd are saved. */
export function gatedNormForward(
  k: Kernels,
  eps: number,
  w: FloatArray,
  o: FloatArray,
  z: FloatArray,
  normed: FloatArray,
  rstd: FloatArray,
  y: FloatArray,
  rows: number,
  dv: number,
): void {
  k.rmsnormForward(o, w, normed, rstd, rows, dv, eps);
  k.swigluForward(z, normed, y, rows * dv);
}

/**
 * From dOut [T, D], the gradient wrt the mixer's output: parameter gradients (+=) and dxin [T, D]
 * (overwritten when dxin is given).
 */
export function linearAttentionBackward(
  c: BatchContext,
  lin: LinearAttentionConfig,
  p: LinearAttnParams,
  xin: FloatArray,
  la: LinearAttnActivations,
  sc: LinearAttnScratch,
  dOut: FloatArray,
  dxin: FloatArray | null,
  dhr: FloatArray,
  ones: FloatArray,
): void {
  const { k, T } = c;
  const d = linearDims(lin);
  const { Hv, Hk, dk, Kd, Vd, C, dv } = d;
  linearBackward(k, p.outProj, la.y, T, la.hr.out, dOut, sc.dy, 0, dhr, ones);
  // y = normed·silu(z); normed = RMSNorm(o)·w.
  k.swigluBackward(sc.dy, la.z, la.normed, sc.dz, sc.dnormed, T * Vd);
  k.rmsnormBackward(sc.dnormed, la.o, p.norm.data, la.rstd, sc.do, p.norm.grad, T * Hv, dv);
  deltaRuleBackward(d, la, sc, c.seqStarts);
  // Through the L2 norms into act's q and k parts; dv is already in act's v part.
  for (let t = 0; t < T; t++) {
    for (let h = 0; h < Hk; h++) {
      l2Backward(la.act, t * C + h * dk, la.qr[t * Hk + h], 1 / Math.sqrt(dk), sc.dqn, t * Kd + h * dk, sc.dact, t * C + h * dk, dk);
      l2Backward(la.act, t * C + Kd + h * dk, la.kr[t * Hk + h], 1, sc.dkn, t * Kd + h * dk, sc.dact, t * C + Kd + h * dk, dk);
    }
  }
  // Through SiLU: silu'(x) = s(1 + x(1 − s)).
  for (let i = 0; i < T * C; i++) {
    const x = la.conv[i];
    const s = 1 / (1 + Math.exp(-x));
    sc.dact[i] *= s * (1 + x * (1 - s));
  }
  convBackward(d, p.conv.data, la.mixed, sc.dact, sc.dmixed, p.conv.grad, c.seqStarts, T);
  // β = sigmoid(b); g = −exp(A_log)·softplus(a + dt_bias).
  const db = sc.dbeta;
  const da = sc.dg;
  for (let t = 0; t < T; t++) {
    for (let h = 0; h < Hv; h++) {
      const i = t * Hv + h;
      const beta = la.beta[i];
      db[i] = sc.dbeta[i] * beta * (1 - beta);
      const x = la.a[i] + p.dtBias.data[h];
      const dgi = sc.dg[i];
      if (p.aLog.grad !== null) p.aLog.grad[h] += dgi * la.g[i];
      const dx = dgi * -Math.exp(p.aLog.data[h]) * (x > 20 ? 1 : 1 / (1 + Math.exp(-x)));
      da[i] = dx;
      if (p.dtBias.grad !== null) p.dtBias.grad[h] += dx;
    }
  }
  linearBackward(k, p.inProjQkv, xin, T, la.hr.qkv, sc.dmixed, dxin, 0, dhr, ones);
  linearBackward(k, p.inProjZ, xin, T, la.hr.z, sc.dz, dxin, 1, dhr, ones);
  linearBackward(k, p.inProjB, xin, T, la.hr.b, db, dxin, 1, dhr, ones);
  linearBackward(k, p.inProjA, xin, T, la.hr.a, da, dxin, 1, dhr, ones);
}

/** dx (overwritten) of y = scale·x·r, r = 1/√(Σx² + ε), from dy: scale·r·(dy − x·r²·(x·dy)). */
function l2Backward(x: FloatArray, xo: number, r: number, scale: number, dy: FloatArray, yo: number, dx: FloatArray, dxo: number, n: number): void {
  let dot = 0;
  for (let i = 0; i < n; i++) dot += x[xo + i] * dy[yo + i];
  const r2 = r * r;
  for (let i = 0; i < n; i++) dx[dxo + i] = scale * r * (dy[yo + i] - x[xo + i] * r2 * dot);
}

/**
 * The recurrence in reverse: sc.dqn, sc.dkn (overwritten, summed over the value heads sharing a
 * key head), v's gradient into sc.dact's v part, sc.dbeta and sc.dg per token and head.
 */
function deltaRuleBackward(d: LinearDims, la: LinearAttnActivations, sc: LinearAttnScratch, seqStarts: Int32Array): void {
  const { Hv, Hk, dk, dv, Kd, Vd, C } = d;
  const rep = Hv / Hk;
  const n = dk * dv;
  const T = seqStarts[seqStarts.length - 1];
  sc.dqn.fill(0, 0, T * Kd);
  sc.dkn.fill(0, 0, T * Kd);
  const chunk = sc.chunk;
  let ck = 0;
  for (let s = 0; s + 1 < seqStarts.length; s++) {
    const a = seqStarts[s];
    const b = seqStarts[s + 1];
    const chunks = Math.ceil((b - a) / CHECKPOINT_TOKENS);
    for (let h = 0; h < Hv; h++) {
      const kh = Math.floor(h / rep);
      sc.dS.fill(0, 0, n);
      for (let ci = chunks - 1; ci >= 0; ci--) {
        const t0 = a + ci * CHECKPOINT_TOKENS;
        const t1 = Math.min(b, t0 + CHECKPOINT_TOKENS);
        // chunk[i] = the state before token t0 + i.
        const src = ((ck + ci) * Hv + h) * n;
        chunk.set(la.states.subarray(src, src + n), 0);
        for (let t = t0; t < t1; t++) {
          const i = t - t0;
          chunk.copyWithin((i + 1) * n, i * n, (i + 1) * n);
          deltaStep(
            chunk,
            (i + 1) * n,
            dk,
            dv,
            la.qn,
            t * Kd + kh * dk,
            la.kn,
            t * Kd + kh * dk,
            la.act,
            t * C + 2 * Kd + h * dv,
            la.g[t * Hv + h],
            la.beta[t * Hv + h],
            sc.vec2,
            0,
            sc.vec,
          );
        }
        for (let t = t1 - 1; t >= t0; t--) {
          const i = t - t0;
          const [dg, dbeta] = deltaStepBackward(
            chunk,
            i * n,
            chunk,
            (i + 1) * n,
            sc.dS,
            dk,
            dv,
            la.qn,
            t * Kd + kh * dk,
            la.kn,
            t * Kd + kh * dk,
            la.act,
            t * C + 2 * Kd + h * dv,
            la.g[t * Hv + h],
            la.beta[t * Hv + h],
            sc.do,
            t * Vd + h * dv,
            sc.dqn,
            sc.dkn,
            sc.dact,
            t * C + 2 * Kd + h * dv,
            sc.vec,
            sc.vec2,
          );
          sc.dg[t * Hv + h] = dg;
          sc.dbeta[t * Hv + h] = dbeta;
        }
      }
    }
    ck += chunks;
  }
}

function linearOf(
  c: BatchContext,
  p: LayerParams,
  la: LayerActivations,
  sc: Scratch,
): [LinearAttentionConfig, LinearAttnParams, LinearAttnActivations, LinearAttnScratch] {
  const lin = c.config.linearAttention;
  if (lin === undefined || p.linear === null || la.linear === null || sc.linear === null)
    throw new Error("linear-attention layer without its parameters or buffers");
  return [lin, p.linear, la.linear, sc.linear];
}

/** la.h = x + linear_attn(RMSNorm(x)). */
export function linearAttentionBlockForward(c: BatchContext, p: LayerParams, la: LayerActivations, x: FloatArray, sc: Scratch): void {
  const [lin, lp, acts, lsc] = linearOf(c, p, la, sc);
  const xin = attentionInput(c, p, la, x, sc);
  linearAttentionForward(c, lin, lp, xin, acts, lsc, sc.tmp, sc.ones);
  c.k.add(x, sc.tmp, la.h, c.T * c.config.hiddenSize);
}

/** la.h = x + linear_attn(RMSNorm(x)) for decoded tokens (model/kvcache.ts). */
export function linearAttentionBlockDecode(
  c: BatchContext,
  p: LayerParams,
  la: LayerActivations,
  x: FloatArray,
  sc: Scratch,
  stateOf: (i: number) => RecurrentState,
): void {
  const [lin, lp, acts, lsc] = linearOf(c, p, la, sc);
  const xin = attentionInput(c, p, la, x, sc);
  linearAttentionDecode(c, lin, lp, xin, acts, lsc, stateOf, sc.tmp, sc.ones);
  c.k.add(x, sc.tmp, la.h, c.T * c.config.hiddenSize);
}

/** As attentionBlockBackward: sc.dres from the gradient wrt la.h to the gradient wrt x. */
export function linearAttentionBlockBackward(c: BatchContext, p: LayerParams, la: LayerActivations, x: FloatArray, sc: Scratch, needInputGrad = true): void {
  const [lin, lp, acts, lsc] = linearOf(c, p, la, sc);
  const xin = attentionInput(c, p, la, x, sc);
  const dxn = needInputGrad || (p.inputNorm !== null && p.inputNorm.grad !== null) ? sc.dxn : null;
  linearAttentionBackward(c, lin, lp, xin, acts, lsc, sc.dres, dxn, sc.dhr, sc.ones);
  inputNormBackward(c, p, x, la, sc, dxn);
}
