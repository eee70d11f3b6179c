// The engine's side of the real-size benchmark, run in its own process so that its peak memory
// (VmHWM) is the engine's alone: loads a Hugging Face model folder, trains LoRA on the given batch
// (forward_backward + optim_step per step) and prints one JSON line, like bench/peft_lora_step.py.
// Usage: node --import tsx bench/lib/oursStep.ts --model-dir DIR --batch batch.json [--steps 2 --rank 32]
import { readFileSync } from "node:fs";
import { getKernels } from "../../src/engine/kernels/index.ts";
import { baseWeightsMode, loadBaseModelDir, type BaseWeightsMode } from "../../src/engine/storage/loadModel.ts";
import { EngineModel, type SequenceInput } from "../../src/engine/model/model.ts";
import { peakRssBytes, rssBytes, type BenchBatch, type StepResult } from "./peers.ts";

export interface OursResult extends StepResult {
  load_s: number;
  /** How the frozen base was held: the checkpoint's bf16 matrices mapped (the default) or float32. */
  base: BaseWeightsMode;
  /** Wall GFLOP/s of x·W^T at the model's MLP shape on all threads, measured after the steps. */
  gemm_gflops: number;
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const cpuSeconds = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = arg("model-dir");
const batchFile = arg("batch");
if (dir === undefined || batchFile === undefined) throw new Error("usage: oursStep.ts --model-dir DIR --batch FILE [--steps N --rank R]");
const steps = Number(arg("steps") ?? 2);
const rank = Number(arg("rank") ?? 32);
const kernels = getKernels();

const t0 = performance.now();
// As the engine loads a LoRA base: COOKBOOK_BASE_WEIGHTS=fp32 (engineReal.ts --base fp32) widens it.
const baseMode = baseWeightsMode(kernels.name);
const { config, weights } = loadBaseModelDir(dir, baseMode);
const model = EngineModel.create(config, weights, { mode: "lora", rank, seed: 0, trainAttn: true, trainMlp: true, trainUnembed: true }, kernels);
const loadS = (performance.now() - t0) / 1000;
const rssAfterLoad = rssBytes();

const batch = JSON.parse(readFileSync(batchFile, "utf8")) as BenchBatch;
const data: SequenceInput[] = batch.tokens.map((tokens, s) => ({
  inputTokens: Int32Array.from(tokens),
  lossInputs: { target_tokens: Int32Array.from(batch.targets[s]), weights: new Float32Array(tokens.length).fill(1) },
}));
const adam = { learning_rate: 1e-4, beta1: 0.9, beta2: 0.95, eps: 1e-12, weight_decay: 0, grad_clip_norm: 0 };
const wall: number[] = [];
const cpu: number[] = [];
const losses: number[] = [];
for (let s = 0; s < steps + 1; s++) {
  const c0 = cpuSeconds();
  const w0 = performance.now();
  losses.push(model.forwardBackward(data, "cross_entropy", undefined, true).lossSum);
  model.optimStep(adam);
  if (s > 0) {
    wall.push((performance.now() - w0) / 1000);
    cpu.push(cpuSeconds() - c0);
  }
}
const peak = peakRssBytes();

const T = batch.tokens.length * batch.tokens[0].length;
const { hiddenSize: D, intermediateSize: F } = config;
const x = new Float32Array(T * D).fill(0.5);
const w = new Float32Array(F * D).fill(0.25);
const y = new Float32Array(T * F);
const times: number[] = [];
for (let i = 0; i < 6; i++) {
  const g0 = performance.now();
  kernels.gemm(false, true, T, F, D, 1, x, w, 0, y);
  if (i > 0) times.push(performance.now() - g0);
}
const result: OursResult = {
  step_s: median(wall),
  steps_s: wall,
  cpu_s: median(cpu),
  losses,
  peak_rss_bytes: peak,
  rss_after_load_bytes: rssAfterLoad,
  load_s: loadS,
  base: baseMode,
  gemm_gflops: (2 * T * F * D) / (median(times) / 1000) / 1e9,
};
console.log(JSON.stringify(result));
