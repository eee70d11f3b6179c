// The sparse MLP block of mixture-of-experts families (docs/numerics.md#mixture-of-experts):
// router logits x·Wᵣᵀ, a softmax over the experts, the top-k experts of each token with their
// probabilities as weights (renormalised over the k when norm_topk_prob), and the weighted sum of
// those experts' SwiGLU outputs. Routing is a pure function of the logits (ties go to the lower
// expert index), so training, the KV-cache sampler and transformers pick the same experts.
// The routing choice itself has no gradient; the weights do, through the softmax into x and Wᵣ.
// GPT-OSS (docs/numerics.md#gpt-oss) routes the same way (a softmax over the top-k logits is the
// renormalised full softmax) with a router bias, and its experts are fused gate_up / down
// matrices with biases and a clamped SwiGLU. Both adapt their experts with Tinker's shared-outer
// factors (expertLora.ts), applied here beside the experts' frozen linears.
import { widenExpert } from "../kernels/mxfp4.ts";
import type { FloatArray } from "../kernels/types.ts";
import type { MoeActivations, MoeScratch } from "./activations.ts";
import type { MoeConfig } from "./config.ts";
import type { BatchContext } from "./context.ts";
import { clampedSwigluBackward, clampedSwigluForward, gatedBackward, gatedForward } from "./gated.ts";
import {
  expertLoraDownInput,
  expertLoraDownInputBackward,
  expertLoraDownOutput,
  expertLoraDownOutputBackward,
  expertLoraGateUp,
  expertLoraGateUpBackward,
  expertLoraInputs,
  expertLoraInputsBackward,
} from "./expertLora.ts";
import { linearBackward, linearForward } from "./linear.ts";
import { expertLoraGrads, expertLoraValues, type MoeParams } from "./params.ts";

/**
 * For T rows of router logits [T, E]: probs = softmax (overwrites `probs`), and each row's top-k
 * experts in `chosen` [T·K] (descending probability, lower index first on ties) with their weights.
 */
export function routeTokens(moe: MoeConfig, logits: FloatArray, T: number, probs: FloatArray, chosen: Int32Array, weights: FloatArray): void {
  const { numExperts: E, topK: K, normTopkProb } = moe;
  for (let t = 0; t < T; t++) {
    const row = t * E;
    let max = Number.NEGATIVE_INFINITY;
    for (let e = 0; e < E; e++) max = Math.max(max, logits[row + e]);
    let sum = 0;
    for (let e = 0; e < E; e++) {
      const v = Math.exp(logits[row + e] - max);
      probs[row + e] = v;
      sum += v;
    }
    for (let e = 0; e < E; e++) probs[row + e] /= sum;
    let picked = 0;
    for (let k = 0; k < K; k++) {
      let best = -1;
      for (let e = 0; e < E; e++) {
        if (best >= 0 && probs[row + e] <= probs[row + best]) continue;
        let taken = false;
        for (let j = 0; j < k; j++) taken ||= chosen[t * K + j] === e;
        if (!taken) best = e;
      }
      chosen[t * K + k] = best;
      weights[t * K + k] = probs[row + best];
      picked += probs[row + best];
    }
    if (normTopkProb) for (let k = 0; k < K; k++) weights[t * K + k] /= picked;
  }
}

/**
 * Groups the A = T·K assignments by expert (a counting sort, token order within an expert):
 * order[i] is the assignment of grouped row i, expert e owns rows [offsets[e], offsets[e+1]).
 */
export function groupByExpert(chosen: Int32Array, A: number, E: number, order: Int32Array, offsets: Int32Array): void {
  offsets.fill(0);
  for (let a = 0; a < A; a++) offsets[chosen[a] + 1]++;
  for (let e = 0; e < E; e++) offsets[e + 1] += offsets[e];
  const next = Int32Array.from(offsets.subarray(0, E));
  for (let a = 0; a < A; a++) order[next[chosen[a]]++] = a;
}

/** xg[i] = x[token of order[i]] for the A grouped rows, rows of width D. */
export function gatherRows(x: FloatArray, order: Int32Array, A: number, K: number, D: number, xg: FloatArray): void {
  for (let i = 0; i < A; i++) {
    const t = (order[i] / K) | 0;
    xg.set(x.subarray(t * D, (t + 1) * D), i * D);
  }
}

/**
 * out[t] = Σ over t's assignments of weight·y (out [T, D] overwritten). Grouped rows are in
 * ascending expert order, the order in which transformers adds the experts' contributions.
 */
