// The engine's side of `npm run bench:decode -- --peer llama.cpp`, in its own process so its peak
// memory (VmHWM) is the engine's alone: loads a Hugging Face model folder as the engine loads a
// sampler's base (COOKBOOK_BASE_WEIGHTS decides bf16 resident or float32), then, for each stream
// count B, times one request of B samples with a --prompt-token prompt: once with max_tokens 1
// (prefill, one draw per sample) and once with --tokens, so the difference is
// --tokens − 1 decode steps of B rows. Prints one JSON line.
// Usage: node --import tsx bench/lib/decodeSide.ts --model-dir DIR [--prompt 128 --tokens 128 --streams 1,4,16 --reps 3]
import { getKernels } from "../../src/engine/kernels/index.ts";
import { inferenceModel } from "../../src/engine/sampling/forward.ts";
import { DecodeScheduler } from "../../src/engine/sampling/scheduler.ts";
import { buildInferenceWeights } from "../../src/engine/sampling/weights.ts";
import { baseWeightsMode, loadBaseModelDir, type BaseWeightsMode } from "../../src/engine/storage/loadModel.ts";
import { benchHandle, promptMaker, timeRequests } from "./decodeRun.ts";
import { peakRssBytes } from "./peers.ts";

export interface DecodeSideResult {
  base: BaseWeightsMode;
  load_s: number;
  /** Prompt tokens per second of one prompt (the 1-stream request), median over reps. */
  prefill_tps: number;
  /** Generated tokens per second over all streams, by stream count, median over reps. */
  decode_tps: Record<string, number>;
  peak_rss_bytes: number;
}

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? String(process.argv[i + 1]) : fallback;
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = arg("model-dir", "");
if (dir === "") throw new Error("usage: decodeSide.ts --model-dir DIR [--prompt 128 --tokens 128 --streams 1,4,16 --reps 3]");
const promptLen = Number(arg("prompt", "128"));
const tokens = Number(arg("tokens", "128"));
const streams = arg("streams", "1,4,16").split(",").map(Number);
const reps = Number(arg("reps", "3"));

const kernels = getKernels();
const t0 = performance.now();
const base = baseWeightsMode(kernels.name);
const { config, weights } = loadBaseModelDir(dir, base);
const inf = inferenceModel(buildInferenceWeights(config, weights, null), kernels);
const loadS = (performance.now() - t0) / 1000;
const handle = benchHandle(inf, config);
const scheduler = new DecodeScheduler();
const prompt = promptMaker(config.vocabSize)(promptLen);

await timeRequests(scheduler, handle, 1, 2, prompt.subarray(0, 16), 4); // warm-up
const prefill: number[] = [];
const decode: Record<string, number> = {};
for (const b of streams) {
  const rates: number[] = [];
  for (let r = 0; r < reps; r++) {
    const first = await timeRequests(scheduler, handle, 1, b, prompt, 1);
    const all = await timeRequests(scheduler, handle, 1, b, prompt, tokens);
    if (b === 1) prefill.push(promptLen / first.wall);
    rates.push((all.tokens - first.tokens) / (all.wall - first.wall));
  }
  decode[String(b)] = median(rates);
}
const out: DecodeSideResult = {
  base,
  load_s: loadS,
  prefill_tps: prefill.length > 0 ? median(prefill) : Number.NaN,
  decode_tps: decode,
  peak_rss_bytes: peakRssBytes(),
};
console.log(JSON.stringify(out));
