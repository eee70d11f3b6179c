// MXFP4 weights (OCP microscaling FP4, GPT-OSS's released expert matrices): each run of 32 values
// along a row shares one power-of-two scale, and each value is a 4-bit e2m1 code. A checkpoint
// stores `<name>_blocks` (uint8 [E, rows, cols/32, 16], two codes a byte, the low nibble first) and
// `<name>_scales` (uint8 [E, rows, cols/32], exponents biased by 127); rows are the output
// dimension. Dequantized, a code is FP4_VALUES[code]·2^(scale − 127), exact in float32 (and in the
// bf16 transformers widens to). The engine keeps the bytes as they are mapped from the file and
// widens one expert's matrix at a time, when a token is routed to it (docs/numerics.md#gpt-oss).
import { HalfArray } from "./halfArray.ts";
import type { FloatArray, Kernels } from "./types.ts";

/** The e2m1 values of the 16 codes (sign bit 8). */
export const FP4_VALUES = [0, 0.5, 1, 1.5, 2, 3, 4, 6, -0, -0.5, -1, -1.5, -2, -3, -4, -6] as const;

/** Each byte's two values (low nibble first), so widening a byte is one lookup. */
const PAIRS = (() => {
  const t = new Float32Array(512);
  for (let b = 0; b < 256; b++) {
    t[2 * b] = FP4_VALUES[b & 15];
    t[2 * b + 1] = FP4_VALUES[b >> 4];
  }
  return t;
})();

/**
 * For each scale byte s and code byte b, the bf16 bits of the byte's two values (low nibble in the
 * low half): widening a byte is one 32-bit load and store. Every MXFP4 value is exact in bf16 (two
 * significant bits, float32's exponent range), so the bits are those of the float32 value's top half.
 */
let bf16Pairs: Uint32Array | null = null;
function bf16PairTable(): Uint32Array {
  if (bf16Pairs !== null) return bf16Pairs;
  const t = new Uint32Array(256 * 256);
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  const bits = (v: number): number => {
    f[0] = v;
    return u[0] >>> 16;
  };
  for (let s = 0; s < 256; s++) {
    const scale = 2 ** (s - 127);
    for (let b = 0; b < 256; b++) t[s * 256 + b] = (bits(FP4_VALUES[b & 15] * scale) | (bits(FP4_VALUES[b >> 4] * scale) << 16)) >>> 0;
  }
  bf16Pairs = t;
  return t;
}

/**
 * One checkpoint tensor of `experts` matrices [rows, cols] in MXFP4. Its logical shape is that of
 * the dense parameter it replaces, [experts, cols, rows] (GPT-OSS's x·W orientation), and `length`
 * counts those elements, so shape checks treat it as that parameter.
 */
export class Mxfp4Matrix {
  constructor(
    readonly experts: number,
    readonly rows: number,
    readonly cols: number,
    readonly blocks: Uint8Array,
    readonly scales: Uint8Array,
  ) {
    if (cols % 32 !== 0) throw new Error(`MXFP4: a row of ${cols} values is not a whole number of 32-value blocks`);
    const groups = experts * rows * (cols / 32);
    if (blocks.length !== groups * 16 || scales.length !== groups) {
      throw new Error(`MXFP4: [${experts}, ${rows}, ${cols}] needs ${groups * 16} block bytes and ${groups} scales, got ${blocks.length} and ${scales.length}`);
    }
  }

  get length(): number {
    return this.experts * this.rows * this.cols;
  }

  /** Bytes held (blocks and scales). */
  get byteLength(): number {
    return this.blocks.byteLength + this.scales.byteLength;
  }

  /** Expert e's matrix [rows, cols] (output-major: row r holds output r's weights) into out. */
  dequantizeExpert(e: number, out: FloatArray): void {
    const G = this.cols / 32;
    const g0 = e * this.rows * G;
    const n = this.rows * G;
    const { blocks, scales } = this;
    for (let g = 0; g < n; g++) {
      const s = 2 ** (scales[g0 + g] - 127);
      const src = (g0 + g) * 16;
      const dst = g * 32;
      for (let b = 0; b < 16; b++) {
        const byte = blocks[src + b];
        out[dst + 2 * b] = PAIRS[2 * byte] * s;
        out[dst + 2 * b + 1] = PAIRS[2 * byte + 1] * s;
      }
    }
  }

  /**
   * Expert e's matrix [rows, cols] as bf16 bits into out (exact; the kernels widen bf16 as they
   * read it), with the native kernel when `k` has it.
   */
  widenExpertBf16(e: number, out: Uint16Array, k?: Kernels): void {
    const G = this.cols / 32;
    const g0 = e * this.rows * G;
    const n = this.rows * G;
    const { blocks, scales } = this;
    if (k?.mxfp4ToBf16 !== undefined) {
      k.mxfp4ToBf16(blocks.subarray(g0 * 16, (g0 + n) * 16), scales.subarray(g0, g0 + n), n, out);
      return;
    }
    const table = bf16PairTable();
    if (out.byteOffset % 4 !== 0 || out.length < n * 32) throw new Error("widenExpertBf16: out must be 4-byte aligned and hold a whole expert");
    const out32 = new Uint32Array(out.buffer, out.byteOffset, n * 16);
    for (let g = 0; g < n; g++) {
      const row = scales[g0 + g] * 256;
      const src = (g0 + g) * 16;
      const dst = g * 16;
      for (let b = 0; b < 16; b++) out32[dst + b] = table[row + blocks[src + b]];
    }
  }

  /** Every expert widened in the dense parameter's layout [experts, cols, rows] (the float32 loader). */
  toDense(): Float32Array {
    const { experts: E, rows: R, cols: C } = this;
    const out = new Float32Array(E * C * R);
    const m = new Float32Array(R * C);
    for (let e = 0; e < E; e++) {
      this.dequantizeExpert(e, m);
      const base = e * C * R;
      for (let r = 0; r < R; r++) for (let c = 0; c < C; c++) out[base + c * R + r] = m[r * C + c];
    }
    return out;
  }
}

/**
 * Where an MXFP4 expert is widened: bf16 buffers shared by all experts of a model, [2F, D] and
 * [D, F] (half the bytes of float32 to write, and the kernels' 16-bit products read them).
 */
export interface ExpertBuffers {
  gateUp: HalfArray;
  down: HalfArray;
}

export function expertBuffers(gateUpSize: number, downSize: number): ExpertBuffers {
  return { gateUp: new HalfArray("bf16", new Uint16Array(gateUpSize)), down: new HalfArray("bf16", new Uint16Array(downSize)) };
}

/** An expert whose matrices are MXFP4: its index in the two checkpoint tensors and the buffers its Linears read. */
export interface QuantizedExpert {
  gateUp: Mxfp4Matrix;
  down: Mxfp4Matrix;
  expert: number;
  into: ExpertBuffers;
}

/**
 * Widens expert q into its buffers (nothing for a dense expert). Called right before the expert's
 * products, forward and backward: the buffers then hold this expert until the next call.
 */
export function widenExpert(k: Kernels, q: QuantizedExpert | undefined): void {
  if (q === undefined) return;
  q.gateUp.widenExpertBf16(q.expert, q.into.gateUp.bits, k);
  q.down.widenExpertBf16(q.expert, q.into.down.bits, k);
}