export function combineExperts(y: FloatArray, weights: FloatArray, order: Int32Array, A: number, K: number, D: number, out: FloatArray, T: number): void {
  out.fill(0, 0, T * D);
  for (let i = 0; i < A; i++) {
    const a = order[i];
    const t = (a / K) | 0;
    const w = weights[a];
    const o = t * D;
    const r = i * D;
    for (let j = 0; j < D; j++) out[o + j] += w * y[r + j];
  }
}

/** Expert load of one pass, summed over its sparse layers (transformers' load_balancing_loss_func). */
export class RoutingStats {
  /** Assignments per expert. */
  readonly counts: Float64Array;
  /** Router probability per expert, summed over tokens. */
  readonly probSums: Float64Array;
  /** Token rows routed (tokens × sparse layers). */
  rows = 0;
  /** When kept (tests): each sparse layer's chosen experts [T·K], in layer order. */
  readonly choices: Int32Array[] | null;

  constructor(
    readonly moe: MoeConfig,
    keepChoices = false,
  ) {
    this.counts = new Float64Array(moe.numExperts);
    this.probSums = new Float64Array(moe.numExperts);
    this.choices = keepChoices ? [] : null;
  }

  add(probs: FloatArray, chosen: Int32Array, T: number): void {
    const E = this.moe.numExperts;
    this.choices?.push(Int32Array.from(chosen.subarray(0, T * this.moe.topK)));
    for (let a = 0; a < T * this.moe.topK; a++) this.counts[chosen[a]]++;
    for (let t = 0; t < T; t++) for (let e = 0; e < E; e++) this.probSums[e] += probs[t * E + e];
    this.rows += T;
  }

  /**
   * moe_aux_loss: transformers' load-balancing loss E·Σₑ fₑ·Pₑ (fₑ assignments per row, Pₑ mean
   * probability; k when balanced), before its router_aux_loss_coef. moe_expert_load_max: the
   * busiest expert's share of assignments over an even share (1 when balanced, E/k at worst).
   */
  metrics(): Record<string, number> {
    if (this.rows === 0) return {};
    const { numExperts: E, topK: K } = this.moe;
    let aux = 0;
    let busiest = 0;
    for (let e = 0; e < E; e++) {
      aux += (this.counts[e] / this.rows) * (this.probSums[e] / this.rows);
      busiest = Math.max(busiest, this.counts[e]);
    }
    return { "moe_aux_loss:mean": aux * E, "moe_expert_load_max:max": (busiest * E) / (this.rows * K) };
  }
}

function rowsOf(a: FloatArray, r0: number, n: number, width: number): FloatArray {
  return a.subarray(r0 * width, (r0 + n) * width);
}

/** Calls fn for each expert that got tokens, with its first grouped row and its row count. */
export function forEachBusyExpert(offsets: Int32Array, E: number, fn: (e: number, r0: number, n: number) => void): void {
  for (let e = 0; e < E; e++) {
    const n = offsets[e + 1] - offsets[e];
    if (n > 0) fn(e, offsets[e], n);
  }
}

/** Width of an expert's gate rows: Fe, or 2·Fe for GPT-OSS's fused gate_up (up then has none). */
export function expertGateWidth(moe: MoeConfig): number {
  return moe.gptOss !== undefined ? 2 * moe.expertIntermediateSize : moe.expertIntermediateSize;
}

/** Views of rows [r0, r0 + n) of the grouped buffers an expert reads and writes. */
function expertRows(la: MoeActivations, sc: MoeScratch, r0: number, n: number, D: number, moe: MoeConfig) {
  const Fe = moe.expertIntermediateSize;
  const up = moe.gptOss !== undefined ? la.up : rowsOf(la.up, r0, n, Fe);
  return { gate: rowsOf(la.gate, r0, n, expertGateWidth(moe)), up, act: rowsOf(sc.act, r0, n, Fe), xg: rowsOf(sc.xg, r0, n, D) };
}

/** logits [T, E] += the router's bias (GPT-OSS), as a GEMM with a column of ones. */
export function addRouterBias(c: BatchContext, bias: FloatArray | null, logits: FloatArray, ones: FloatArray): void {
  if (bias !== null) c.k.gemm(false, false, c.T, logits.length / c.T, 1, 1, ones, bias, 1, logits);
}

/** act = the expert's activation of its gate (and up) rows: the family's SwiGLU, or GPT-OSS's clamped one. */
function expertActivation(c: BatchContext, moe: MoeConfig, gate: FloatArray, up: FloatArray, act: FloatArray, n: number): void {
  if (moe.gptOss !== undefined) clampedSwigluForward(moe.gptOss.swigluLimit, gate, act, n * moe.expertIntermediateSize);
  else gatedForward(c.config, c.k, gate, up, act, n * moe.expertIntermediateSize);
}

