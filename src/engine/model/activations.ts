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
import { checkpointCount, CHECKPOINT_TOKENS, linearDims, type LinearAttnActivations, type LinearAttnScratch } from "./deltanet.ts";
import { expertGateWidth, expertRank as moeExpertRank } from "./moe.ts";
import { layerLinears, type LayerParams, type ModelParams } from "./params.ts";
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
  /** Qwen3.5: the output gate's pre-activations (q_proj's second half per head), [T, H*d]. */
  qGate: FloatArray | null;
  /** Attention output before o_proj (and before the output gate), [T, H*d]. */
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
  /** Mixture-of-experts models: the sparse block's routing and expert activations (unused by dense layers). */
  moe: MoeActivations | null;
  /** Linear-attention layers (Qwen3.5): the Gated DeltaNet's activations. */
  linear: LinearAttnActivations | null;
}

/**
 * What a mixture-of-experts block keeps for its backward pass (moe.ts). Each token's k choices are
 * "assignments" a = t·K + k; the experts' rows are the assignments grouped by expert, in token order.
 */
export interface MoeActivations {
  /** Router softmax probabilities, [T, E]. */
  probs: FloatArray;
  /** Chosen expert of each assignment, [T·K], and its weight in the block's output. */
  chosen: Int32Array;
  weights: FloatArray;
  /** The assignment of each grouped row, [T·K]; expert e owns rows [offsets[e], offsets[e+1]). */
  order: Int32Array;
  offsets: Int32Array;
  /** Per grouped row: gate and up pre-activations [T·K, Fe] (GPT-OSS: gate holds gate_up, [T·K, 2·Fe]), and the expert's output [T·K, D]. */
  gate: FloatArray;
  up: FloatArray;
  y: FloatArray;
  /** LoRA x·Aᵀ of the experts' projections per grouped row, [T·K, rank] (null without expert adapters). */
  hrGate: FloatArray | null;
  hrUp: FloatArray | null;
  hrDown: FloatArray | null;
}

