// Loads the C++ kernels (build/Release/cookbook_kernels.node, built by node-gyp at `npm install`)
// and presents them as `Kernels`. Float32Array only: the addon throws a TypeError on anything else.

import { PROJECT_ROOT } from "../../projectRoot.ts";
import { createRequire } from "node:module";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { DecodeKernels, KvArray } from "./decodeTypes.ts";
import { addonBuildId, explicitBlocks, type GemmBackendName, type GemmBlocks, type GemmChoice, TUNE_MIN_VOLUME, tuneGemm } from "./gemmTune.ts";
import { HALF_CODES, HalfArray } from "./halfArray.ts";
import { referenceKernels } from "./reference.ts";
import type { FloatArray, Kernels } from "./types.ts";

/** The arguments after the four arrays (kvStore) or the three (attentionDecodeSlots), as in the contract. */
type KvStoreRest = Parameters<DecodeKernels["kvStore"]> extends [unknown, unknown, unknown, unknown, ...infer R] ? R : never;
type AttentionSlotsRest = Parameters<Kernels["attentionDecodeSlots"]> extends [unknown, unknown, unknown, ...infer R] ? R : never;

/** The f16 bits of a KV cache array, or null for float32 (other 16-bit types are refused). */
function f16Bits(a: KvArray): Uint16Array | null {
  if (!(a instanceof HalfArray)) return null;
  if (a.dtype !== "f16") throw new TypeError(`a KV cache holds float32 or f16, not ${a.dtype}`);
  return a.bits;
}

/** The sampler's and the loader's native functions (src/engine/kernels/native/addon_decode.cc). */
interface DecodeAddon {
  gemmRowsNT(M: number, N: number, K: number, alpha: number, A: FloatArray, W: FloatArray, beta: number, C: FloatArray): void;
  kvStore(k: FloatArray, v: FloatArray, kCache: FloatArray, vCache: FloatArray, ...rest: KvStoreRest): void;
  /** kvStore into caches of f16 bits (rounded to nearest even). */
  kvStoreF16(k: FloatArray, v: FloatArray, kCache: Uint16Array, vCache: Uint16Array, ...rest: KvStoreRest): void;
  sampleRows: NonNullable<DecodeKernels["sampleRows"]>;
  /** Sum of x[0..n) on every pool thread: reads memory as fast as the machine allows. */
  readBandwidthProbe(x: Float32Array, n: number): number;
  /**
   * Maps `file` and converts tensor i (dtype code 0 F32, 1 BF16, 2 F16, 3 F64, starting at byte
   * offsets[i] of the file) to float32 into dsts[i], all of its length.
   */
  widenFromFile(file: string, offsets: Float64Array, dtypes: Int32Array, dsts: Float32Array[]): void;
  /** gemmRowsNT with W as 16-bit bits of type code `type` (HALF_CODES). */
  gemmRowsNTHalf(M: number, N: number, K: number, alpha: number, A: FloatArray, W: Uint16Array, type: number, beta: number, C: FloatArray): void;
  gemmPrefillNT(M: number, N: number, K: number, alpha: number, A: FloatArray, W: FloatArray, beta: number, C: FloatArray): void;
  /** gemmPrefillNT with W as 16-bit bits of type code `type` (HALF_CODES). */
  gemmPrefillNTHalf(M: number, N: number, K: number, alpha: number, A: FloatArray, W: Uint16Array, type: number, beta: number, C: FloatArray): void;
  /**
   * A read-only memory mapping of the whole file as an ArrayBuffer (no copy); it is unmapped when
   * the ArrayBuffer is garbage-collected. Writing into a view of it crashes the process.
   */
  mapFile(file: string): ArrayBuffer;
  /** Bytes [offset, offset + length) only; offset a multiple of the page size, length at most 4 GiB. */
  mapFile(file: string, offset: number, length: number): ArrayBuffer;
  allocPages: NonNullable<DecodeKernels["allocPages"]>;
  /** Returns the bytes given back. */
  releasePages(view: ArrayBufferView): number;
}

