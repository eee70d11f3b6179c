// bf16 → float32 widening for the loader: the native addon's loop when it loads (a JavaScript loop
// over a billion elements is the largest part of loading a 1B model), else the TS reference.
// COOKBOOK_KERNELS=reference keeps the reference, as it does for every kernel.
import { loadNativeKernels } from "../kernels/native.ts";
import { bf16ToFloat32 } from "./dtypes.ts";

type Widen = (src: Uint16Array, dst: Float32Array, n: number) => void;
let native: Widen | null | undefined;

function nativeWiden(): Widen | null {
  if (process.env.COOKBOOK_KERNELS === "reference") return null;
  try {
    return loadNativeKernels().bf16ToFloat32;
  } catch {
    // getKernels() reports a missing addon once; the reference gives the same bits.
    return null;
  }
}

export function widenBf16(src: Uint16Array): Float32Array {
  if (native === undefined) native = nativeWiden();
  if (native === null) return bf16ToFloat32(src);
  const out = new Float32Array(src.length);
  native(src, out, src.length);
  return out;
}
