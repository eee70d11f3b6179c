// GEMM throughput (GFLOP/s, fp32) for the shapes of docs/kernels.md#benchmark-shapes, per available backend.
// Usage: npm run bench:gemm [-- --reps 9 --no-ts --backend openblas|packed --training --cpu --blocks 192x256,192x256p]
//   (COOKBOOK_THREADS=n sets threads). --training adds the products of a LoRA training step (the
//   frozen x·Wᵀ, dY·W, the rank-32 adapter products, the head over a 152k vocabulary); --cpu
//   reports GFLOP per CPU-second of the process instead of per wall second (a busy host).
// --blocks adds one packed column per KC×NC block size (a trailing p: A packed too) (docs/kernels.md#per-cpu-gemm-choice).
// Each cell is the median of several timed calls after warm-up; the host is noisy (±30 %), so
// compare backends within one run rather than against numbers from another day.

import { availableParallelism, loadavg } from "node:os";
import { loadNativeKernels, referenceKernels, type Kernels, type NativeKernels } from "../src/engine/kernels/index.ts";

interface Shape {
  name: string;
  M: number;
  K: number;
  N: number;
  transA: boolean;
  transB: boolean;
}

const shapes: Shape[] = [
  { name: "attn", M: 1024, K: 576, N: 576, transA: false, transB: false },
  { name: "up", M: 1024, K: 576, N: 1536, transA: false, transB: false },
  { name: "down", M: 1024, K: 1536, N: 576, transA: false, transB: false },
  { name: "logits[:8192]", M: 1024, K: 576, N: 8192, transA: false, transB: false },
  { name: "TN", M: 576, K: 1024, N: 1536, transA: true, transB: false },
  { name: "NT", M: 1024, K: 1536, N: 576, transA: false, transB: true },
  { name: "LoRA-A", M: 1024, K: 576, N: 32, transA: false, transB: false },
  { name: "LoRA-B", M: 1024, K: 32, N: 576, transA: false, transB: false },
  { name: "decode 1x576x1536", M: 1, K: 576, N: 1536, transA: false, transB: true },
];

// (M, K, N), transposes as the engine calls them: forward y = x·Wᵀ is NT, the input gradient dY·W
// is NN, the adapter gradients dB = dYᵀ·h and dA = dHᵀ·x are TN.
const trainingShapes: Shape[] = [
  { name: "x·Wᵀ up Qwen3", M: 1024, K: 1024, N: 3072, transA: false, transB: true },
  { name: "dY·W up Qwen3", M: 1024, K: 3072, N: 1024, transA: false, transB: false },
  { name: "head x·Wᵀ Qwen3", M: 342, K: 1024, N: 151936, transA: false, transB: true },
  { name: "head dY·W Qwen3", M: 342, K: 151936, N: 1024, transA: false, transB: false },
  { name: "LoRA x·Aᵀ", M: 1024, K: 576, N: 32, transA: false, transB: true },
  { name: "LoRA h·Bᵀ", M: 1024, K: 32, N: 1536, transA: false, transB: true },
  { name: "LoRA dB", M: 576, K: 1024, N: 32, transA: true, transB: false },
  { name: "LoRA dA", M: 32, K: 1024, N: 576, transA: true, transB: false },
];

const args = process.argv.slice(2);
if (args.includes("--training")) shapes.push(...trainingShapes);
const perCpu = args.includes("--cpu");
const repsArg = args.indexOf("--reps");
const minReps = repsArg >= 0 ? Number(args[repsArg + 1]) : 7;
const withTs = !args.includes("--no-ts");
const backendArg = args.indexOf("--backend");
const onlyBackend = backendArg >= 0 ? args[backendArg + 1] : null;
const blocksArg = args.indexOf("--blocks");
const blockSizes = (blocksArg >= 0 ? args[blocksArg + 1] : "")
  .split(",")
  .filter((b) => b.length > 0)
  .map((b) => {
    const m = /^(\d+)x(\d+)(p?)$/.exec(b);
    if (m === null) throw new Error(`--blocks ${b}: expected KCxNC, e.g. 192x256`);
    return { kc: Number(m[1]), nc: Number(m[2]), packA: m[3] === "p" };
  });

function fill(n: number): Float32Array {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = Math.sin(i * 0.37) * 0.5;
  return a;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** GFLOP/s of one shape: median of timed calls, at least `reps` and at least ~0.3 s of them. */
function measure(k: Kernels, s: Shape, reps: number, warmup: number): number {
  const A = fill(s.M * s.K);
  const B = fill(s.K * s.N);
  const C = new Float32Array(s.M * s.N);
  const run = (): void => k.gemm(s.transA, s.transB, s.M, s.N, s.K, 1, A, B, 0, C);
  for (let i = 0; i < warmup; i++) run();
  const times: number[] = [];
  const t0 = performance.now();
  while (times.length < reps || (performance.now() - t0 < 300 && times.length < 1000)) {
    const t = performance.now();
    const c = process.cpuUsage();
    run();
    const u = process.cpuUsage(c);
    times.push(perCpu ? (u.user + u.system) / 1000 : performance.now() - t);
  }
  return (2 * s.M * s.N * s.K) / (median(times) * 1e6);
}

const columns: { label: string; run: (s: Shape) => number | null }[] = [];
let native: NativeKernels | null = null;
try {
  native = loadNativeKernels();
} catch (err) {
  console.log(`native kernels unavailable: ${err instanceof Error ? err.message : String(err)}`);
}
if (native !== null) {
  const nk = native;
  const defaults = { kc: nk.gemmBlocks.defaultKc, nc: nk.gemmBlocks.defaultNc, packA: false };
  for (const backend of nk.gemmBackends.filter((b) => onlyBackend === null || b === onlyBackend)) {
    for (const blocks of backend === "packed" && blockSizes.length > 0 ? blockSizes : [defaults]) {
      columns.push({
        label: backend === "packed" && blockSizes.length > 0 ? `packed ${blocks.kc}x${blocks.nc}${blocks.packA ? "p" : ""}` : `${backend} (${nk.numThreads}t)`,
        run: (s) => {
          nk.setGemmBackend(backend);
          nk.setGemmBlocks(blocks.kc, blocks.nc, blocks.packA);
          return measure(nk, s, minReps, 3);
        },
      });
    }
  }
}
if (withTs) {
  columns.push({ label: "typescript (1t)", run: (s) => (s.N > 4096 ? null : measure(referenceKernels, s, 2, 1)) });
}

const nameWidth = Math.max(...shapes.map((s) => s.name.length)) + 2;
console.log(`GEMM GFLOP${perCpu ? " per CPU-second" : "/s"}, fp32, median; shapes are (M, K, N) of C[M,N] = op(A)[M,K] op(B)[K,N]`);
const load = loadavg()[0];
const cores = availableParallelism();
console.log(`load average ${load.toFixed(1)} on ${cores} cores${load > cores ? " — the machine is busy, so these numbers are low and noisy" : ""}`);
console.log(["shape".padEnd(nameWidth), "M×K×N".padEnd(18), ...columns.map((c) => c.label.padStart(16))].join(""));
for (const s of shapes) {
  const cells = columns.map((c) => {
    const g = c.run(s);
    return (g === null ? "–" : g.toFixed(1)).padStart(16);
  });
  console.log([s.name.padEnd(nameWidth), `${s.M}×${s.K}×${s.N}`.padEnd(18), ...cells].join(""));
}
if (native?.gemmBackends.includes("openblas")) native.setGemmBackend("openblas");
