// The contract between the engine's model code and its compute kernels. Two implementations:
// `reference.ts` (plain TypeScript, works on Float32Array and Float64Array so gradient checks can
// run in float64) and `native.ts` (C++ through Node-API, Float32Array only, falls back to the
// reference when the addon is missing).
//
// Layout conventions (all row-major):
// - Token activations of a batch of variable-length sequences are packed without padding:
//   [totalTokens, width]. `seqStarts` (Int32Array, length numSeqs + 1, seqStarts[0] = 0,
//   last = totalTokens) marks where each sequence begins, like flash-attention's cu_seqlens.
// - q is [totalTokens, nHeads * headDim]; k and v are [totalTokens, nKvHeads * headDim]
//   (grouped-query attention: query head h reads kv head floor(h / (nHeads / nKvHeads))).
// - Kernels never allocate their outputs; callers pass every buffer. "Accumulate" means +=.

import type { DecodeKernels } from "./decodeTypes.ts";
import type { KvArray } from "./decodeTypes.ts";
import type { WeightArray } from "./halfArray.ts";

export type FloatArray = Float32Array | Float64Array;
export type { WeightArray } from "./halfArray.ts";

export interface Kernels extends DecodeKernels {
  readonly name: "native" | "reference";
  /** Which matrix-product path is in use: "openblas", "packed" (own C++ kernel) or "typescript". */
  readonly gemmBackend: string;

  /**
   * C[M,N] = alpha * op(A) * op(B) + beta * C.
   * op(A) is [M,K]: A is stored [M,K], or [K,M] when transA. op(B) is [K,N]: B is stored [K,N],
   * or [N,K] when transB. beta = 0 overwrites C (even if C held NaN).
   * B may be a HalfArray (frozen 16-bit weights): the result is that of its widened values.
   */
  gemm(transA: boolean, transB: boolean, M: number, N: number, K: number, alpha: number, A: FloatArray, B: WeightArray, beta: number, C: FloatArray): void;

  /** out[r,:] = x[r,:] * rstd[r] * weight; rstd[r] = 1/sqrt(mean(x[r,:]^2) + eps) is saved. */
  rmsnormForward(x: FloatArray, weight: FloatArray, out: FloatArray, rstd: FloatArray, rows: number, dim: number, eps: number): void;
  /** dx = (overwrite) gradient wrt x; dweight += gradient wrt weight (pass null to skip). */
  rmsnormBackward(
    dout: FloatArray,
    x: FloatArray,
    weight: FloatArray,
    rstd: FloatArray,
    dx: FloatArray,
    dweight: FloatArray | null,
    rows: number,
    dim: number,
  ): void;

  /**
   * In-place rotary embedding, HF rotate_half layout, on x [tokens, nHeads * headDim]:
   * for each head, pairs (i, i + headDim/2) rotate by angle positions[t] * invFreq[i].
   * `invFreq` has headDim/2 entries (already including any llama3 rope scaling).
   * The angle positions[t] * invFreq[i] is rounded to fp32 (as torch computes it) in every
   * implementation, also for Float64Array x; cos/sin of it are then taken in full precision.
   * inverse = true applies the transposed rotation (the backward pass of the forward rotation).
   */
  rope(x: FloatArray, positions: Int32Array, invFreq: FloatArray, tokens: number, nHeads: number, headDim: number, inverse: boolean): void;

  /**
   * Causal attention per sequence. out [tokens, nHeads*headDim]. probs, if given, receives the
   * softmax probabilities for the backward pass, laid out per sequence s and head h as a
   * [len_s, len_s] block starting at probsOffset(s, h) = nHeads * sum_{s'<s} len_{s'}^2 + h * len_s^2.
   * window > 0 (sliding-window layers): query i sees only keys j with i - window < j <= i; the
   * probabilities of the others are 0 (so attentionBackward needs no window of its own).
   * sinks [nHeads] (GPT-OSS), when given: head h's softmax denominator also holds exp(sinks[h])
   * (a logit no value goes with), so a row's probabilities sum to less than 1.
   */
  attentionForward(
    q: FloatArray,
    k: FloatArray,
    v: FloatArray,
    out: FloatArray,
    probs: FloatArray | null,
    seqStarts: Int32Array,
    nHeads: number,
    nKvHeads: number,
    headDim: number,
    scale: number,
    window?: number,
    sinks?: FloatArray | null,
  ): void;
  /**
   * Gradients wrt q, k, v (overwritten) from dout and the saved probs (zero outside a window). With
   * attention sinks the formula is unchanged (the sink has no value); dsinks [nHeads], when given,
   * accumulates their gradient, −Σ_rows p_sink·Σ_j P·dP with p_sink = 1 − Σ_j P.
   */
  attentionBackward(
    dout: FloatArray,
    q: FloatArray,
    k: FloatArray,
    v: FloatArray,
    probs: FloatArray,
    dq: FloatArray,
    dk: FloatArray,
    dv: FloatArray,
    seqStarts: Int32Array,
    nHeads: number,
    nKvHeads: number,
    headDim: number,
    scale: number,
    dsinks?: FloatArray | null,
  ): void;

