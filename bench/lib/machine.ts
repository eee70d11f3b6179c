// The machine a benchmark ran on, printed first so numbers are never read without it.
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";

/** "Intel(R) Xeon(R) Processor @ 2.50GHz, 2 cores, AVX-512 (no BF16)": model name and the SIMD a kernel may use. */
export function cpuDescription(): string {
  let flags = new Set<string>();
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("flags"));
    if (line !== undefined) flags = new Set(line.split(":")[1].trim().split(/\s+/));
  } catch {
    // Not Linux: the model name from os.cpus() is all there is.
  }
  const simd = flags.has("avx512f")
    ? `AVX-512${flags.has("avx512_bf16") ? " with BF16" : " (no BF16)"}`
    : flags.has("avx2")
      ? "AVX2"
      : flags.size > 0
        ? "no AVX2"
        : "flags unknown";
  return `${cpus()[0]?.model.trim() ?? "unknown CPU"}, ${cpus().length} cores, ${simd}`;
}

export const loadAverage = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
