// Times one LoRA forward_backward + optim_step on a random model of a real architecture's shape
// (default SmolLM2-135M: hidden 576, 30 layers, 9 heads / 3 KV heads, ffn 1536, vocab 49152, tied)
// with 8 × 128 tokens.
// Usage: npm run bench:engine_step [-- --shape smollm2-135m|qwen3-0.6b|llama-3.2-1b --steps N --seqs 8
//        --len 128 --rank 32 --layers N --profile --base bf16|fp32]
// --base: the frozen base as a bf16 checkpoint gives it (matrices kept 16-bit, the default) or float32.
import { loadavg } from "node:os";
import { getKernels, type Kernels } from "../src/engine/kernels/index.ts";
import { EngineModel, type SequenceInput } from "../src/engine/model/model.ts";
import { asBase, baseKindArg } from "./lib/bf16Base.ts";
import { benchShape, loraStepFlops } from "./lib/shapes.ts";

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
function strArg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? String(process.argv[i + 1]) : fallback;
}

const shapeName = strArg("shape", "smollm2-135m");
const shape = benchShape(shapeName);
const config = { ...shape, numLayers: arg("layers", shape.numLayers) };
const steps = arg("steps", 3);
const seqs = arg("seqs", 8);
const len = arg("len", 128);
const rank = arg("rank", 32);

interface Tally {
  wall: number;
  cpu: number;
  calls: number;
  flops: number;
}

const cpuMicros = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/**
 * Wraps every kernel to add up its wall and process CPU time (--profile). GEMMs are keyed by
 * shape and transposes as well, so the report shows GFLOP per CPU-second for each product.
 */
function profiled(k: Kernels, totals: Map<string, Tally>): Kernels {
  const wrapped: Record<string, unknown> = {};
  for (const key of Object.keys(k) as Array<keyof Kernels>) {
    const v = k[key];
    if (typeof v !== "function") {
      wrapped[key] = v;
      continue;
    }
    const fn = v as (...a: unknown[]) => unknown;
    wrapped[key] = (...a: unknown[]): unknown => {
      const c = cpuMicros();
      const t = performance.now();
      const r = fn.apply(k, a);
      const wall = performance.now() - t;
      const cpu = (cpuMicros() - c) / 1000;
      let flops = 0;
      const names: string[] = [key];
      if (key === "gemm") {
        const [tA, tB, M, N, K] = a as [boolean, boolean, number, number, number];
        flops = 2 * M * N * K;
        names.push(`gemm ${tA ? "T" : "N"}${tB ? "T" : "N"} ${M}x${N}x${K}`);
      }
      for (const name of names) {
        const e = totals.get(name) ?? { wall: 0, cpu: 0, calls: 0, flops: 0 };
        e.wall += wall;
        e.cpu += cpu;
        e.calls += 1;
        e.flops += flops;
        totals.set(name, e);
      }
      return r;
    };
  }
  return wrapped as unknown as Kernels;
}

function report(totals: Map<string, Tally>): void {
  const rows = [...totals].sort((a, b) => b[1].cpu - a[1].cpu);
  const kernelCpu = rows.filter(([n]) => !n.startsWith("gemm ")).reduce((s, [, e]) => s + e.cpu, 0);
  console.log(`  kernels: ${(kernelCpu / 1000).toFixed(2)} cpu-s in kernel calls (name: wall s / cpu s / calls [/ GFLOP per cpu-s])`);
  for (const [name, e] of rows) {
    if (e.cpu < 20 && e.wall < 20) continue;
    const rate = e.flops > 0 ? ` / ${(e.flops / (e.cpu / 1000) / 1e9).toFixed(1)}` : "";
    console.log(`    ${name}: ${(e.wall / 1000).toFixed(2)} / ${(e.cpu / 1000).toFixed(2)} / ${e.calls}${rate}`);
  }
  totals.clear();
}

const totals = new Map<string, Tally>();
const profile = process.argv.includes("--profile");
const kernels = profile ? profiled(getKernels(), totals) : getKernels();
let t0 = performance.now();
const baseKind = baseKindArg(process.argv);
const weights = asBase(EngineModel.randomWeights(config, 0), baseKind);
const model = EngineModel.create(config, weights, { mode: "lora", rank, seed: 0, trainAttn: true, trainMlp: true, trainUnembed: true }, kernels);
console.log(
  `kernels: ${kernels.name} (gemm: ${kernels.gemmBackend}); ${shapeName} shape, ${config.numLayers} layers, ${baseKind} base; model built in ${((performance.now() - t0) / 1000).toFixed(2)} s`,
);
const flops = loraStepFlops(config, seqs * len, len, rank);
console.log(
  `step products: ${(flops.dense / 1e9).toFixed(0)} GFLOP dense + ${(flops.lora / 1e9).toFixed(0)} LoRA + ${(flops.attention / 1e9).toFixed(0)} attention`,
);

let state = 12345;
const rand = (): number => {
  state = (Math.imul(state, 1103515245) + 12345) >>> 0;
  return state / 4294967296;
};
const batch: SequenceInput[] = Array.from({ length: seqs }, () => ({
  inputTokens: Int32Array.from({ length: len }, () => Math.floor(rand() * config.vocabSize)),
  lossInputs: {
    target_tokens: Int32Array.from({ length: len }, () => Math.floor(rand() * config.vocabSize)),
    weights: new Float32Array(len).fill(1),
  },
}));

const adam = { learning_rate: 1e-4, beta1: 0.9, beta2: 0.95, eps: 1e-12, weight_decay: 0, grad_clip_norm: 0 };
// CPU time of the whole process (all kernel threads): on a busy machine wall time overstates the
// cost, and cpu / threads estimates the wall time on an idle one.
const cpuSeconds = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
for (let s = 0; s < steps; s++) {
  const c0 = cpuSeconds();
  t0 = performance.now();
  const out = model.forwardBackward(batch, "cross_entropy", undefined, true);
  const t1 = performance.now();
  const metrics = model.optimStep(adam);
  const t2 = performance.now();
  const tokens = seqs * len;
  console.log(
    `step ${s}: forward_backward ${((t1 - t0) / 1000).toFixed(2)} s, optim_step ${((t2 - t1) / 1000).toFixed(3)} s, ` +
      `total ${((t2 - t0) / 1000).toFixed(2)} s, ${(tokens / ((t2 - t0) / 1000)).toFixed(0)} tok/s; ` +
      `loss/token ${(out.lossSum / tokens).toFixed(4)}, grad_norm ${metrics["grad_norm:mean"].toFixed(4)}; cpu ${(cpuSeconds() - c0).toFixed(2)} s; load ${loadavg()[0].toFixed(1)}`,
  );
  if (profile) report(totals);
}
t0 = performance.now();
model.forwardBackward(batch, "cross_entropy", undefined, false);
console.log(`forward only: ${((performance.now() - t0) / 1000).toFixed(2)} s`);