/** What the addon exports (see src/engine/kernels/native/addon.cc). */
interface NativeAddon extends DecodeAddon {
  /** The GEMM path in use now ("openblas" only when the build linked OpenBLAS). */
  gemmBackend(): GemmBackendName;
  /** Backends this build can use; "packed" is always there. */
  gemmBackends(): GemmBackendName[];
  /** Force a backend (tests and benchmarks); throws for one the build lacks. */
  setGemmBackend(name: GemmBackendName): void;
  gemmBlocks(): GemmBlocks;
  /** Throws a RangeError for sizes the packed kernel cannot use (see GemmBlocks). */
  setGemmBlocks(kc: number, nc: number, packA?: boolean): void;
  /** Threads used by the addon's own kernels and by OpenBLAS. */
  numThreads(): number;
  setNumThreads(n: number): void;
  gemm(transA: boolean, transB: boolean, M: number, N: number, K: number, alpha: number, A: FloatArray, B: FloatArray, beta: number, C: FloatArray): void;
  gemmHalf(
    transA: boolean,
    transB: boolean,
    M: number,
    N: number,
    K: number,
    alpha: number,
    A: FloatArray,
    B: Uint16Array,
    type: number,
    beta: number,
    C: FloatArray,
  ): void;
  bf16ToFloat32(src: Uint16Array, dst: Float32Array, n: number): void;
  /** Absent in addons built before it. */
  mxfp4ToBf16?(blocks: Uint8Array, scales: Uint8Array, groups: number, out: Uint16Array): void;
  rmsnormForward: Kernels["rmsnormForward"];
  rmsnormBackward: Kernels["rmsnormBackward"];
  rope: Kernels["rope"];
  attentionForward: Kernels["attentionForward"];
  attentionBackward: Kernels["attentionBackward"];
  attentionDecode: Kernels["attentionDecode"];
  attentionDecodeSlots(q: FloatArray, kCache: FloatArray, vCache: FloatArray, ...rest: AttentionSlotsRest): void;
  attentionDecodeSlotsF16(q: FloatArray, kCache: Uint16Array, vCache: Uint16Array, ...rest: AttentionSlotsRest): void;
  swigluForward: Kernels["swigluForward"];
  swigluBackward: Kernels["swigluBackward"];
  gegluForward: Kernels["gegluForward"];
  gegluBackward: Kernels["gegluBackward"];
  logprobsForward: Kernels["logprobsForward"];
  logprobsBackward: Kernels["logprobsBackward"];
  adamw: Kernels["adamw"];
  axpy: Kernels["axpy"];
  sumSquares: Kernels["sumSquares"];
  add: Kernels["add"];
  embeddingForward(table: FloatArray, ids: Int32Array, out: FloatArray, n: number, dim: number): void;
  embeddingForwardHalf(table: Uint16Array, type: number, ids: Int32Array, out: FloatArray, n: number, dim: number): void;
  embeddingBackward: Kernels["embeddingBackward"];
}

export interface NativeKernels extends Kernels, Pick<DecodeAddon, "readBandwidthProbe" | "widenFromFile" | "mapFile"> {
  allocPages(bytes: number): ArrayBuffer;
  /** Returns the bytes given back (decodeTypes.ts). */
  releasePages(view: ArrayBufferView): number;
  /** Widens n bf16 values into dst (the loader's hot loop; reference: safetensors/dtypes.ts). */
  bf16ToFloat32(src: Uint16Array, dst: Float32Array, n: number): void;
  readonly name: "native";
  readonly gemmBackend: GemmBackendName;
  /** Backends this build can use; "openblas" only when OpenBLAS was found at build time. */
  readonly gemmBackends: readonly GemmBackendName[];
  setGemmBackend(name: GemmBackendName): void;
  readonly gemmBlocks: GemmBlocks;
  setGemmBlocks(kc: number, nc: number, packA?: boolean): void;
  /**
   * The per-CPU GEMM choice (gemmTune.ts): made at the first product of M·N·K ≥ TUNE_MIN_VOLUME,
   * or now when called; null once setGemmBackend/setGemmBlocks chose by hand or before any big product.
   */
  tuneGemm(): { choice: GemmChoice; source: "defaults" | "cache" | "measured" | "fixed" } | null;
  readonly numThreads: number;
  setNumThreads(n: number): void;
}

