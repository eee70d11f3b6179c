// A train → snapshot → sample loop at the Llama-3.2-1B shape, through the embedded service client
// as a recipe runs it: LoRA r32 on every linear and the LM head, each round one forward_backward +
// optim_step on --batch sequences of 64 tokens, saveWeightsAndGetSamplingClient, 4 samples of
// --tokens tokens from the new sampler, and the previous sampler released. Prints the load time,
// each snapshot's wall time, and the peak RSS of the process (the worker thread included) next to
// the base weights' float32 size. The model folder is bench/llamaFolder.ts's (bf16, random).
// Usage: npm run bench:snapshot [-- --layers 16 --rounds 3 --batch 4 --tokens 16]
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createEmbeddedServiceClient, type EmbeddedSamplingClient } from "../src/engine/index.ts";
import { expectedTensorShapes, shapeSize } from "../src/engine/model/config.ts";
import type { Datum } from "../src/tinker/types.ts";
import { llama1bConfig, llama1bFolder } from "./llamaFolder.ts";

const argv = process.argv.slice(2);
const arg = (name: string, fallback: number): number => (argv.includes(`--${name}`) ? Number(argv[argv.indexOf(`--${name}`) + 1]) : fallback);
const layers = arg("layers", 16);
const rounds = arg("rounds", 3);
const batch = arg("batch", 4);
const genTokens = arg("tokens", 16);
const config = llama1bConfig(layers);
const dir = llama1bFolder(layers);
let baseBytes = 0;
for (const shape of expectedTensorShapes(config).values()) baseBytes += shapeSize(shape) * 4;
const gb = (bytes: number): string => (bytes / 1e9).toFixed(2);
const peakRss = (): number => process.resourceUsage().maxRSS * 1024;

const tokens = (n: number, salt: number): number[] => Array.from({ length: n }, (_, i) => (Math.imul(i + salt, 2654435761) >>> 8) % config.vocabSize);
const data: Datum[] = Array.from({ length: batch }, (_, b) => {
  const t = tokens(65, b);
  return {
    model_input: { chunks: [{ type: "encoded_text", tokens: t.slice(0, 64) }] },
    loss_fn_inputs: {
      target_tokens: { data: t.slice(1), dtype: "int64", shape: [64] },
      weights: { data: new Array(64).fill(1), dtype: "float32", shape: [64] },
    },
  };
});

console.log(
  `load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}; Llama-3.2-1B shape with ${layers} layers: base weights ${gb(baseBytes)} GB float32`,
);
const store = mkdtempSync(join(tmpdir(), "cookbook-bench-snapshot-"));
const service = createEmbeddedServiceClient({ storeDir: store });
try {
  let t = performance.now();
  const training = await service.createLoraTrainingClient(dir, { rank: 32, seed: 0, trainUnembed: true });
  console.log(`load + LoRA setup: ${((performance.now() - t) / 1000).toFixed(2)} s; peak RSS ${gb(peakRss())} GB`);
  let previous: EmbeddedSamplingClient | null = null;
  const snapshots: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    t = performance.now();
    const fb = await training.forwardBackward(data, "cross_entropy");
    const opt = await training.optimStep({ learning_rate: 1e-4 });
    await fb.result();
    await opt.result();
    const trainS = (performance.now() - t) / 1000;
    t = performance.now();
    const sampler = await training.saveWeightsAndGetSamplingClient();
    const snapS = (performance.now() - t) / 1000;
    snapshots.push(snapS);
    t = performance.now();
    const r = await sampler.sample({ chunks: [{ type: "encoded_text", tokens: tokens(16, 100 + round) }] }, 4, {
      max_tokens: genTokens,
      temperature: 1,
      seed: round,
    });
    const sampleS = (performance.now() - t) / 1000;
    await previous?.release();
    previous = sampler;
    console.log(
      `round ${round}: train step ${trainS.toFixed(2)} s, snapshot ${snapS.toFixed(3)} s, sampled ${r.sequences.map((s) => s.tokens.length).join("+")} tokens in ${sampleS.toFixed(2)} s; peak RSS so far ${gb(peakRss())} GB`,
    );
  }
  const peak = peakRss();
  console.log(`snapshot wall s: ${snapshots.map((x) => x.toFixed(3)).join(", ")} (goal < 2 s)`);
  console.log(
    `peak RSS ${gb(peak)} GB = base ${gb(baseBytes)} GB + ${gb(peak - baseBytes)} GB (${((peak - baseBytes) / baseBytes).toFixed(2)}× base; goal: below base + one float32 copy, i.e. < 1.00×)`,
  );
} finally {
  await service.close();
  rmSync(store, { recursive: true, force: true });
}
