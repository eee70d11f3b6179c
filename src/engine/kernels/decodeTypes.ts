// Kernels of the sampler's decode step, part of the `Kernels` contract (types.ts). Same layout
// conventions: row-major, callers pass every output buffer.
import { float32ToF16, HalfArray } from "./halfArray.ts";
import type { FloatArray, WeightArray } from "./types.ts";

/**
 * A sampler KV cache array: float32, or IEEE f16 bits (a HalfArray of dtype "f16") that kvStore
 * rounds to nearest even and the attention widens as it reads (docs/embedded-engine.md#the-kv-cache).
 */
export type KvArray = FloatArray | HalfArray;

/** The float values of a KV cache array (a widened copy for f16): what the reference kernels read. */
export function kvValues(a: KvArray): FloatArray {
  if (!(a instanceof HalfArray)) return a;
  if (a.dtype !== "f16") throw new TypeError(`a KV cache holds float32 or f16, not ${a.dtype}`);
  return a.widen();
}

export interface DecodeKernels {
  /**
   * C[M,N] = alpha * A[M,K] * W[N,K]^T + beta * C, for the few token rows of a decode step (any M
   * works). The native kernel streams W once without packing it, and sums each element in an
   * order that depends only on K, so a row's result does not depend on the other rows. W may be a
   * HalfArray (frozen 16-bit weights, widened as they are read: the bits of a widened copy).
   */
  gemmRowsNT(M: number, N: number, K: number, alpha: number, A: FloatArray, W: WeightArray, beta: number, C: FloatArray): void;

  /**
   * The same product for prompt-sized M (the sampler's prefill and prompt logprobs): the native
   * kernel packs A once per call and runs a 12-row register tile over W, widened and transposed as
   * it is packed; each element's summation order depends only on K, so a row's bits do not depend
   * on M, the other rows or the thread count (they may differ from gemmRowsNT's and gemm's).
   */
  gemmPrefillNT(M: number, N: number, K: number, alpha: number, A: FloatArray, W: WeightArray, beta: number, C: FloatArray): void;

  /**
   * Writes row i of k and v ([n, nKvHeads*headDim], K after RoPE) at position positions[i] of
   * cache slot cacheSlots[i]; kCache and vCache are [numSlots, nKvHeads, maxLen, headDim], float32
   * or f16 (rounded to nearest even).
   */
  kvStore(
    k: FloatArray,
    v: FloatArray,
    kCache: KvArray,
    vCache: KvArray,
    cacheSlots: Int32Array,
    positions: Int32Array,
    n: number,
    nKvHeads: number,
    headDim: number,
    maxLen: number,
  ): void;

  /**
   * One token per row of logits [rows, vocab] without truncation (top_k and top_p off): the argmax
   * at temperature 0, else the first token whose cumulative softmax(z / T) weight exceeds
   * uniforms[r] of the total. logprobs[r] = log_softmax(z / T)[token] (raw at temperature 0).
   * Optional: without it the sampler draws with choose.ts, which defines these semantics.
   */
  /**
   * MXFP4 groups to bf16 bits (kernels/mxfp4.ts): for each of `groups` 32-value groups, scale byte
   * scales[g] and 16 code bytes blocks[16g..] give out[32g..32g+32). Optional: mxfp4.ts has the
   * same in TypeScript.
   */
  mxfp4ToBf16?(blocks: Uint8Array, scales: Uint8Array, groups: number, out: Uint16Array): void;

  sampleRows?(
    logits: Float32Array,
    rows: number,
    vocab: number,
    temperatures: Float32Array,
    uniforms: Float64Array,
    tokens: Int32Array,
    logprobs: Float64Array,
  ): void;

  /**
   * Memory for KV caches: a zeroed ArrayBuffer of `bytes` on pages of its own (page-aligned, so
   * positions never written cost nothing), and giving the whole pages inside a view back to the OS
   * at once (they read as zeros afterwards), so that a finished request's cache stops counting
   * before the garbage collector frees it. Optional (both or neither): plain ArrayBuffers otherwise.
   */
  allocPages?(bytes: number): ArrayBuffer;
  releasePages?(view: ArrayBufferView): void;
}

/** The reference decode kernels, in terms of the reference gemm. */
export function referenceDecodeKernels(
  gemm: (transA: boolean, transB: boolean, M: number, N: number, K: number, alpha: number, A: FloatArray, B: WeightArray, beta: number, C: FloatArray) => void,
): DecodeKernels {
  return {
    gemmRowsNT: (M, N, K, alpha, A, W, beta, C) => gemm(false, true, M, N, K, alpha, A, W, beta, C),
    gemmPrefillNT: (M, N, K, alpha, A, W, beta, C) => gemm(false, true, M, N, K, alpha, A, W, beta, C),
    kvStore(k, v, kCache, vCache, cacheSlots, positions, n, nKvHeads, headDim, maxLen) {
      const kw = nKvHeads * headDim;
      const slots = Math.floor(Math.min(kCache.length, vCache.length) / (kw * maxLen));
      for (let i = 0; i < n; i++) {
        if (cacheSlots[i] < 0 || cacheSlots[i] >= slots) throw new RangeError(`kvStore: cacheSlots[${i}] = ${cacheSlots[i]} is outside 0..${slots - 1}`);
        if (positions[i] < 0 || positions[i] >= maxLen) throw new RangeError(`kvStore: positions[${i}] = ${positions[i]} is outside 0..${maxLen - 1}`);
        for (let g = 0; g < nKvHeads; g++) {
          const dst = ((cacheSlots[i] * nKvHeads + g) * maxLen + positions[i]) * headDim;
          const src = i * kw + g * headDim;
          for (const [from, to] of [
            [k, kCache],
            [v, vCache],
          ] as const) {
            if (to instanceof HalfArray) {
              if (to.dtype !== "f16") throw new TypeError(`kvStore: a KV cache holds float32 or f16, not ${to.dtype}`);
              to.bits.set(float32ToF16(Float32Array.from(from.subarray(src, src + headDim))), dst);
            } else {
              for (let j = 0; j < headDim; j++) to[dst + j] = from[src + j];
            }
          }
        }
      }
    },
  };
}