function sharedDhr(sc: MoeScratch): { gate: FloatArray; up: FloatArray; down: FloatArray } {
  if (sc.dhrGate === null || sc.dhrUp === null || sc.dhrDown === null) throw new Error("expert adapters without their gradient buffers");
  return { gate: sc.dhrGate, up: sc.dhrUp, down: sc.dhrDown };
}

function moeOf(c: BatchContext): MoeConfig {
  const moe = c.config.moe;
  if (moe === undefined) throw new Error("mixture-of-experts block in a model whose config has no experts");
  return moe;
}

/** out [T, D] = the block's output for its input xin [T, D]; saves what the backward pass needs in la. */
export function moeBlockForward(c: BatchContext, p: MoeParams, xin: FloatArray, la: MoeActivations, sc: MoeScratch, out: FloatArray, ones: FloatArray): void {
  const { k, T } = c;
  const moe = moeOf(c);
  const D = c.config.hiddenSize;
  const { numExperts: E, topK: K } = moe;
  const A = T * K;
  k.gemm(false, true, T, E, D, 1, xin, p.router.data, 0, sc.logits);
  addRouterBias(c, p.routerBias?.data ?? null, sc.logits, ones);
  routeTokens(moe, sc.logits, T, la.probs, la.chosen, la.weights);
  c.routing?.add(la.probs, la.chosen, T);
  groupByExpert(la.chosen, A, E, la.order, la.offsets);
  gatherRows(xin, la.order, A, K, D, sc.xg);
  const rank = expertRank(p);
  // The shared-outer factors: the experts' linears hold no adapter, the block applies it (expertLora.ts).
  const shared = p.lora === null ? null : { f: expertLoraValues(p.lora), hr: sharedHr(la) };
  if (shared !== null) expertLoraInputs(k, shared.f, sc.xg, A, D, shared.hr.gate, shared.hr.up);
  forEachBusyExpert(la.offsets, E, (e, r0, n) => {
    const ex = p.experts[e];
    widenExpert(k, ex.quantized);
    const { gate, up, act, xg } = expertRows(la, sc, r0, n, D, moe);
    linearForward(k, ex.gate, xg, n, gate, null, ones);
    if (ex.up !== null) linearForward(k, ex.up, xg, n, up, null, ones);
    if (shared !== null) {
      const Fe = moe.expertIntermediateSize;
      const hr = (a: FloatArray): FloatArray => rowsOf(a, r0, n, rank);
      expertLoraGateUp(k, shared.f, e, Fe, hr(shared.hr.gate), hr(shared.hr.up), n, gate, ex.up === null ? null : up, act);
    }
    expertActivation(c, moe, gate, up, act, n);
    linearForward(k, ex.down, act, n, rowsOf(la.y, r0, n, D), null, ones);
    if (shared !== null) expertLoraDownInput(k, shared.f, e, moe.expertIntermediateSize, act, n, rowsOf(shared.hr.down, r0, n, rank));
  });
  if (shared !== null) expertLoraDownOutput(k, shared.f, shared.hr.down, A, D, la.y);
  combineExperts(la.y, la.weights, la.order, A, K, D, out, T);
}

/** The rank of the block's expert adapter (0 without). */
export function expertRank(p: MoeParams): number {
  return p.lora?.rank ?? 0;
}

/** The saved x·Aᵀ rows of the shared-outer factors. */
function sharedHr(la: MoeActivations): { gate: FloatArray; up: FloatArray; down: FloatArray } {
  if (la.hrGate === null || la.hrUp === null || la.hrDown === null) throw new Error("expert adapters without their activation buffers");
  return { gate: la.hrGate, up: la.hrUp, down: la.hrDown };
}

/**
 * From dOut [T, D] (gradient wrt the block's output): the experts' and router's parameter
 * gradients (+=) and dxin [T, D] (overwritten), the gradient wrt the block's input.
 */
