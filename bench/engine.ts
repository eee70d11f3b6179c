// Engine speed on a SmolLM2-135M-shaped random model (hidden 576, 30 layers, 9 heads / 3 KV heads,
// head_dim 64, ffn 1536, vocab 49152, tied, rope_theta 100000):
//   1. LoRA (rank 32, all linears + lm_head) forward_backward + optim_step on 8 × 128 tokens;
//   2. decoding: 16 samples × 64 tokens batched (one request) vs one sample at a time;
//   3. GEMM GFLOP/s on the training shapes;
//   4. the same LoRA step in PyTorch 2.13 from pip in the project venv, twice: the same graph written
//      in plain torch (bench/torch_lora_step.py) and what a user would run, transformers'
//      LlamaForCausalLM + PEFT (bench/peft_lora_step.py); then the GEMM-bound limit of the step at the
//      measured GEMM rate.
// Usage: npm run bench:engine [-- --steps 3 --torch-steps 2 --no-torch --profile --samples 16 --tokens 64 --threads 2]
// --threads n sets our pool and both peers' torch threads alike (default 2, this machine's cores);
// with 1 each, CPU seconds compare the work done even on a busy host, where multi-threaded torch
// burns CPU spinning at its barriers.
// Every timing is reported as wall time and as process CPU time: this machine is shared, and wall
// time also counts the time other processes held the cores.
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { ensurePythonVenv } from "../test-e2e/pythonVenv.ts";
import { getKernels, type Kernels, type NativeKernels } from "../src/engine/kernels/index.ts";
import type { ModelConfig } from "../src/engine/model/config.ts";
import { EngineModel, type SequenceInput } from "../src/engine/model/model.ts";
import { inferenceModel } from "../src/engine/sampling/forward.ts";
import { DecodeScheduler } from "../src/engine/sampling/scheduler.ts";
import { buildInferenceWeights } from "../src/engine/sampling/weights.ts";
import { benchHandle, timeRequests, type Timing } from "./lib/decodeRun.ts";
import { benchBatch, configOnlyDir, runPeftPeer, writeBatchFile } from "./lib/peers.ts";
import { BENCH_SHAPES, loraStepFlops } from "./lib/shapes.ts";
import { cpuDescription } from "./lib/machine.ts";

const argv = process.argv.slice(2);
function arg(name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
}
const steps = arg("steps", 3);
const torchSteps = arg("torch-steps", 2);
const numSamples = arg("samples", 16);
const genTokens = arg("tokens", 64);
const seqs = 8;
const len = 128;
const rank = 32;
const profile = argv.includes("--profile");
const threads = arg("threads", 2);

const config: ModelConfig = BENCH_SHAPES["smollm2-135m"];

const cpuSeconds = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x: number, d = 2): string => x.toFixed(d);

/** Wraps every kernel to add up its wall time per kernel name (--profile). */
function profiled(k: Kernels, totals: Map<string, number>): Kernels {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(k) as Array<keyof Kernels>) {
    const v = k[key];
    if (typeof v !== "function") {
      out[key] = v;
      continue;
    }
    const fn = v as (...a: unknown[]) => unknown;
    out[key] = (...a: unknown[]): unknown => {
      const t = performance.now();
      const r = fn.apply(k, a);
      const ms = performance.now() - t;
      totals.set(key, (totals.get(key) ?? 0) + ms);
      if (key === "gemm") {
        // By shape too: which products dominate. [transA, transB, M, N, K].
        const shape = `${a[0] ? "T" : "N"}${a[1] ? "T" : "N"} ${a[2]}×${a[3]}×${a[4]}`;
        gemmShapes.set(shape, (gemmShapes.get(shape) ?? 0) + ms);
      }
      return r;
    };
  }
  return out as unknown as Kernels;
}
const gemmShapes = new Map<string, number>();
function report(totals: Map<string, number>, wallMs: number): void {
  if (!profile) return;
  const kernelMs = [...totals.values()].reduce((a, b) => a + b, 0);
  const rows = [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([k, ms]) => `${k} ${fmt(ms / 1000)}s`);
  console.log(`    kernels ${fmt(kernelMs / 1000)}s of ${fmt(wallMs / 1000)}s wall: ${rows.join(", ")}`);
  const shapes = [...gemmShapes]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([k, ms]) => `${k} ${fmt(ms / 1000)}s`);
  console.log(`    top gemm shapes (transA transB M×N×K): ${shapes.join(", ")}`);
  totals.clear();
  gemmShapes.clear();
}

