// Per-batch activation buffers, laid out explicitly as in llm.c. What the backward pass needs is
// kept per layer (residual inputs, norm statistics, q/k/v, MLP pre-activations, LoRA x·A^T);
// cheap values (normed inputs, attention probabilities, SwiGLU output) are recomputed
// in the backward pass into shared scratch. Attention probabilities are kept per layer when they fit
// in PROBS_BUDGET_BYTES (no recomputation); otherwise the backward pass recomputes them one sequence
// at a time, which bounds attention memory to one sequence of one layer.
// A forward-only pass shares one layer's buffers across all layers.
// ActivationArena keeps one pass's buffers for the next call with the same batch shape: allocating
// (and zero-filling, page-faulting) ~0.6 GB per training call of a 135M model costs more than the
// elementwise kernels do.
import type { FloatArray } from "../kernels/types.ts";
import type { ModelConfig } from "./config.ts";
import type { LayerParams, ModelParams } from "./params.ts";
import { allocFloat, type Dtype, type Linear } from "./tensor.ts";

export interface LoraActs {
  q: FloatArray | null;
  k: FloatArray | null;
  v: FloatArray | null;
  o: FloatArray | null;
  gate: FloatArray | null;
  up: FloatArray | null;
  down: FloatArray | null;
}

export interface LayerActivations {
  /** Residual after attention, [T, D]. */
  h: FloatArray;
  rstd1: FloatArray;
  rstd2: FloatArray;
  /** q, k after (q/k norm and) RoPE; v. [T, H*d], [T, Hkv*d], [T, Hkv*d]. */
  q: FloatArray;
  k: FloatArray;
  v: FloatArray;
  /** Qwen3: projections before the per-head norm, and that norm's statistics ([T*H], [T*Hkv]). */
  qRaw: FloatArray | null;
  kRaw: FloatArray | null;
  qRstd: FloatArray | null;
  kRstd: FloatArray | null;
  /** Attention output before o_proj, [T, H*d]. */
  attn: FloatArray;
  /** Families with output norms (olmo2, gemma3): o_proj's and down_proj's outputs before their norms, [T, D], and those norms' statistics. */
  attnOut: FloatArray | null;
  attnOutRstd: FloatArray | null;
  mlpOut: FloatArray | null;
  mlpOutRstd: FloatArray | null;
  gate: FloatArray;
  up: FloatArray;
  hr: LoraActs;
  /** Softmax probabilities saved by the forward pass (kernel layout), or null: recompute. */
  probs: FloatArray | null;
}

export interface Scratch {
  xn: FloatArray;
  tmp: FloatArray;
  attn: FloatArray;
  act: FloatArray;
  probs: FloatArray;
  ones: FloatArray;
  /** Gradient wrt the residual stream, carried down through the layers. */
  dres: FloatArray;
  dxn: FloatArray;
  dtmp: FloatArray;
  dattn: FloatArray;
  dq: FloatArray;
  dk: FloatArray;
  dv: FloatArray;
  dqRaw: FloatArray | null;
  dkRaw: FloatArray | null;
  dact: FloatArray;
  dgate: FloatArray;
  dup: FloatArray;
  dhr: FloatArray;
}

export interface BatchActivations {
  T: number;
  /** residual[l] is layer l's input; residual[L] feeds the final norm. */
  residual: FloatArray[];
  layers: LayerActivations[];
  scratch: Scratch;
  /** The head's per-chunk buffers, allocated by head.ts on first use. */
  head: HeadBuffers | null;
}

export interface HeadBuffers {
  /** Token rows per chunk. */
  chunk: number;
  rstd: FloatArray;
  /** [chunk, V]; the backward pass overwrites the logits with their gradient. */
  logits: FloatArray;
  lp: FloatArray;
  lse: FloatArray;
  dlp: FloatArray;
  hr: FloatArray | null;
}

/** Saved attention probabilities of all layers may take this much; above it they are recomputed. */
export const PROBS_BUDGET_BYTES = 256 * 1024 * 1024;

function loraBuf(dtype: Dtype, lin: Linear, T: number): FloatArray | null {
  return lin.lora === null ? null : allocFloat(dtype, T * lin.lora.rank);
}

function allocLayer(dtype: Dtype, config: ModelConfig, p: LayerParams, T: number, probsSize: number): LayerActivations {
  const { hiddenSize: D, intermediateSize: F, numHeads: H, numKvHeads: Hkv, headDim: d } = config;
  const qk = config.qkNorm;
  const post = (n: number): FloatArray | null => (p.attnOutNorm !== null || p.mlpOutNorm !== null ? allocFloat(dtype, n) : null);
  return {
    h: allocFloat(dtype, T * D),
    rstd1: allocFloat(dtype, T),
    rstd2: allocFloat(dtype, T),
    q: allocFloat(dtype, T * H * d),
    k: allocFloat(dtype, T * Hkv * d),
    v: allocFloat(dtype, T * Hkv * d),
    qRaw: qk ? allocFloat(dtype, T * H * d) : null,
    kRaw: qk ? allocFloat(dtype, T * Hkv * d) : null,
    qRstd: qk ? allocFloat(dtype, T * H) : null,
    kRstd: qk ? allocFloat(dtype, T * Hkv) : null,
    attn: allocFloat(dtype, T * H * d),
    attnOut: post(T * D),
    attnOutRstd: post(T),
    mlpOut: post(T * D),
    mlpOutRstd: post(T),
    gate: allocFloat(dtype, T * F),
    up: allocFloat(dtype, T * F),
    hr: {
      q: loraBuf(dtype, p.q, T),
      k: loraBuf(dtype, p.k, T),
      v: loraBuf(dtype, p.v, T),
      o: loraBuf(dtype, p.o, T),
      gate: loraBuf(dtype, p.gate, T),
      up: loraBuf(dtype, p.up, T),
      down: loraBuf(dtype, p.down, T),
    },
    probs: probsSize > 0 ? allocFloat(dtype, probsSize) : null,
  };
}