export function moeBlockBackward(
  c: BatchContext,
  p: MoeParams,
  xin: FloatArray,
  la: MoeActivations,
  sc: MoeScratch,
  dOut: FloatArray,
  dxin: FloatArray,
  dhr: FloatArray,
  ones: FloatArray,
): void {
  const { k, T } = c;
  const moe = moeOf(c);
  const D = c.config.hiddenSize;
  const { numExperts: E, topK: K, expertIntermediateSize: Fe } = moe;
  const A = T * K;
  // Each grouped row's output gradient is its weight times the token's; each weight's gradient is dOut·y.
  for (let i = 0; i < A; i++) {
    const a = la.order[i];
    const t = (a / K) | 0;
    const w = la.weights[a];
    let dw = 0;
    for (let j = 0; j < D; j++) {
      const g = dOut[t * D + j];
      dw += g * la.y[i * D + j];
      sc.dy[i * D + j] = w * g;
    }
    sc.dw[a] = dw;
  }
  gatherRows(xin, la.order, A, K, D, sc.xg);
  const rank = expertRank(p);
  const shared = p.lora === null ? null : { f: expertLoraValues(p.lora), g: expertLoraGrads(p.lora), hr: sharedHr(la), dhr: sharedDhr(sc) };
  if (shared !== null) expertLoraDownOutputBackward(k, shared.f, shared.g, sc.dy, shared.hr.down, A, D, shared.dhr.down);
  forEachBusyExpert(la.offsets, E, (e, r0, n) => {
    const ex = p.experts[e];
    widenExpert(k, ex.quantized);
    const { gate, up, act, xg } = expertRows(la, sc, r0, n, D, moe);
    const dact = rowsOf(sc.dact, r0, n, Fe);
    const dgate = rowsOf(sc.dgate, r0, n, expertGateWidth(moe));
    const dxg = rowsOf(sc.dxg, r0, n, D);
    expertActivation(c, moe, gate, up, act, n);
    linearBackward(k, ex.down, act, n, null, rowsOf(sc.dy, r0, n, D), dact, 0, dhr, ones);
    if (shared !== null) expertLoraDownInputBackward(k, shared.f, shared.g, e, Fe, act, rowsOf(shared.dhr.down, r0, n, rank), n, dact);
    const hr = (a: FloatArray): FloatArray => rowsOf(a, r0, n, rank);
    let dup: FloatArray | null = null;
    if (ex.up === null) clampedSwigluBackward(moe.gptOss?.swigluLimit ?? 0, dact, gate, dgate, n * Fe);
    else {
      dup = rowsOf(sc.dup, r0, n, Fe);
      gatedBackward(c.config, k, dact, gate, up, dgate, dup, n * Fe);
    }
    // dact is spent: it serves as GPT-OSS's de-interleaving buffer.
    if (shared !== null)
      expertLoraGateUpBackward(k, shared.f, shared.g, e, Fe, hr(shared.hr.gate), hr(shared.hr.up), dgate, dup, n, dact, hr(shared.dhr.gate), hr(shared.dhr.up));
    linearBackward(k, ex.gate, xg, n, null, dgate, dxg, 0, dhr, ones);
    if (ex.up !== null && dup !== null) linearBackward(k, ex.up, xg, n, null, dup, dxg, 1, dhr, ones);
  });
  if (shared !== null) expertLoraInputsBackward(k, shared.f, shared.g, sc.xg, shared.dhr.gate, shared.dhr.up, A, D, sc.dxg);
  dxin.fill(0, 0, T * D);
  for (let i = 0; i < A; i++) {
    const t = (la.order[i] / K) | 0;
    for (let j = 0; j < D; j++) dxin[t * D + j] += sc.dxg[i * D + j];
  }
  routerLogitsBackward(moe, la, sc.dw, T, sc.logits);
  k.gemm(false, false, T, D, E, 1, sc.logits, p.router.data, 1, dxin);
  if (p.router.grad !== null) k.gemm(true, false, E, D, T, 1, sc.logits, xin, 1, p.router.grad);
  const biasGrad = p.routerBias?.grad ?? null;
  if (biasGrad !== null) k.gemm(false, false, 1, E, T, 1, ones, sc.logits, 1, biasGrad);
}

/** dlogits [T, E] (overwritten) from the weights' gradients dw [T·K], through the renormalisation and the softmax. */
export function routerLogitsBackward(moe: MoeConfig, la: MoeActivations, dw: FloatArray, T: number, dlogits: FloatArray): void {
  const { numExperts: E, topK: K, normTopkProb } = moe;
  for (let t = 0; t < T; t++) {
    const row = t * E;
    dlogits.fill(0, row, row + E);
    // dlogits first holds the gradient wrt the chosen probabilities.
    if (normTopkProb) {
      // w_k = p_k / S with S = Σ_j p_j: dp_k = (dw_k − Σ_j dw_j·w_j) / S.
      let S = 0;
      let dot = 0;
      for (let j = 0; j < K; j++) {
        S += la.probs[row + la.chosen[t * K + j]];
        dot += dw[t * K + j] * la.weights[t * K + j];
      }
      for (let j = 0; j < K; j++) dlogits[row + la.chosen[t * K + j]] = (dw[t * K + j] - dot) / S;
    } else {
      for (let j = 0; j < K; j++) dlogits[row + la.chosen[t * K + j]] = dw[t * K + j];
    }
    let g = 0;
    for (let e = 0; e < E; e++) g += dlogits[row + e] * la.probs[row + e];
    for (let e = 0; e < E; e++) dlogits[row + e] = la.probs[row + e] * (dlogits[row + e] - g);
  }
}
