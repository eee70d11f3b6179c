// Decoding speed of the embedded sampler on a random model of a real shape (default SmolLM2-135M:
// hidden 576, 30 layers, 9 heads / 3 KV heads, ffn 1536, vocab 49152, tied; `--shape llama-3.2-1b`
// (or `llama-1b`) for Llama-3.2-1B: hidden 2048, 16 layers, 32 / 8 heads, ffn 8192, vocab 128256,
// tied, llama3 RoPE scaling; `qwen3-0.6b` and `qwen3-30b-a3b-2l`, two layers of Qwen3-30B-A3B, too):
//   1. the machine's memory read bandwidth (sum of squares over 1 GiB on every core);
//   2. tokens/s decoding 1, 4 and 16 samples of one request (16-token prompt, --tokens each,
//      temperature 1), the per-token speed-up of 4 and 16 over 1, and for one sample the weight
//      bytes read per token × tokens/s (GB/s) next to the measured bandwidth;
//   3. 16 concurrent one-sample requests (an RL batch: prompts prefilled together);
//   4. prefill tokens/s of one --prompt-token prompt;
//   5. compute_logprobs of 16 64-token prompts sent together (packed into shared forwards) against
//      one forward per prompt.
// Usage: npm run bench:decode [-- --shape llama-1b --layers 16 --tokens 64 --prompt 256 --lora 32 --base bf16|fp32]
// `--peer llama.cpp` instead compares with llama.cpp on both sides' loaders (bench/lib/decodePeer.ts).
// --base: base matrices kept bf16 as a bf16 checkpoint gives them (the default; a decode step reads
// half the bytes) or float32.
// Every timing is wall time and process CPU time: on a shared machine the wall time also counts
// the time other processes held the cores. The load average is printed first.
import { loadavg } from "node:os";
import { getKernels, type NativeKernels } from "../src/engine/kernels/index.ts";
import type { ModelConfig } from "../src/engine/model/config.ts";
import { benchShape } from "./lib/shapes.ts";
import { EngineModel } from "../src/engine/model/model.ts";
import { inferenceModel } from "../src/engine/sampling/forward.ts";
import { computePromptLogprobs, DecodeScheduler } from "../src/engine/sampling/scheduler.ts";
import { buildInferenceWeights, type InferenceWeights, type Projection } from "../src/engine/sampling/weights.ts";
import { asBase, baseKindArg } from "./lib/bf16Base.ts";
import { comparePeerDecode } from "./lib/decodePeer.ts";
import { benchHandle, promptMaker, timeRequests, type Timing } from "./lib/decodeRun.ts";

const argv = process.argv.slice(2);
if (argv.includes("--peer")) {
  await comparePeerDecode(argv);
  process.exit(0);
}
function arg(name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
}
const shape = argv.includes("--shape") ? argv[argv.indexOf("--shape") + 1] : "smollm2-135m";
const genTokens = arg("tokens", 64);
const promptTokens = arg("prompt", 256);
const loraRank = arg("lora", 0);
const baseKind = baseKindArg(argv);

// The shapes of bench/lib/shapes.ts; `llama-1b` is kept as a short name for llama-3.2-1b.
const preset = benchShape(shape === "llama-1b" ? "llama-3.2-1b" : shape);
const config: ModelConfig = { ...preset, numLayers: arg("layers", preset.numLayers) };

const fmt = (x: number, d = 2): string => x.toFixed(d);

const kernels = getKernels();
console.log(
  `load average ${loadavg()
    .map((x) => fmt(x))
    .join(
      " ",
    )}; kernels ${kernels.name} (gemm ${kernels.gemmBackend}); ${shape} shape with ${config.numLayers} layers, random ${baseKind} weights${loraRank > 0 ? `, LoRA r${loraRank} on every linear and the head (unmerged)` : ""}`,
);

// ---- 1. memory bandwidth ----
/** Reading 1 GiB on every pool thread (the addon's probe; best of 5): what streaming weights can reach. */
function bandwidth(): number {
  const probe = "readBandwidthProbe" in kernels ? (kernels as NativeKernels).readBandwidthProbe : null;
  if (probe === null) return NaN;
  const a = new Float32Array(256 * 1024 * 1024).fill(1);
  let best = Infinity;
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    probe(a, a.length);
    best = Math.min(best, performance.now() - t);
  }
  return a.byteLength / (best / 1000) / 1e9;
}
const bw = bandwidth();
console.log(
  `memory read bandwidth (1 GiB read on ${"numThreads" in kernels ? (kernels as NativeKernels).numThreads : 1} threads, best of 5): ${fmt(bw, 1)} GB/s`,
);

