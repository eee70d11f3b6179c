// Frozen base weights kept in the 16 bits a checkpoint stored them in (bf16 or IEEE f16), usually
// a view straight into the memory mapping of the safetensors file. The kernels that read weights
// (gemm's B operand, gemmRowsNT's W, embeddingForward's table) widen each value to float32 as they
// load it. Both widenings are exact, so every result has the bits it would have with a widened
// float32 copy, at half the memory and without materialising that copy (docs/kernels.md).
import type { Mxfp4Matrix } from "./mxfp4.ts";
import type { FloatArray } from "./types.ts";

export type HalfDtype = "bf16" | "f16";

/** Type codes of the addon's *Half kernels (native/half.h HalfType). */
export const HALF_CODES: Readonly<Record<HalfDtype, number>> = { bf16: 1, f16: 2 };

export class HalfArray {
  constructor(
    readonly dtype: HalfDtype,
    readonly bits: Uint16Array,
  ) {}

  get length(): number {
    return this.bits.length;
  }

  get byteLength(): number {
    return this.bits.byteLength;
  }

  /** The widened values of elements [begin, end) as a new Float32Array. */
  widen(begin = 0, end = this.bits.length): Float32Array {
    const part = this.bits.subarray(begin, end);
    return this.dtype === "bf16" ? bf16ToFloat32(part) : f16ToFloat32(part);
  }
}

/** Elements [begin, end) of a weight as a view (no copy): rows of a fused matrix. */
export function weightView<T extends FloatArray | HalfArray>(w: T, begin: number, end: number): T {
  if (w instanceof HalfArray) return new HalfArray(w.dtype, w.bits.subarray(begin, end)) as T;
  return (w as FloatArray).subarray(begin, end) as T;
}

/** What a weight can be: float32/float64, or 16-bit bits widened by the kernels that read it. */
export type WeightArray = FloatArray | HalfArray;

/**
 * A base model tensor as loaded: float32, a 16-bit matrix kept as the checkpoint stored it, or
 * MXFP4 expert matrices (GPT-OSS), which no kernel reads directly: model code widens one expert at a time.
 */
export type BaseArray = Float32Array | HalfArray | Mxfp4Matrix;

/** A base tensor the kernels can read: float32 or 16-bit. */
export type DenseArray = Float32Array | HalfArray;

/** `w` when the kernels can read it; a clear error for an MXFP4 tensor anywhere but GPT-OSS's experts. */
export function denseWeight(w: BaseArray, name: string): DenseArray {
  if (w instanceof Float32Array || w instanceof HalfArray) return w;
  throw new Error(`tensor "${name}" is MXFP4; only GPT-OSS's expert matrices (mlp.experts.gate_up_proj, down_proj) may be`);
}

/** The values as float32: `w` itself when it is a Float32Array, else a widened (or rounded) copy. */
export function toFloat32(w: WeightArray): Float32Array {
  if (w instanceof Float32Array) return w;
  if (w instanceof HalfArray) return w.widen();
  return Float32Array.from(w);
}

/** bf16 bits are the top half of a float32, so widening is a shift and exact. */
export function bf16ToFloat32(src: Uint16Array): Float32Array {
  const bits = new Uint32Array(src.length);
  for (let i = 0; i < src.length; i++) bits[i] = src[i]! << 16;
  return new Float32Array(bits.buffer);
}

let f16Table: Float32Array | null = null;

/** A 65536-entry table: cheaper than decoding sign/exponent/mantissa per element for big tensors. */
function halfTable(): Float32Array {
  if (f16Table !== null) return f16Table;
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >>> 10) & 0x1f;
    const mant = h & 0x3ff;
    if (exp === 0) t[h] = sign * mant * 2 ** -24;
    else if (exp === 31) t[h] = mant === 0 ? sign * Infinity : NaN;
    else t[h] = sign * (1 + mant / 1024) * 2 ** (exp - 15);
  }
  f16Table = t;
  return t;
}

/** IEEE half to float32 (exact: every half is a float32). */
export function f16ToFloat32(src: Uint16Array): Float32Array {
  const table = halfTable();
  const out = new Float32Array(src.length);
  for (let i = 0; i < src.length; i++) out[i] = table[src[i]!]!;
  return out;
}

/** Float32 to IEEE half with round-to-nearest-even (f16 fixtures, the reference f16 KV cache). */
export function float32ToF16(src: Float32Array): Uint16Array {
  const out = new Uint16Array(src.length);
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  for (let i = 0; i < src.length; i++) {
    f[0] = src[i]!;
    const x = u[0]!;
    const sign = (x >>> 16) & 0x8000;
    const exp = (x >>> 23) & 0xff;
    let mant = x & 0x7fffff;
    if (exp === 0xff) {
      out[i] = sign | 0x7c00 | (mant ? 0x200 : 0);
      continue;
    }
    const e = exp - 127 + 15;
    if (e >= 31) {
      out[i] = sign | 0x7c00;
    } else if (e <= 0) {
      if (e < -10) {
        out[i] = sign;
        continue;
      }
      mant |= 0x800000;
      const shift = 14 - e;
      let h = mant >>> shift;
      const rem = mant & ((1 << shift) - 1);
      const half = 1 << (shift - 1);
      if (rem > half || (rem === half && h & 1)) h++;
      out[i] = sign | h;
    } else {
      let h = (e << 10) | (mant >>> 13);
      const rem = mant & 0x1fff;
      if (rem > 0x1000 || (rem === 0x1000 && h & 1)) h++;
      out[i] = sign | h;
    }
  }
  return out;
}
