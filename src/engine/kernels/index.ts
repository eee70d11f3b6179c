// Picks the kernel implementation for the engine: the native addon when it loads, otherwise the
// TypeScript reference (with one warning, because it is 50–100× slower per training step).
// COOKBOOK_KERNELS=reference forces the reference; COOKBOOK_KERNELS=native makes a missing addon an error.

import { referenceKernels } from "./reference.ts";
import { loadNativeKernels } from "./native.ts";
import type { Kernels } from "./types.ts";

export type { FloatArray, Kernels } from "./types.ts";
export type { NativeKernels } from "./native.ts";
export { referenceKernels } from "./reference.ts";
export { HalfArray, toFloat32, type BaseArray, type HalfDtype, type WeightArray } from "./halfArray.ts";
export { loadNativeKernels, nativeAddonPath } from "./native.ts";

let chosen: Kernels | null = null;

export function getKernels(): Kernels {
  if (chosen !== null) return chosen;
  const env = process.env.COOKBOOK_KERNELS;
  if (env === "reference") {
    chosen = referenceKernels;
  } else if (env === "native") {
    try {
      chosen = loadNativeKernels();
    } catch (err) {
      throw new Error(`COOKBOOK_KERNELS=native, but ${err instanceof Error ? err.message : String(err)}`);
    }
  } else if (env === undefined || env === "") {
    try {
      chosen = loadNativeKernels();
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      process.stderr.write(`native kernels unavailable (${reason}); using the TypeScript reference kernels, which are much slower\n`);
      chosen = referenceKernels;
    }
  } else {
    throw new Error(`COOKBOOK_KERNELS=${JSON.stringify(env)} is not valid; expected "reference" or "native" (or unset for native with fallback)`);
  }
  return chosen;
}
