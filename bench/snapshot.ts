// Sampler snapshots at a Llama-3.2-1B shape (hidden 2048, ffn 8192, 32 heads / 8 KV heads, head_dim
// 64, vocab 128256, tied; random weights), in process: train → snapshot → sample, twice, with a
// LoRA r32 adapter on every linear and the LM head. Prints per snapshot the CPU seconds of
// creating the sampler (what saveWeightsAndGetSamplingClient costs in the worker) and the peak RSS
// of the whole loop next to the base weights' size. The real model has 16 layers; the default is
// fewer (--layers) so that the benchmark fits next to other work on a shared machine.
// Usage: npm run bench:snapshot [-- --layers 4 --tokens 8]
import { getKernels } from "../src/engine/kernels/index.ts";
import type { ModelConfig } from "../src/engine/model/config.ts";
import { EngineModel } from "../src/engine/model/model.ts";
import { resolveSampleRequest } from "../src/engine/sampling/request.ts";
import { SamplerRegistry } from "../src/engine/sampling/samplers.ts";
import { DecodeScheduler } from "../src/engine/sampling/scheduler.ts";

const argv = process.argv.slice(2);
function arg(name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
}
const layers = arg("layers", 4);
const genTokens = arg("tokens", 8);
const rank = 32;
const config: ModelConfig = {
  modelType: "llama", vocabSize: 128256, hiddenSize: 2048, intermediateSize: 8192, numLayers: layers, numHeads: 32,
  numKvHeads: 8, headDim: 64, rmsNormEps: 1e-5, ropeTheta: 500000, ropeScaling: null, maxPositionEmbeddings: 131072,
  tieWordEmbeddings: true, attentionBias: false, qkNorm: false,
};
const cpuSeconds = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const gb = (bytes: number): string => (bytes / 1024 ** 3).toFixed(2);
const peakRss = (): number => process.resourceUsage().maxRSS * 1024;

const kernels = getKernels();
const weights = EngineModel.randomWeights(config, 0);
let baseBytes = 0;
for (const w of weights.values()) baseBytes += w.byteLength;
const model = EngineModel.create(config, weights, { mode: "lora", rank, seed: 0, trainAttn: true, trainMlp: true, trainUnembed: true }, kernels);
const tokens = Int32Array.from({ length: 33 }, (_, i) => (i * 7919) % config.vocabSize);
const batch = [{ inputTokens: tokens.subarray(0, 32), lossInputs: { target_tokens: tokens.subarray(1), weights: new Float32Array(32).fill(1) } }];
const registry = new SamplerRegistry(kernels);
const scheduler = new DecodeScheduler();
console.log(`Llama-3.2-1B shape with ${layers} of 16 layers: base weights ${gb(baseBytes)} GB fp32; kernels ${kernels.name ?? "?"}; RSS after setup ${gb(process.memoryUsage().rss)} GB`);
const snapshotCpu: number[] = [];
for (let round = 1; round <= 2; round++) {
  model.forwardBackward(batch, "cross_entropy", undefined, true);
  model.optimStep({ learning_rate: 1e-4, beta1: 0.9, beta2: 0.95, eps: 1e-8, weight_decay: 0, grad_clip_norm: 0 });
  const c0 = cpuSeconds();
  // What the worker does for saveWeightsAndGetSamplingClient: copy the adapter, build the sampler.
  const sampler = registry.add(`snap${round}`, { config, weights: model.baseWeights(), adapter: { rank, tensors: model.trainableTensors() } });
  sampler.model();
  snapshotCpu.push(cpuSeconds() - c0);
  const d0 = cpuSeconds();
  const r = await scheduler.submit(sampler, resolveSampleRequest({
    prompt: tokens.subarray(0, 16), numSamples: 2, params: { max_tokens: genTokens, temperature: 1, seed: round },
    promptLogprobs: false, topkPromptLogprobs: 0, fallbackSeed: 0,
  }, sampler.limits));
  const decodeCpu = cpuSeconds() - d0;
  console.log(`round ${round}: snapshot ${snapshotCpu[round - 1].toFixed(2)} CPU-s; sampled ${r.sequences.map((s) => s.tokens.length).join("+")} tokens in ${decodeCpu.toFixed(2)} CPU-s; peak RSS so far ${gb(peakRss())} GB`);
}
const peak = peakRss();
console.log(`snapshot CPU-s: ${snapshotCpu.map((x) => x.toFixed(2)).join(", ")}; peak RSS ${gb(peak)} GB = base ${gb(baseBytes)} GB + ${gb(peak - baseBytes)} GB (${((peak - baseBytes) / baseBytes).toFixed(2)}× base)`);