/** A mixture-of-experts block's temporaries, shared by all layers (the gradient ones empty when not training). */
export interface MoeScratch {
  /** The block's input gathered per grouped row, [T·K, D]. */
  xg: FloatArray;
  /** SwiGLU outputs per grouped row, [T·K, Fe]. */
  act: FloatArray;
  /** Router logits [T, E]; in the backward pass their gradient. */
  logits: FloatArray;
  dy: FloatArray;
  dxg: FloatArray;
  dact: FloatArray;
  dgate: FloatArray;
  dup: FloatArray;
  /** Gradient wrt each assignment's weight, [T·K]. */
  dw: FloatArray;
  /** The shared-outer expert adapter (expertLora.ts), training: gradients wrt x·Aᵀ per grouped row, [T·K, rank]. */
  dhrGate: FloatArray | null;
  dhrUp: FloatArray | null;
  dhrDown: FloatArray | null;
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
  moe: MoeScratch | null;
  /** Gated attention (Qwen3.5): q_proj's full output [T, H·2d] (in the backward pass its gradient), the gated attention [T, H·d] and the gate's gradient. */
  qFull: FloatArray | null;
  gated: FloatArray | null;
  dqGate: FloatArray | null;
  linear: LinearAttnScratch | null;
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

function loraBuf(dtype: Dtype, lin: Linear | null, T: number): FloatArray | null {
  return lin === null || lin.lora === null ? null : allocFloat(dtype, T * lin.lora.rank);
}

/** The rank of the experts' shared-outer adapter (0 when they have none). */
function expertRank(params: ModelParams): number {
  for (const l of params.layers) if (l.moe !== null) return moeExpertRank(l.moe);
  return 0;
}

function allocMoe(dtype: Dtype, config: ModelConfig, T: number, rank: number): MoeActivations | null {
  const moe = config.moe;
  if (moe === undefined || !moe.sparseLayers.includes(true)) return null;
  const A = T * moe.topK;
  const hr = (): FloatArray | null => (rank > 0 ? allocFloat(dtype, A * rank) : null);
  return {
    probs: allocFloat(dtype, T * moe.numExperts),
    chosen: new Int32Array(A),
    weights: allocFloat(dtype, A),
    order: new Int32Array(A),
    offsets: new Int32Array(moe.numExperts + 1),
    gate: allocFloat(dtype, A * expertGateWidth(moe)),
    // GPT-OSS's fused gate_up rows live in gate.
    up: allocFloat(dtype, moe.gptOss !== undefined ? 0 : A * moe.expertIntermediateSize),
    y: allocFloat(dtype, A * config.hiddenSize),
    hrGate: hr(),
    hrUp: hr(),
    hrDown: hr(),
  };
}

function allocMoeScratch(dtype: Dtype, config: ModelConfig, T: number, training: boolean, sharedRank: number): MoeScratch | null {
  const moe = config.moe;
  if (moe === undefined || !moe.sparseLayers.includes(true)) return null;
  const A = T * moe.topK;
  const D = config.hiddenSize;
  const Fe = moe.expertIntermediateSize;
  const g = (n: number): FloatArray => allocFloat(dtype, training ? n : 0);
  const shared = (): FloatArray | null => (training && sharedRank > 0 ? allocFloat(dtype, A * sharedRank) : null);
  return {
    xg: allocFloat(dtype, A * D),
    act: allocFloat(dtype, A * Fe),
    logits: allocFloat(dtype, T * moe.numExperts),
    dy: g(A * D),
    dxg: g(A * D),
    dact: g(A * Fe),
    dgate: g(A * expertGateWidth(moe)),
    dup: g(moe.gptOss !== undefined ? 0 : A * Fe),
    dw: g(A),
    dhrGate: shared(),
    dhrUp: shared(),
    dhrDown: shared(),
  };
}

/** `sparse`: the buffers will serve a mixture-of-experts layer (with adapters of rank `expertLoraRank`). */
function allocLayer(
  dtype: Dtype,
  config: ModelConfig,
  p: LayerParams,
  seqStarts: Int32Array,
  training: boolean,
  probsSize: number,
  sparse: boolean,
  expertLoraRank: number,
): LayerActivations {
  const T = seqStarts[seqStarts.length - 1];
  const { hiddenSize: D, intermediateSize: F, numHeads: H, numKvHeads: Hkv, headDim: d } = config;
  // A linear-attention layer has no q/k/v (a shared forward-only template has both kinds).
  const attn = p.q !== null;
  const Ta = attn ? T : 0;
  const qk = config.qkNorm && attn;
  const post = (n: number): FloatArray | null => (p.attnOutNorm !== null || p.mlpOutNorm !== null ? allocFloat(dtype, n) : null);
  return {
    h: allocFloat(dtype, T * D),
    rstd1: allocFloat(dtype, T),
    rstd2: allocFloat(dtype, T),
    q: allocFloat(dtype, Ta * H * d),
    k: allocFloat(dtype, Ta * Hkv * d),
    v: allocFloat(dtype, Ta * Hkv * d),
    qRaw: qk ? allocFloat(dtype, T * H * d) : null,
    kRaw: qk ? allocFloat(dtype, T * Hkv * d) : null,
    qRstd: qk ? allocFloat(dtype, T * H) : null,
    kRstd: qk ? allocFloat(dtype, T * Hkv) : null,
    qGate: attn && config.attnOutputGate === true ? allocFloat(dtype, T * H * d) : null,
    attn: allocFloat(dtype, Ta * H * d),
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
    probs: probsSize > 0 && attn ? allocFloat(dtype, probsSize) : null,
    moe: sparse ? allocMoe(dtype, config, T, expertLoraRank) : null,
    linear: p.linear !== null ? allocLinear(dtype, config, p, seqStarts, training) : null,
  };
}

/** A linear-attention layer's buffers; the state checkpoints only when training. */
function allocLinear(dtype: Dtype, config: ModelConfig, p: LayerParams, seqStarts: Int32Array, training: boolean): LinearAttnActivations {
  const lin = config.linearAttention;
  const la = p.linear;
  if (lin === undefined || la === null) throw new Error("allocLinear: not a linear-attention layer");
  const { Hk, Hv, dk, dv, Kd, Vd, C } = linearDims(lin);
  const T = seqStarts[seqStarts.length - 1];
  const f = (n: number): FloatArray => allocFloat(dtype, n);
  return {
    mixed: f(T * C),
    conv: f(T * C),
    act: f(T * C),
    qn: f(T * Kd),
    kn: f(T * Kd),
    qr: f(T * Hk),
    kr: f(T * Hk),
    z: f(T * Vd),
    b: f(T * Hv),
    a: f(T * Hv),
    beta: f(T * Hv),
    g: f(T * Hv),
    o: f(T * Vd),
    normed: f(T * Vd),
    rstd: f(T * Hv),
    y: f(T * Vd),
    states: f(training ? checkpointCount(seqStarts) * Hv * dk * dv : 0),
    hr: {
      qkv: loraBuf(dtype, la.inProjQkv, T),
      z: loraBuf(dtype, la.inProjZ, T),
      b: loraBuf(dtype, la.inProjB, T),
      a: loraBuf(dtype, la.inProjA, T),
      out: loraBuf(dtype, la.outProj, T),
    },
  };
}

function allocLinearScratch(dtype: Dtype, config: ModelConfig, T: number, training: boolean): LinearAttnScratch | null {
  const lin = config.linearAttention;
  if (lin === undefined || !lin.layers.includes(true)) return null;
  const { Hv, dk, dv, Kd, Vd, C } = linearDims(lin);
  const g = (n: number): FloatArray => allocFloat(dtype, training ? n : 0);
  const n = dk * dv;
  return {
    dy: g(T * Vd),
    dnormed: g(T * Vd),
    dz: g(T * Vd),
    do: g(T * Vd),
    dact: g(T * C),
    dmixed: g(T * C),
    dqn: g(T * Kd),
    dkn: g(T * Kd),
    dbeta: g(T * Hv),
    dg: g(T * Hv),
    chunk: g((CHECKPOINT_TOKENS + 1) * n),
    dS: allocFloat(dtype, n),
    vec: allocFloat(dtype, Math.max(dk, dv)),
    vec2: allocFloat(dtype, Math.max(dk, dv)),
  };
}

function maxRank(params: ModelParams): number {
  let r = params.head.lora?.rank ?? 0;
  for (const l of params.layers) for (const lin of layerLinears(l)) r = Math.max(r, lin.lora?.rank ?? 0);
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
  const gated = config.attnOutputGate === true;
  const gt = (n: number): FloatArray | null => (gated ? allocFloat(dtype, n) : null);
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
    moe: allocMoeScratch(dtype, config, T, training, expertRank(params)),
    qFull: gt(T * 2 * H * d),
    gated: gt(T * H * d),
    dqGate: gt(training ? T * H * d : 0),
    linear: allocLinearScratch(dtype, config, T, training),
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
    for (let l = 0; l < L; l++)
      layers.push(allocLayer(dtype, config, params.layers[l], seqStarts, true, keepProbs ? probsSize : 0, params.layers[l].moe !== null, expertRank(params)));
  } else {
    // Ping-pong the residual stream and share one layer's buffers (layer 0's LoRA ranks suffice:
    // every adapted projection of a model has the same rank; the dense MLP's, the attention's and
    // the linear attention's come from the first layer that has one, as a mixture-of-experts or
    // hybrid model's layer 0 may not).
    const a = allocFloat(dtype, T * D);
    const b = allocFloat(dtype, T * D);
    for (let l = 0; l <= L; l++) residual.push(l % 2 === 0 ? a : b);
    let shared: LayerActivations | null = null;
    if (L > 0) {
      const dense = params.layers.find((p) => p.gate !== null) ?? params.layers[0];
      const full = params.layers.find((p) => p.q !== null) ?? params.layers[0];
      const linear = params.layers.find((p) => p.linear !== null) ?? params.layers[0];
      const template = {
        ...params.layers[0],
        gate: dense.gate,
        up: dense.up,
        down: dense.down,
        q: full.q,
        k: full.k,
        v: full.v,
        o: full.o,
        linear: linear.linear,
      };
      shared = allocLayer(dtype, config, template, seqStarts, false, 0, true, expertRank(params));
    }
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
