// The native path of the safetensors reader: the addon maps the file and converts every floating
// tensor to float32 straight from the mapping into its own array, on every core. Integer tensors
// stay with the positioned reads of reader.ts.
import { loadNativeKernels, type NativeKernels } from "../kernels/native.ts";
import type { SafetensorsEntry } from "./reader.ts";

/** dtype codes of the addon's widenFromFile. */
const CODES: Readonly<Record<string, number>> = { F32: 0, BF16: 1, F16: 2, F64: 3 };
const SIZES: Readonly<Record<string, number>> = { F32: 4, BF16: 2, F16: 2, F64: 8 };

export interface NativeFileReader {
  handles(dtype: string): boolean;
  /** Float32 arrays of `entries` (all of dtypes it handles) of the file whose data starts at dataStart. */
  read(file: string, dataStart: number, entries: SafetensorsEntry[]): Map<string, Float32Array>;
}

let addon: NativeKernels | null | undefined;

/**
 * The native reader, or null without the addon or under COOKBOOK_KERNELS=reference (`required`
 * makes a missing addon an error: tests that compare the two paths must not compare one with itself).
 */
export function nativeFileReader(required = false): NativeFileReader | null {
  if (addon === undefined) {
    try {
      // Windows has no POSIX mmap (the addon's widenFromFile refuses there).
      addon = process.env.COOKBOOK_KERNELS === "reference" || process.platform === "win32" ? null : loadNativeKernels();
    } catch {
      // getKernels() reports a missing addon once; the positioned reads give the same values.
      addon = null;
    }
  }
  const k = required && addon === null ? loadNativeKernels() : addon;
  if (k === null) return null;
  return {
    handles: (dtype) => CODES[dtype] !== undefined,
    read(file, dataStart, entries) {
      const dsts = entries.map((e) => new Float32Array((e.end - e.begin) / (SIZES[e.dtype] as number)));
      k.widenFromFile(
        file,
        Float64Array.from(entries, (e) => dataStart + e.begin),
        Int32Array.from(entries, (e) => CODES[e.dtype] as number),
        dsts,
      );
      return new Map(entries.map((e, i) => [e.name, dsts[i] as Float32Array]));
    },
  };
}