const totals = new Map<string, number>();
const base = getKernels();
if ("setNumThreads" in base && typeof base.setNumThreads === "function") base.setNumThreads(threads);
const kernels = profile ? profiled(base, totals) : base;
// The per-CPU GEMM choice (docs/kernels.md#per-cpu-gemm-choice), made now so the line below names it.
const nativeBase = base.name === "native" ? (base as NativeKernels) : null;
const tuned = nativeBase?.tuneGemm() ?? null;
const blocks = nativeBase === null ? "" : ` KC ${nativeBase.gemmBlocks.kc} NC ${nativeBase.gemmBlocks.nc}`;
console.log(`CPU: ${cpuDescription()}`);
console.log(
  `kernels: ${base.name} (gemm ${base.gemmBackend}${blocks}${tuned === null ? "" : `, ${tuned.source}`}, ${threads} threads); SmolLM2-135M shape, random weights; load ${loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}`,
);
const weights = EngineModel.randomWeights(config, 0);

// ---- 1. LoRA training step ----
const model = EngineModel.create(config, weights, { mode: "lora", rank, seed: 0, trainAttn: true, trainMlp: true, trainUnembed: true }, kernels);
const tokenBatch = benchBatch(config.vocabSize, seqs, len);
const batch: SequenceInput[] = tokenBatch.tokens.map((tokens, s) => ({
  inputTokens: Int32Array.from(tokens),
  lossInputs: { target_tokens: Int32Array.from(tokenBatch.targets[s]), weights: new Float32Array(len).fill(1) },
}));
let state = 4242;
const rand = (): number => {
  state = (Math.imul(state, 1103515245) + 12345) >>> 0;
  return state / 4294967296;
};
const adam = { learning_rate: 1e-4, beta1: 0.9, beta2: 0.95, eps: 1e-12, weight_decay: 0, grad_clip_norm: 0 };
const wall: number[] = [];
const cpu: number[] = [];
for (let s = 0; s < steps + 1; s++) {
  const c0 = cpuSeconds();
  const t0 = performance.now();
  model.forwardBackward(batch, "cross_entropy", undefined, true);
  const t1 = performance.now();
  model.optimStep(adam);
  const t2 = performance.now();
  const c = cpuSeconds() - c0;
  console.log(
    `  lora step ${s}${s === 0 ? " (warm-up)" : ""}: forward_backward ${fmt((t1 - t0) / 1000)}s, optim_step ${fmt((t2 - t1) / 1000, 3)}s, cpu ${fmt(c)}s`,
  );
  report(totals, t2 - t0);
  if (s > 0) {
    wall.push((t2 - t0) / 1000);
    cpu.push(c);
  }
}
const stepWall = median(wall);
const stepCpu = median(cpu);
console.log(
  `LoRA r${rank} step (fwd_bwd + optim, ${seqs}×${len} tokens): median ${fmt(stepWall)} s wall, ${fmt(stepCpu)} s cpu; ${fmt((seqs * len) / stepWall, 0)} tokens/s`,
);

// ---- 2. decoding ----
const inf = inferenceModel(buildInferenceWeights(config, weights, null), kernels);
const handle = benchHandle(inf, config);
const scheduler = new DecodeScheduler();
const prompt = Int32Array.from({ length: 16 }, () => Math.floor(rand() * config.vocabSize));
async function decode(n: number, requests: number): Promise<Timing> {
  const t = await timeRequests(scheduler, handle, requests, n, prompt, genTokens);
  report(totals, t.wall * 1000);
  return t;
}
await decode(2, 1); // warm-up
const batched = await decode(numSamples, 1);
const single = await decode(1, 1);
const batchedTps = batched.tokens / batched.wall;
const singleTps = single.tokens / single.wall;
console.log(
  `decode ${numSamples} samples × ${genTokens} tokens batched: ${fmt(batched.wall)} s wall (${fmt(batched.cpu)} s cpu), ${fmt(batchedTps, 1)} tokens/s`,
);
console.log(`decode 1 sample × ${genTokens} tokens: ${fmt(single.wall)} s wall (${fmt(single.cpu)} s cpu), ${fmt(singleTps, 1)} tokens/s`);
console.log(
  `decode speed-up per token, batched ${numSamples} vs one at a time: ${fmt(batchedTps / singleTps)}× wall, ${fmt(single.cpu / single.tokens / (batched.cpu / batched.tokens))}× cpu (goal ≥ 3×)`,
);