export const nativeAddonPath = resolve(PROJECT_ROOT, "build/Release/cookbook_kernels.node");

let cached: NativeKernels | null = null;

/** Loads the addon once. Throws an Error saying why when it is missing or does not load. */
export function loadNativeKernels(): NativeKernels {
  if (cached !== null) return cached;
  if (!existsSync(nativeAddonPath)) {
    throw new Error(
      `${nativeAddonPath} does not exist (the native build did not run or failed; run \`npm rebuild\` or \`npm install\` with g++, make and python3 installed)`,
    );
  }
  let addon: NativeAddon;
  try {
    addon = createRequire(import.meta.url)(nativeAddonPath) as NativeAddon;
  } catch (err) {
    throw new Error(`${nativeAddonPath} failed to load: ${err instanceof Error ? err.message : String(err)}`);
  }
  const blocks = explicitBlocks(process.env, addon.gemmBlocks());
  if (blocks !== null) {
    try {
      addon.setGemmBlocks(blocks.kc, blocks.nc, blocks.packA);
    } catch (err) {
      throw new RangeError(`COOKBOOK_GEMM_KC / COOKBOOK_GEMM_NC: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  // Tuned lazily, at the first big product: most processes (tests, tools, decoding only) never need it.
  let tuned: ReturnType<NativeKernels["tuneGemm"]> = null;
  let tunePending = true;
  const tune = (): void => {
    tunePending = false;
    const buildId = addonBuildId(nativeAddonPath, () => {
      const st = statSync(nativeAddonPath);
      return `${st.size}:${st.mtimeMs}`;
    });
    tuned = tuneGemm(kernels, { buildId });
  };
  const kernels: NativeKernels = {
    name: "native",
    get gemmBackend(): GemmBackendName {
      return addon.gemmBackend();
    },
    gemmBackends: Object.freeze(addon.gemmBackends()),
    // A choice made by hand (tests, benchmarks) is kept: no tuning afterwards.
    setGemmBackend: (name: GemmBackendName) => {
      tunePending = false;
      addon.setGemmBackend(name);
    },
    get gemmBlocks(): GemmBlocks {
      return addon.gemmBlocks();
    },
    setGemmBlocks: (kc: number, nc: number, packA = false) => {
      tunePending = false;
      addon.setGemmBlocks(kc, nc, packA);
    },
    tuneGemm: () => {
      if (tunePending) tune();
      return tuned;
    },
    get numThreads(): number {
      return addon.numThreads();
    },
    setNumThreads: (n: number) => addon.setNumThreads(n),
    // 16-bit weights (HalfArray) go to the *Half kernels, which widen them as they read them.
    gemm: (tA, tB, M, N, K, alpha, A, B, beta, C) => {
      if (tunePending && M * N * K >= TUNE_MIN_VOLUME) tune();
      if (B instanceof HalfArray) addon.gemmHalf(tA, tB, M, N, K, alpha, A, B.bits, HALF_CODES[B.dtype], beta, C);
      else addon.gemm(tA, tB, M, N, K, alpha, A, B, beta, C);
    },
    rmsnormForward: addon.rmsnormForward,
    rmsnormBackward: addon.rmsnormBackward,
    rope: addon.rope,
    // Attention sinks (GPT-OSS) have no C++ kernel yet: those calls run the TypeScript reference
    // (docs/numerics.md#gpt-oss). The backward's formula does not change with sinks, only their own
    // gradient needs the reference.
    attentionForward: (q, k, v, out, probs, seqStarts, nHeads, nKvHeads, headDim, scale, window, sinks) =>
      sinks !== undefined && sinks !== null
        ? referenceKernels.attentionForward(q, k, v, out, probs, seqStarts, nHeads, nKvHeads, headDim, scale, window, sinks)
        : addon.attentionForward(q, k, v, out, probs, seqStarts, nHeads, nKvHeads, headDim, scale, window),
    attentionBackward: (dout, q, k, v, probs, dq, dk, dv, seqStarts, nHeads, nKvHeads, headDim, scale, dsinks) =>
      dsinks !== undefined && dsinks !== null
        ? referenceKernels.attentionBackward(dout, q, k, v, probs, dq, dk, dv, seqStarts, nHeads, nKvHeads, headDim, scale, dsinks)
        : addon.attentionBackward(dout, q, k, v, probs, dq, dk, dv, seqStarts, nHeads, nKvHeads, headDim, scale),
    attentionDecode: (q, kCache, vCache, out, cacheLens, n, nHeads, nKvHeads, headDim, maxLen, scale, window, sinks) =>
      sinks !== undefined && sinks !== null
        ? referenceKernels.attentionDecode(q, kCache, vCache, out, cacheLens, n, nHeads, nKvHeads, headDim, maxLen, scale, window, sinks)
        : addon.attentionDecode(q, kCache, vCache, out, cacheLens, n, nHeads, nKvHeads, headDim, maxLen, scale, window),
    attentionDecodeSlots: (q, kCache, vCache, ...rest) => {
      if (rest[10] !== undefined && rest[10] !== null) {
        referenceKernels.attentionDecodeSlots(q, kCache, vCache, ...rest);
        return;
      }
      const kb = f16Bits(kCache);
      const vb = f16Bits(vCache);
      if (kb !== null && vb !== null) addon.attentionDecodeSlotsF16(q, kb, vb, ...rest);
      else if (kb === null && vb === null) addon.attentionDecodeSlots(q, kCache as FloatArray, vCache as FloatArray, ...rest);
      else throw new TypeError("attentionDecodeSlots: kCache and vCache must both be float32 or both f16");
    },
    swigluForward: addon.swigluForward,
    swigluBackward: addon.swigluBackward,
    gegluForward: addon.gegluForward,
    gegluBackward: addon.gegluBackward,
    logprobsForward: addon.logprobsForward,
    logprobsBackward: addon.logprobsBackward,
    adamw: addon.adamw,
    axpy: addon.axpy,
    sumSquares: addon.sumSquares,
    add: addon.add,
    embeddingForward: (table, ids, out, n, dim) =>
      table instanceof HalfArray
        ? addon.embeddingForwardHalf(table.bits, HALF_CODES[table.dtype], ids, out, n, dim)
        : addon.embeddingForward(table, ids, out, n, dim),
    embeddingBackward: addon.embeddingBackward,
    bf16ToFloat32: addon.bf16ToFloat32,
    mxfp4ToBf16: addon.mxfp4ToBf16,
    gemmRowsNT: (M, N, K, alpha, A, W, beta, C) =>
      W instanceof HalfArray ? addon.gemmRowsNTHalf(M, N, K, alpha, A, W.bits, HALF_CODES[W.dtype], beta, C) : addon.gemmRowsNT(M, N, K, alpha, A, W, beta, C),
    gemmPrefillNT: (M, N, K, alpha, A, W, beta, C) =>
      W instanceof HalfArray
        ? addon.gemmPrefillNTHalf(M, N, K, alpha, A, W.bits, HALF_CODES[W.dtype], beta, C)
        : addon.gemmPrefillNT(M, N, K, alpha, A, W, beta, C),
    kvStore: (k, v, kCache, vCache, ...rest) => {
      const kb = f16Bits(kCache);
      const vb = f16Bits(vCache);
      if (kb !== null && vb !== null) addon.kvStoreF16(k, v, kb, vb, ...rest);
      else if (kb === null && vb === null) addon.kvStore(k, v, kCache as FloatArray, vCache as FloatArray, ...rest);
      else throw new TypeError("kvStore: kCache and vCache must both be float32 or both f16");
    },
    sampleRows: addon.sampleRows,
    readBandwidthProbe: addon.readBandwidthProbe,
    widenFromFile: addon.widenFromFile,
    mapFile: addon.mapFile,
    allocPages: addon.allocPages,
    releasePages: addon.releasePages,
  };
  cached = kernels;
  return kernels;
}