// ---- the sampler ----
const weights = asBase(EngineModel.randomWeights(config, 0), baseKind);
let adapter = null;
if (loraRank > 0) {
  const model = EngineModel.create(config, weights, { mode: "lora", rank: loraRank, seed: 0, trainAttn: true, trainMlp: true, trainUnembed: true }, kernels);
  // A fresh adapter has B = 0; give it values so its products are real work.
  const tensors = model.trainableTensors();
  for (const t of tensors.values()) for (let i = 0; i < t.length; i++) t[i] = ((i * 7919) % 1000) * 1e-6;
  adapter = { rank: loraRank, tensors };
}
const w = buildInferenceWeights(config, weights, adapter);
const inf = inferenceModel(w, kernels);
const handle = benchHandle(inf, config);

/**
 * Bytes of weights one decode step of one sample reads: every projection (of a mixture of experts,
 * the router and k of the E experts, as an average), its adapter, the head.
 */
function bytesPerStep(iw: InferenceWeights): number {
  const p = (x: Projection): number => x.weight.byteLength + (x.lora === null ? 0 : x.lora.a.byteLength + x.lora.b.byteLength);
  const moe = iw.config.moe;
  let n = p(iw.head);
  for (const l of iw.layers) {
    for (const x of [l.q, l.k, l.v, l.o, l.gate, l.up, l.down]) if (x !== null) n += p(x);
    if (l.moe === null || moe === undefined) continue;
    n += l.moe.router.byteLength;
    for (const e of l.moe.experts) n += ((p(e.gate) + (e.up === null ? 0 : p(e.up)) + p(e.down)) * moe.topK) / moe.numExperts;
  }
  return n;
}
const stepBytes = bytesPerStep(w);

const scheduler = new DecodeScheduler();
const randomPrompt = promptMaker(config.vocabSize);
const prompt = randomPrompt(16);
const run = (requests: number, samples: number, p: Int32Array, maxTokens: number): Promise<Timing> =>
  timeRequests(scheduler, handle, requests, samples, p, maxTokens);

// ---- 2. decode at 1, 4, 16 samples ----
await run(1, 2, prompt, 4); // warm-up
const perSamples = new Map<number, Timing>();
for (const n of [1, 4, 16]) {
  const t = await run(1, n, prompt, genTokens);
  perSamples.set(n, t);
  console.log(`decode ${n} sample(s) × ${genTokens} tokens: ${fmt(t.wall)} s wall (${fmt(t.cpu)} s cpu), ${fmt(t.tokens / t.wall, 1)} tokens/s`);
}
const tps = (t: Timing): number => t.tokens / t.wall;
const cpuPerToken = (t: Timing): number => t.cpu / t.tokens;
const one = perSamples.get(1) as Timing;
for (const n of [4, 16]) {
  const t = perSamples.get(n) as Timing;
  console.log(
    `per-token speed-up, ${n} samples vs 1: ${fmt(tps(t) / tps(one))}× wall, ${fmt(cpuPerToken(one) / cpuPerToken(t))}× cpu${n === 16 ? " (goal ≥ 8×)" : ""}`,
  );
}
const gbs = (stepBytes * tps(one)) / 1e9;
console.log(
  `single stream: ${fmt(stepBytes / 1e9, 3)} GB of weights per token × ${fmt(tps(one), 1)} tokens/s = ${fmt(gbs, 1)} GB/s (${fmt((100 * gbs) / bw, 0)} % of the measured ${fmt(bw, 1)} GB/s)`,
);

// ---- 3. an RL-style batch: 16 requests of one sample ----
const rl = await run(16, 1, prompt, genTokens);
console.log(
  `16 concurrent requests × 1 sample × ${genTokens} tokens: ${fmt(rl.wall)} s wall (${fmt(rl.cpu)} s cpu), ${fmt(tps(rl), 1)} tokens/s, ${fmt(tps(rl) / tps(one))}× one sample`,
);

// ---- 4. prefill ----
const long = randomPrompt(promptTokens);
const pf = await run(1, 1, long, 1);
console.log(
  `prefill ${promptTokens} prompt tokens (+1 sampled): ${fmt(pf.wall)} s wall (${fmt(pf.cpu)} s cpu), ${fmt(promptTokens / pf.wall, 0)} prompt tokens/s`,
);

// ---- 5. compute_logprobs: 16 prompts at once through the scheduler vs one forward each ----
const scored = Array.from({ length: 16 }, () => randomPrompt(64));
let t0 = performance.now();
await Promise.all(scored.map((p) => scheduler.submitLogprobs(handle, p)));
const batchedS = (performance.now() - t0) / 1000;
t0 = performance.now();
for (const p of scored) computePromptLogprobs(inf, p);
const aloneS = (performance.now() - t0) / 1000;
console.log(
  `compute_logprobs of 16 prompts × 64 tokens: batched ${fmt(batchedS)} s (${fmt(1024 / batchedS, 0)} tokens/s), one at a time ${fmt(aloneS)} s (${fmt(1024 / aloneS, 0)} tokens/s), ${fmt(aloneS / batchedS)}×`,
);