function maxRank(params: ModelParams): number {
  let r = params.head.lora?.rank ?? 0;
  for (const l of params.layers) for (const lin of [l.q, l.k, l.v, l.o, l.gate, l.up, l.down]) r = Math.max(r, lin.lora?.rank ?? 0);
  return r;
}

export function allocScratch(dtype: Dtype, config: ModelConfig, params: ModelParams, seqStarts: Int32Array, training: boolean): Scratch {
  const { hiddenSize: D, intermediateSize: F, numHeads: H, numKvHeads: Hkv, headDim: d } = config;
  const T = seqStarts[seqStarts.length - 1];
  // Attention probabilities are kept for one sequence at a time (see attention.ts).
  let maxLen = 0;
  for (let s = 0; s + 1 < seqStarts.length; s++) maxLen = Math.max(maxLen, seqStarts[s + 1] - seqStarts[s]);
  const probsSize = H * maxLen * maxLen;
  const g = (n: number): FloatArray => allocFloat(dtype, training ? n : 0);
  const ones = allocFloat(dtype, T);
  ones.fill(1);
  const qk = training && config.qkNorm;
  return {
    xn: allocFloat(dtype, T * D),
    tmp: allocFloat(dtype, T * D),
    attn: allocFloat(dtype, T * H * d),
    act: allocFloat(dtype, T * F),
    probs: g(probsSize),
    ones,
    dres: g(T * D),
    dxn: g(T * D),
    dtmp: g(T * D),
    dattn: g(T * H * d),
    dq: g(T * H * d),
    dk: g(T * Hkv * d),
    dv: g(T * Hkv * d),
    dqRaw: qk ? allocFloat(dtype, T * H * d) : null,
    dkRaw: qk ? allocFloat(dtype, T * Hkv * d) : null,
    dact: g(T * F),
    dgate: g(T * F),
    dup: g(T * F),
    // LoRA backward scratch, also used for the head's chunks (never larger than T rows).
    dhr: allocFloat(dtype, T * Math.max(1, maxRank(params))),
  };
}

interface BatchShape {
  T: number;
  maxLen: number;
  /** Σ len² over the sequences. */
  sumSq: number;
}

function batchShape(seqStarts: Int32Array): BatchShape {
  let maxLen = 0;
  let sumSq = 0;
  for (let s = 0; s + 1 < seqStarts.length; s++) {
    const len = seqStarts[s + 1] - seqStarts[s];
    maxLen = Math.max(maxLen, len);
    sumSq += len * len;
  }
  return { T: seqStarts[seqStarts.length - 1], maxLen, sumSq };
}

export function allocActivations(dtype: Dtype, config: ModelConfig, params: ModelParams, seqStarts: Int32Array, training: boolean): BatchActivations {
  const { T, sumSq } = batchShape(seqStarts);
  const L = config.numLayers;
  const D = config.hiddenSize;
  const residual: FloatArray[] = [];
  const layers: LayerActivations[] = [];
  if (training) {
    const probsSize = config.numHeads * sumSq;
    const bytes = dtype === "float32" ? 4 : 8;
    const keepProbs = L * probsSize * bytes <= PROBS_BUDGET_BYTES;
    for (let l = 0; l <= L; l++) residual.push(allocFloat(dtype, T * D));
    for (let l = 0; l < L; l++) layers.push(allocLayer(dtype, config, params.layers[l], T, keepProbs ? probsSize : 0));
  } else {
    // Ping-pong the residual stream and share one layer's buffers (layer 0's LoRA ranks suffice:
    // every adapted projection of a model has the same rank).
    const a = allocFloat(dtype, T * D);
    const b = allocFloat(dtype, T * D);
    for (let l = 0; l <= L; l++) residual.push(l % 2 === 0 ? a : b);
    const shared = L > 0 ? allocLayer(dtype, config, params.layers[0], T, 0) : null;
    for (let l = 0; l < L; l++) layers.push(shared as LayerActivations);
  }
  return { T, residual, layers, scratch: allocScratch(dtype, config, params, seqStarts, training), head: null };
}

/**
 * The buffers of the last pass, handed out again while the batch shape (total tokens, longest
 * sequence, Σ len², training or not) repeats, as it does across the steps of a training run.
 * Every buffer is fully written before it is read, so reuse needs no clearing.
 */
export class ActivationArena {
  private key = "";
  private training = false;
  private acts: BatchActivations | null = null;

  get(dtype: Dtype, config: ModelConfig, params: ModelParams, seqStarts: Int32Array, training: boolean): BatchActivations {
    const { T, maxLen, sumSq } = batchShape(seqStarts);
    const key = `${T}:${maxLen}:${sumSq}`;
    // Training buffers also serve a forward-only pass of the same shape (RL alternates the two).
    if (this.acts === null || key !== this.key || (training && !this.training)) {
      this.acts = null; // lets the old buffers go before the new ones are allocated
      this.acts = allocActivations(dtype, config, params, seqStarts, training);
      this.key = key;
      this.training = training;
    }
    return this.acts;
  }

  /** Drops the buffers (they are reallocated by the next pass). */
  release(): void {
    this.acts = null;
    this.key = "";
  }
}
