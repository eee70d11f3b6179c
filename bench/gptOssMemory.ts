// GPT-OSS-20B's resident memory (docs/numerics.md#gpt-oss): loads a folder written by
// bench/make_gpt_oss_mxfp4.py (the real config cut to a few layers, MXFP4 experts) the way a
// LoRA session does (16-bit matrices and MXFP4 experts mapped, nothing widened up front), builds
// a rank-32 LoRA model and a sampler over the same base, prefills a prompt (routing to most
// experts, so their pages are touched) and decodes a few tokens; prints the process's peak RSS,
// the file's bytes per layer and outside the layers, and the per-token times. Run it for 1 and 2
// layers: the difference is one layer's resident cost, and 24 layers extrapolate from it.
// Usage: npm run bench:gpt_oss_memory -- DIR [--prompt 64] [--decode 8]
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { getKernels } from "../src/engine/kernels/index.ts";
import { EngineModel } from "../src/engine/model/model.ts";
import { readSafetensorsHeader } from "../src/engine/safetensors/index.ts";
import { forwardHidden, headLogits, inferenceModel, KvCache } from "../src/engine/sampling/forward.ts";
import { computePromptLogprobs } from "../src/engine/sampling/scheduler.ts";
import { buildInferenceWeights } from "../src/engine/sampling/weights.ts";
import { loadBaseModelDir } from "../src/engine/storage/loadModel.ts";

const argv = process.argv.slice(2);
const dir = argv[0];
if (dir === undefined || dir.startsWith("--")) throw new Error("usage: gptOssMemory.ts DIR [--prompt 64] [--decode 8]");
const arg = (name: string, fallback: number): number => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
};
const promptLen = arg("prompt", 64);
const decodeSteps = arg("decode", 8);
const MiB = 1024 * 1024;
const rss = (): number => process.memoryUsage().rss / MiB;
const peak = (): number => process.resourceUsage().maxRSS / 1024;

const file = join(dir, "model.safetensors");
const header = readSafetensorsHeader(file);
let layerBytes = 0;
let otherBytes = 0;
for (const e of header.entries.values()) {
  if (e.name.startsWith("model.layers.0.")) layerBytes += e.end - e.begin;
  else if (!e.name.startsWith("model.layers.")) otherBytes += e.end - e.begin;
}
const config0 = JSON.parse(readFileSync(join(dir, "config.json"), "utf8")) as { num_hidden_layers: number };

const k = getKernels();
const start = rss();
const { config, weights } = loadBaseModelDir(dir, "resident");
const loaded = rss();
const model = EngineModel.create(config, weights, { mode: "lora", rank: 32, seed: 0, trainAttn: true, trainMlp: true, trainUnembed: true }, k);
const inf = inferenceModel(buildInferenceWeights(config, model.baseWeights(), { rank: 32, tensors: model.trainableTensors() }), k, "f32");
let seed = 7;
const rand = (): number => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed / 2 ** 32;
};
const prompt = Int32Array.from({ length: promptLen }, () => Math.floor(rand() * config.vocabSize));
let t0 = performance.now();
computePromptLogprobs(inf, prompt);
const prefillMs = performance.now() - t0;
const cache = new KvCache(config, 1, promptLen + decodeSteps, "f32");
forwardHidden(
  inf,
  cache,
  prompt,
  Int32Array.from({ length: promptLen }, (_, i) => i),
  new Int32Array(promptLen),
  Int32Array.of(promptLen - 1),
);
t0 = performance.now();
for (let s = 0; s < decodeSteps; s++) {
  const hidden = forwardHidden(inf, cache, Int32Array.of(s % config.vocabSize), Int32Array.of(promptLen + s), Int32Array.of(0), null);
  headLogits(inf, hidden, 1);
}
const decodeMs = (performance.now() - t0) / decodeSteps;
console.log(
  JSON.stringify(
    {
      dir,
      layers: config0.num_hidden_layers,
      kernels: k.name,
      file_mib: statSync(file).size / MiB,
      layer_file_mib: layerBytes / MiB,
      non_layer_file_mib: otherBytes / MiB,
      rss_start_mib: start,
      rss_after_load_mib: loaded,
      rss_end_mib: rss(),
      peak_rss_mib: peak(),
      prefill_ms: prefillMs,
      prefill_tokens: promptLen,
      decode_ms_per_token: decodeMs,
    },
    null,
    1,
  ),
);