  /** out = silu(gate) * up, elementwise over n. */
  swigluForward(gate: FloatArray, up: FloatArray, out: FloatArray, n: number): void;
  /** dgate, dup (overwritten) from dout. */
  swigluBackward(dout: FloatArray, gate: FloatArray, up: FloatArray, dgate: FloatArray, dup: FloatArray, n: number): void;
  /** out = gelu_tanh(gate) * up, elementwise over n (Gemma's gelu_pytorch_tanh MLP). */
  gegluForward(gate: FloatArray, up: FloatArray, out: FloatArray, n: number): void;
  /** dgate, dup (overwritten) from dout. */
  gegluBackward(dout: FloatArray, gate: FloatArray, up: FloatArray, dgate: FloatArray, dup: FloatArray, n: number): void;

  /**
   * Row-wise log-softmax statistics for logits [rows, vocab]: logsumexp[r] (saved), and the
   * log-probability of targets[r] in logprobs[r]. Targets < 0 give logprob 0.
   */
  logprobsForward(logits: FloatArray, targets: Int32Array, logprobs: FloatArray, logsumexp: FloatArray, rows: number, vocab: number): void;
  /**
   * dlogits (overwritten) = dlogprobs[r] * (onehot(targets[r]) - softmax(logits[r])).
   * The loss functions turn per-token loss gradients into dlogprobs first.
   * Rows with targets[r] < 0 get dlogits = 0 (their logprob is the constant 0).
   * dlogits may be the logits array itself (the gradient then overwrites the logits in place).
   */
  logprobsBackward(
    dlogprobs: FloatArray,
    logits: FloatArray,
    targets: Int32Array,
    logsumexp: FloatArray,
    dlogits: FloatArray,
    rows: number,
    vocab: number,
  ): void;

  /**
   * One AdamW step, torch semantics, on n parameters: p *= (1 - lr*wd); m, v moments;
   * p -= lr * mhat / (sqrt(vhat) + eps) with bias corrections for step t (1-based).
   * gradScale multiplies grad first (used for global-norm clipping).
   */
  adamw(
    param: FloatArray,
    grad: FloatArray,
    m: FloatArray,
    v: FloatArray,
    n: number,
    lr: number,
    beta1: number,
    beta2: number,
    eps: number,
    weightDecay: number,
    step: number,
    gradScale: number,
  ): void;

  /** y += alpha * x over n. */
  axpy(n: number, alpha: number, x: FloatArray, y: FloatArray): void;
  /** Sum of squares of x over n, in float64. */
  sumSquares(x: FloatArray, n: number): number;

  // ---- Added after the first version of the contract (additive only). ----

  /** out = a + b over n (residual connections). out may be the same array as a or b. */
  add(a: FloatArray, b: FloatArray, out: FloatArray, n: number): void;

  /**
   * Token embedding gather: out[i,:] = table[ids[i],:] for i < n; table is [rows, dim].
   * Throws when an id is outside 0..rows-1 (rows = table.length / dim). The table may be a HalfArray.
   */
  embeddingForward(table: WeightArray, ids: Int32Array, out: FloatArray, n: number, dim: number): void;
  /** Scatter-add: dtable[ids[i],:] += dout[i,:] (accumulates; repeated ids add up). */
  embeddingBackward(dout: FloatArray, ids: Int32Array, dtable: FloatArray, n: number, dim: number): void;

  /**
   * One decode step of attention over a KV cache (sampling). n independent sequences, one query
   * token each: q and out are [n, nHeads*headDim]. kCache and vCache are [n, nKvHeads, maxLen, headDim]
   * (K after RoPE); query b attends to cache slots 0..cacheLens[b]-1, which already include the
   * current token, so no mask is needed. GQA mapping as in attentionForward. window > 0 reads only
   * the last `window` of them (sliding-window layers). sinks as in attentionForward.
   */
  attentionDecode(
    q: FloatArray,
    kCache: FloatArray,
    vCache: FloatArray,
    out: FloatArray,
    cacheLens: Int32Array,
    n: number,
    nHeads: number,
    nKvHeads: number,
    headDim: number,
    maxLen: number,
    scale: number,
    window?: number,
    sinks?: FloatArray | null,
  ): void;
  /**
   * attentionDecode for several query tokens in one call, each reading a chosen cache slot:
   * query i attends to slots 0..cacheLens[i]-1 of cache slot cacheSlots[i]; kCache/vCache are
   * [numSlots, nKvHeads, maxLen, headDim] with numSlots = kCache.length / (nKvHeads*maxLen*headDim).
   * Several queries may read the same slot (a prompt chunk: cacheLens = position + 1 each).
   * The caches may be f16 (KvArray): their values are widened as they are read.
   * prefixSlots/prefixLens (both or neither): query i reads positions 0..prefixLens[i]-1 from slot
   * prefixSlots[i] instead of its own (the prompt the samples of a request share, cached once),
   * with the same results as if those positions had been copied into its slot.
   */
  attentionDecodeSlots(
    q: FloatArray,
    kCache: KvArray,
    vCache: KvArray,
    out: FloatArray,
    cacheSlots: Int32Array,
    cacheLens: Int32Array,
    n: number,
    nHeads: number,
    nKvHeads: number,
    headDim: number,
    maxLen: number,
    scale: number,
    window?: number,
    sinks?: FloatArray | null,
    prefixSlots?: Int32Array | null,
    prefixLens?: Int32Array | null,
  ): void;
}