// ---- 3. GEMM ----
function gflops(M: number, N: number, K: number, tA: boolean, tB: boolean): number {
  const fill = (n: number): Float32Array => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37) * 0.5);
  const A = fill(M * K);
  const B = fill(K * N);
  const C = new Float32Array(M * N);
  for (let i = 0; i < 2; i++) base.gemm(tA, tB, M, N, K, 1, A, B, 0, C);
  const times: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t = performance.now();
    base.gemm(tA, tB, M, N, K, 1, A, B, 0, C);
    times.push(performance.now() - t);
  }
  return (2 * M * N * K) / (median(times) / 1000) / 1e9;
}
const shapes: [string, number, number, number, boolean, boolean][] = [
  ["x·W^T 1024×576→1536", 1024, 1536, 576, false, true],
  ["dW 1536×576 over 1024", 1536, 576, 1024, true, false],
  ["logits 1024×576→8192", 1024, 8192, 576, false, true],
  ["decode 16×576→1536", 16, 1536, 576, false, true],
  ["decode 1×576→1536", 1, 1536, 576, false, true],
];
const measured = shapes.map(([name, M, N, K, tA, tB]) => [name, gflops(M, N, K, tA, tB)] as const);
console.log(`GEMM GFLOP/s: ${measured.map(([name, g]) => `${name} ${fmt(g, 1)}`).join("; ")}`);
// The step's matrix products (bench/lib/shapes.ts): forward and input gradients through the frozen
// linears and the head, the rank-32 adapter products, and causal attention.
const flops = loraStepFlops(config, seqs * len, len, rank);
const stepFlops = flops.dense + flops.lora + flops.attention;
const gemmRate = measured[0]![1] * 1e9;
const limit = stepFlops / gemmRate;
console.log(
  `GEMM-bound limit of the step: ${fmt(stepFlops / 1e9, 0)} GFLOP (dense ${fmt(flops.dense / 1e9, 0)}, LoRA ${fmt(flops.lora / 1e9, 0)}, attention ${fmt(flops.attention / 1e9, 0)}) at ${fmt(gemmRate / 1e9, 0)} GFLOP/s = ${fmt(limit)} s (dense only ${fmt(flops.dense / gemmRate)} s); ours is ${fmt(stepWall / limit)}× the limit (wall)`,
);
// The same limit in CPU seconds, from the x·Wᵀ product's GFLOP per CPU-second: unlike wall time it
// does not move with what else the host runs.
const cpuRate = ((): number => {
  const [M, N, K] = [seqs * len, config.intermediateSize, config.hiddenSize];
  const A = new Float32Array(M * K).fill(0.5);
  const B = new Float32Array(N * K).fill(0.25);
  const C = new Float32Array(M * N);
  base.gemm(false, true, M, N, K, 1, A, B, 0, C);
  const c0 = cpuSeconds();
  for (let i = 0; i < 7; i++) base.gemm(false, true, M, N, K, 1, A, B, 0, C);
  return (7 * 2 * M * N * K) / (cpuSeconds() - c0);
})();
console.log(
  `in CPU seconds: ${fmt(stepFlops / cpuRate)} CPU-s at ${fmt(cpuRate / 1e9, 0)} GFLOP per CPU-second; ours is ${fmt(stepCpu / (stepFlops / cpuRate))}× it`,
);

// ---- 4. PyTorch ----
// The peer users install: torch from pip (2.13 CPU with MKL on this machine's index) in the
// project's Python 3.11 venv, made on first use — not whatever the system python3 imports.
if (!argv.includes("--no-torch")) {
  const script = fileURLToPath(new URL("./torch_lora_step.py", import.meta.url));
  let python: string | undefined;
  try {
    python = ensurePythonVenv(["torch", "transformers", "peft"]);
  } catch (err) {
    console.log(`PyTorch: no venv with torch (${(err as Error).message.split("\n")[0]}); pass --no-torch to skip`);
  }
  if (python !== undefined) {
    const r = spawnSync(python, [script, "--steps", String(torchSteps), "--rank", String(rank), "--threads", String(threads)], { encoding: "utf8" });
    const line = r.stdout.trim().split("\n").pop() ?? "";
    try {
      const t = JSON.parse(line) as { torch: string; step_s: number; cpu_s: number; tokens_per_s: number };
      console.log(
        `PyTorch ${t.torch} (${threads} threads, ${python}), the same graph in plain torch: median ${fmt(t.step_s)} s wall, ${fmt(t.cpu_s)} s cpu; ${fmt(t.tokens_per_s, 0)} tokens/s; ${fmt(t.step_s / limit)}× the GEMM-bound limit`,
      );
      console.log(`ratio ours/torch (step time, lower is better; issue 19 goal ≤ 0.40): ${fmt(stepWall / t.step_s)} wall, ${fmt(stepCpu / t.cpu_s)} cpu`);
    } catch {
      console.log(`PyTorch run failed (exit ${r.status}): ${(r.stderr || line).slice(-500)}`);
    }
    try {
      const peft = runPeftPeer(python, configOnlyDir("smollm2-135m", config), writeBatchFile("smollm2-135m", tokenBatch), { steps: torchSteps, rank, threads });
      console.log(
        `transformers ${peft.transformers} + PEFT ${peft.peft} (LlamaForCausalLM, random init): median ${fmt(peft.step_s)} s wall, ${fmt(peft.cpu_s)} s cpu; ${fmt(peft.step_s / limit)}× the GEMM-bound limit`,
      );
      console.log(`ratio ours/(transformers + PEFT): ${fmt(stepWall / peft.step_s)} wall, ${fmt(stepCpu / peft.cpu_s)} cpu`);
    } catch (err) {
      console.log((err as Error).message);
    }
  }
}
console.log(
  `load at the end ${loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")}`,
);
