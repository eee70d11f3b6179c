// The engine's side of the Qwen3.5 precision note (docs/numerics.md#gated-deltanet): for the
// sequences and reference logprobs scripts/deltaRulePrecision.py wrote, the largest logprob
// difference of transformers fp32, the engine's training forward and its sampler (native and
// reference kernels, float32) and the engine in float64, each against transformers' float64 run.
//   npx tsx scripts/deltaRulePrecision.ts MODEL_DIR REFERENCE.json
import { readFileSync } from "node:fs";
import { getKernels, referenceKernels } from "../src/engine/kernels/index.ts";
import { EngineModel } from "../src/engine/model/model.ts";
import { inferenceModel } from "../src/engine/sampling/forward.ts";
import { computePromptLogprobs } from "../src/engine/sampling/scheduler.ts";
import { buildInferenceWeights } from "../src/engine/sampling/weights.ts";
import { loadModelDir } from "../src/engine/storage/loadModel.ts";

const [dir, refPath] = process.argv.slice(2);
if (dir === undefined || refPath === undefined) throw new Error("usage: deltaRulePrecision.ts MODEL_DIR REFERENCE.json");
const ref = JSON.parse(readFileSync(refPath, "utf8")) as { sequences: number[][]; fp32: number[][]; fp64: number[][] };
const { config, weights } = loadModelDir(dir);

function worst(got: ArrayLike<number | null>, want: number[]): number {
  let m = 0;
  for (let i = 0; i < want.length; i++) m = Math.max(m, Math.abs((got[i] as number) - want[i]!));
  return m;
}

function training(model: EngineModel, s: number[]): Float32Array {
  const input = {
    inputTokens: Int32Array.from(s.slice(0, -1)),
    lossInputs: { target_tokens: Int32Array.from(s.slice(1)), weights: new Float32Array(s.length - 1).fill(1) },
  };
  return model.forwardBackward([input], "cross_entropy", undefined, false).logprobs[0]!;
}

const rows: Record<string, string[]> = { "transformers fp32": ref.fp32.map((lp, i) => worst(lp, ref.fp64[i]!).toExponential(1)) };
for (const k of [getKernels(), referenceKernels]) {
  const model = EngineModel.create(config, weights, { mode: "full", seed: 0 }, k);
  const inf = inferenceModel(buildInferenceWeights(config, weights, null), k, "f32");
  rows[`engine training, ${k.name}`] = ref.sequences.map((s, i) => worst(training(model, s), ref.fp64[i]!).toExponential(1));
  rows[`engine sampler, ${k.name}`] = ref.sequences.map((s, i) =>
    worst(computePromptLogprobs(inf, Int32Array.from(s)).slice(1), ref.fp64[i]!).toExponential(1),
  );
}
const m64 = EngineModel.create(config, weights, { mode: "full", seed: 0 }, referenceKernels, { dtype: "float64" });
rows["engine float64"] = ref.sequences.map((s, i) => worst(training(m64, s), ref.fp64[i]!).toExponential(1));
console.log(`| against transformers float64 | ${ref.sequences.map((s) => `${s.length} tokens`).join(" | ")} |`);
for (const [name, cells] of Object.entries(rows)) console.log(`| ${name} | ${cells.join(" | ")} |`);
