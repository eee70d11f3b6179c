// Random float32 base weights as a bf16 checkpoint would give them to a LoRA run since 16-bit
// residency: every matrix rounded to bf16 and kept 16-bit (HalfArray), vectors float32.
// `--base fp32` in the benchmarks keeps the float32 arrays (the path COOKBOOK_BASE_WEIGHTS=fp32 takes).
import { HalfArray, type BaseArray } from "../../src/engine/kernels/halfArray.ts";
import { float32ToBf16 } from "../../src/engine/safetensors/dtypes.ts";

export type BaseKind = "bf16" | "fp32";

export function baseKindArg(argv: readonly string[]): BaseKind {
  const i = argv.indexOf("--base");
  const v = i >= 0 ? argv[i + 1] : "bf16";
  if (v !== "bf16" && v !== "fp32") throw new Error(`--base ${v}: expected bf16 (16-bit resident base, the default) or fp32`);
  return v;
}

export function asBase(weights: Map<string, Float32Array>, kind: BaseKind): Map<string, BaseArray> {
  if (kind === "fp32") return weights;
  const out = new Map<string, BaseArray>();
  for (const [name, w] of weights) {
    const matrix = name.endsWith(".weight") && !name.endsWith("norm.weight");
    out.set(name, matrix ? new HalfArray("bf16", float32ToBf16(w)) : w);
  }
  return out;
}
