// The decode products alone: gemmRowsNT on the SmolLM2-135M shapes (q/o 576 × 576, k/v 192 × 576,
// MLP up 1536 × 576 and down 576 × 1536, the 49k-row head), bf16 and float32 weights.
//
// Default (`--from memory`): the weights come from memory, as in a decode step, which streams
// every matrix once: each shape cycles over enough copies of its matrix (256 MB in all, several
// times the L3) that every call finds its weights out of cache. Prints, per row count and thread
// count, the time per call (best of 3 rounds), GFLOP per wall second and per CPU second (the
// load-robust one on a shared machine; the FMA peak of one AVX-512 core is about 150) and the
// weight bytes per wall second.
// `--from cache`: one matrix, called again and again (it stays in L2/L3 except the head): the
// kernel's arithmetic without memory, as a ratio of the 1-row time per call.
// Usage: npm run bench:gemm_rows [-- --rows 1,4,16 --threads 1,2 --from memory|cache --dtypes bf16,f32]
import { HalfArray } from "../src/engine/kernels/halfArray.ts";
import { loadNativeKernels } from "../src/engine/kernels/native.ts";
import { float32ToBf16 } from "../src/engine/safetensors/dtypes.ts";
import { cpuSeconds } from "./lib/decodeRun.ts";
import { cpuDescription, loadAverage } from "./lib/machine.ts";

const argv = process.argv.slice(2);
const opt = (name: string, fallback: string): string => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : fallback);
const from = opt("from", "memory");
if (from !== "memory" && from !== "cache") throw new Error(`--from must be memory or cache, got ${JSON.stringify(from)}`);
const rowCounts = opt("rows", from === "memory" ? "1,16" : "1,2,3,4,5,8,16,32")
  .split(",")
  .map(Number);
const threadCounts = opt("threads", from === "memory" ? "1,2" : "1")
  .split(",")
  .map(Number);
const dtypes = opt("dtypes", "bf16,f32").split(",");
for (const d of dtypes) if (d !== "bf16" && d !== "f32") throw new Error(`--dtypes: unknown dtype ${JSON.stringify(d)} (bf16, f32)`);
const k = loadNativeKernels();
const initialThreads = k.numThreads;
console.log(`CPU: ${cpuDescription()}; load average ${loadAverage()}; kernels ${k.name}; weights from ${from}`);
const shapes: [number, number][] = [
  [576, 576],
  [192, 576],
  [1536, 576],
  [576, 1536],
  [49152, 576],
];
const MEMORY_BYTES = 256 << 20;

for (const dtype of dtypes) {
  for (const [N, K] of shapes) {
    const bytes = N * K * (dtype === "bf16" ? 2 : 4);
    const copies = from === "memory" ? Math.max(3, Math.ceil(MEMORY_BYTES / bytes)) : 1;
    const Ws: (Float32Array | HalfArray)[] = [];
    for (let c = 0; c < copies; c++) {
      const wf = Float32Array.from({ length: N * K }, (_, i) => Math.sin(i + c) * 0.02);
      Ws.push(dtype === "bf16" ? new HalfArray("bf16", float32ToBf16(wf)) : wf);
    }
    for (const threads of threadCounts) {
      k.setNumThreads(threads);
      const line: string[] = [];
      let one = 0;
      for (const M of rowCounts) {
        const A = Float32Array.from({ length: M * K }, (_, i) => Math.cos(i));
        const C = new Float32Array(M * N);
        // About 0.3 s of arithmetic per round at 50 GFLOP/s, and every copy at least once.
        const calls = Math.max(copies, Math.round(1.5e10 / (2 * M * N * K)));
        for (let c = 0; c < copies; c++) k.gemmRowsNT(M, N, K, 1, A, Ws[c], 0, C);
        let bestWall = Infinity;
        let bestCpu = Infinity;
        for (let round = 0; round < 3; round++) {
          const c0 = cpuSeconds();
          const w0 = performance.now();
          for (let r = 0; r < calls; r++) k.gemmRowsNT(M, N, K, 1, A, Ws[r % copies], 0, C);
          bestWall = Math.min(bestWall, (performance.now() - w0) / 1000 / calls);
          bestCpu = Math.min(bestCpu, (cpuSeconds() - c0) / calls);
        }
        const flop = 2 * M * N * K;
        if (from === "cache") {
          if (one === 0) one = bestCpu;
          line.push(`${M}: ${(bestCpu * 1e6).toFixed(0)} µs (${(bestCpu / one).toFixed(2)}×)`);
        } else {
          line.push(
            `${M} rows ${(bestWall * 1e6).toFixed(0)} µs, ${(flop / bestWall / 1e9).toFixed(1)} GFLOP/s wall, ${(flop / bestCpu / 1e9).toFixed(1)} per CPU-s, ${(bytes / bestWall / 1e9).toFixed(1)} GB/s`,
          );
        }
      }
      console.log(`${dtype} W ${N}×${K}, ${threads} thread(s): ${line.join(" | ")}`);
    }
  }
}
k.setNumThreads(initialThreads);
