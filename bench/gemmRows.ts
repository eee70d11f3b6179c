// The decode products alone: gemmRowsNT at 1..32 token rows on the SmolLM2-135M shapes (q/o 576 × 576,
// MLP up 1536 × 576 and down 576 × 1536, the 49k-row head), bf16 and float32 weights, CPU time per
// call (best of 5) and its ratio to one row. The weights stay in cache between calls (except the
// head's), so this measures the kernel's arithmetic, not memory: how much a k-row decode step
// costs over a 1-row one when bandwidth is not the limit. Run it with COOKBOOK_THREADS=1.
// Usage: npm run bench:gemm_rows [-- --rows 1,2,4,8,16,32]
import { getKernels } from "../src/engine/kernels/index.ts";
import { HalfArray } from "../src/engine/kernels/halfArray.ts";
import { float32ToBf16 } from "../src/engine/safetensors/dtypes.ts";
import { cpuSeconds } from "./lib/decodeRun.ts";
import { cpuDescription, loadAverage } from "./lib/machine.ts";

const argv = process.argv.slice(2);
const rowsArg = argv.includes("--rows") ? argv[argv.indexOf("--rows") + 1] : "1,2,3,4,5,8,16,32";
const rowCounts = rowsArg.split(",").map(Number);
const k = getKernels();
console.log(`CPU: ${cpuDescription()}; load average ${loadAverage()}; kernels ${k.name}`);
const shapes: [number, number][] = [
  [1536, 576],
  [576, 1536],
  [576, 576],
  [49152, 576],
];
for (const dtype of ["bf16", "f32"]) {
  for (const [N, K] of shapes) {
    const wf = Float32Array.from({ length: N * K }, (_, i) => Math.sin(i) * 0.02);
    const W = dtype === "bf16" ? new HalfArray("bf16", float32ToBf16(wf)) : wf;
    const line: string[] = [];
    let one = 0;
    for (const M of rowCounts) {
      const A = Float32Array.from({ length: M * K }, (_, i) => Math.cos(i));
      const C = new Float32Array(M * N);
      const reps = Math.max(3, Math.round(2e8 / (N * K)));
      for (let r = 0; r < 3; r++) k.gemmRowsNT(M, N, K, 1, A, W, 0, C);
      let best = Infinity;
      for (let t = 0; t < 5; t++) {
        const c0 = cpuSeconds();
        for (let r = 0; r < reps; r++) k.gemmRowsNT(M, N, K, 1, A, W, 0, C);
        best = Math.min(best, (cpuSeconds() - c0) / reps);
      }
      if (one === 0) one = best;
      line.push(`${M}: ${(best * 1e6).toFixed(0)} µs (${(best / one).toFixed(2)}×)`);
    }
    console.log(`${dtype} W ${N}×${K}  ${line.join("  ")}`);
  }
}
