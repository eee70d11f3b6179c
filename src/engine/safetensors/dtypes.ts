// Element types of the safetensors format (docs/numerics.md#safetensors) and the conversions the engine
// needs: every floating type is widened to float32 on read (bf16 exactly, f16 by a real decode),
// and float32 is narrowed to bf16 with round-to-nearest-even on write. The widenings live with the
// kernels (which also widen 16-bit weights kept resident).
export { bf16ToFloat32, f16ToFloat32, float32ToF16 } from "../kernels/halfArray.ts";

/** Every dtype string the format defines; anything else in a header is a corrupt or foreign file. */
export const KNOWN_DTYPES = new Set([
  "BOOL",
  "U8",
  "I8",
  "I16",
  "U16",
  "F16",
  "BF16",
  "I32",
  "U32",
  "F32",
  "F64",
  "I64",
  "U64",
  "C64",
  "F8_E5M2",
  "F8_E4M3",
  "F8_E8M0",
  "F8_E4M3FNUZ",
  "F8_E5M2FNUZ",
  "F6_E2M3",
  "F6_E3M2",
  "F4",
]);

/** Bytes per element of the dtypes this engine reads. */
export const DTYPE_SIZE: Readonly<Record<string, number>> = {
  F32: 4,
  BF16: 2,
  F16: 2,
  F64: 8,
  I32: 4,
  I64: 8,
  // MXFP4 checkpoints' packed codes and exponents (kernels/mxfp4.ts).
  U8: 1,
};

export type ReadableDType = "F32" | "BF16" | "F16" | "F64" | "I32" | "I64" | "U8";
export type WritableDType = "F32" | "BF16";

export function isReadableDType(dtype: string): dtype is ReadableDType {
  return Object.hasOwn(DTYPE_SIZE, dtype);
}

/** Round-to-nearest-even narrowing, as torch does; NaN stays a quiet NaN with its sign. */
export function float32ToBf16(src: Float32Array): Uint16Array {
  const bits = new Uint32Array(src.buffer, src.byteOffset, src.length);
  const out = new Uint16Array(src.length);
  for (let i = 0; i < src.length; i++) {
    const b = bits[i]!;
    if ((b & 0x7fffffff) > 0x7f800000) {
      out[i] = ((b >>> 16) | 0x0040) & 0xffff;
    } else {
      out[i] = ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
    }
  }
  return out;
}
