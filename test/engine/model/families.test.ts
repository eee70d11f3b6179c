// The decoder families beyond llama/qwen against transformers: tiny random models that transformers
// saved (fixtures/families/, made by scripts/makeFamilyFixtures.py) with transformers' own fp32
// log-probabilities of a fixed sequence. The training forward (native and reference kernels), the
// sampler's KV-cache forward, and the resident 16-bit base path must all give them within 1e-5.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { getKernels, referenceKernels } from "../../../src/engine/kernels/index.ts";
import { HalfArray } from "../../../src/engine/kernels/halfArray.ts";
import { Mxfp4Matrix } from "../../../src/engine/kernels/mxfp4.ts";
import type { Kernels } from "../../../src/engine/kernels/types.ts";
import { loadBaseModelDir, loadModelDir, modelConfigToHfJson } from "../../../src/engine/storage/loadModel.ts";
import { parseModelConfig } from "../../../src/engine/model/config.ts";
import { packBatch } from "../../../src/engine/model/batch.ts";
import { resolveLoss } from "../../../src/engine/model/losses.ts";
import { EngineModel } from "../../../src/engine/model/model.ts";
import { buildParams } from "../../../src/engine/model/params.ts";
import { forwardBackwardPass, passInputs } from "../../../src/engine/model/pass.ts";
import { inferenceModel, type KvDtype } from "../../../src/engine/sampling/forward.ts";
import { resolveSampleRequest } from "../../../src/engine/sampling/request.ts";
import { computePromptLogprobs, DecodeScheduler, type SamplerHandle } from "../../../src/engine/sampling/scheduler.ts";
import { buildInferenceWeights } from "../../../src/engine/sampling/weights.ts";
import { randomizeTrainable } from "./helpers.ts";

const ROOT = join(import.meta.dirname, "..", "..", "..", "fixtures", "families");
const TOLERANCE = 1e-5;
/** How far logprobs over an f16 KV cache may be from the float32 ones (docs/embedded-engine.md#the-kv-cache). */
const KV_F16_TOLERANCE = 1e-2;

interface Reference {
  tokens: number[];
  logprobs: number[];
  logprobs_bf16_weights: number[];
}

const families = readdirSync(ROOT, { withFileTypes: true })
  .filter((e) => e.isDirectory() && !e.name.endsWith("-bf16") && !e.name.endsWith("-mxfp4"))
  .map((e) => e.name)
  .sort();

function trainingLogprobs(dir: string, kernels: Kernels, tokens: number[]): Float32Array {
  const { config, weights } = loadModelDir(dir);
  const model = EngineModel.create(config, weights, { mode: "full", seed: 0 }, kernels);
  const input = {
    inputTokens: Int32Array.from(tokens.slice(0, -1)),
    lossInputs: { target_tokens: Int32Array.from(tokens.slice(1)), weights: new Float32Array(tokens.length - 1).fill(1) },
  };
  return model.forwardBackward([input], "cross_entropy", undefined, false).logprobs[0]!;
}

function worst(got: ArrayLike<number | null>, expected: number[]): number {
  assert.equal(got.length, expected.length);
  let m = 0;
  for (let i = 0; i < expected.length; i++) m = Math.max(m, Math.abs((got[i] as number) - expected[i]!));
  return m;
}

test("every family in the engine has a fixture", () => {
  assert.deepEqual(families, ["gemma3_text", "gpt_oss", "olmo2", "phi3", "qwen3_5_text", "qwen3_moe", "smollm3"]);
});

for (const family of ["qwen3_moe", "gpt_oss"])
  test(`${family}: every token goes to the experts transformers' router chose, in its order`, () => {
    const dir = join(ROOT, family);
    const ref = JSON.parse(readFileSync(join(dir, "reference.json"), "utf8")) as Reference & { routing: number[][][] };
    const { config, weights } = loadModelDir(dir);
    const moe = config.moe;
    assert.ok(moe?.normTopkProb && moe.sparseLayers.every((s) => s) && moe.sparseLayers.length === ref.routing.length);
    const params = buildParams(config, weights, { mode: "full", seed: 0 }, "float32");
    const loss = resolveLoss("cross_entropy", undefined);
    const input = {
      inputTokens: Int32Array.from(ref.tokens),
      lossInputs: { target_tokens: Int32Array.from(ref.tokens), weights: new Float32Array(ref.tokens.length).fill(1) },
    };
    const result = forwardBackwardPass(passInputs(getKernels(), "float32", config, params), packBatch([input], loss, config), loss, false, true);
    const choices = result.routing?.choices ?? [];
    assert.equal(choices.length, ref.routing.length);
    const K = moe.topK;
    choices.forEach((chosen, layer) => {
      const ours = ref.tokens.map((_, t) => Array.from(chosen.subarray(t * K, (t + 1) * K)));
      assert.deepEqual(ours, ref.routing[layer], `sparse layer ${layer}`);
    });
    // The load-balancing metrics of transformers' load_balancing_loss_func, from the same choices.
    const metrics = result.routing?.metrics() ?? {};
    assert.ok((metrics["moe_aux_loss:mean"] ?? 0) > K * 0.99, `aux loss ${metrics["moe_aux_loss:mean"]}`);
    let busiest = 0;
    for (const layer of ref.routing) {
      const counts = new Array<number>(moe.numExperts).fill(0);
      for (const row of layer) for (const e of row) counts[e]++;
      busiest = Math.max(busiest, ...counts);
    }
    assert.ok(metrics["moe_expert_load_max:max"]! >= (busiest * moe.numExperts) / (ref.tokens.length * 2 * K) - 1e-9);
  });

for (const family of families) {
  const dir = join(ROOT, family);
  const ref = JSON.parse(readFileSync(join(dir, "reference.json"), "utf8")) as Reference;

  test(`${family}: the training forward gives transformers' fp32 logprobs within 1e-5 (native and reference kernels)`, () => {
    // Not a degenerate model: the logprobs spread well away from uniform.
    const spread = Math.max(...ref.logprobs) - Math.min(...ref.logprobs);
    assert.ok(spread > 1, `fixture logprobs spread only ${spread}`);
    for (const k of [getKernels(), referenceKernels]) {
      const diff = worst(trainingLogprobs(dir, k, ref.tokens), ref.logprobs);
      assert.ok(diff < TOLERANCE, `${k.name} kernels: logprobs differ from transformers by ${diff}`);
    }
  });

  test(`${family}: the config.json the engine writes for a model built in code reads back as the same config`, () => {
    const { config } = loadModelDir(dir);
    assert.deepEqual(parseModelConfig(modelConfigToHfJson(config), "written"), config);
  });

  test(`${family}: the sampler's KV-cache forward gives the same logprobs`, () => {
    const { config, weights } = loadModelDir(dir);
    const inf = inferenceModel(buildInferenceWeights(config, weights, null), getKernels());
    const got = computePromptLogprobs(inf, Int32Array.from(ref.tokens), "f32");
    assert.equal(got[0], null);
    const diff = worst(got.slice(1), ref.logprobs);
    assert.ok(diff < TOLERANCE, `sampler logprobs differ from transformers by ${diff}`);
    // A prompt run over an f16 cache (what decoding over the default cache reads) rounds K and V: close, not equal.
    const half = worst(computePromptLogprobs(inf, Int32Array.from(ref.tokens), "f16").slice(1), ref.logprobs);
    assert.ok(half < KV_F16_TOLERANCE && half > 0, `f16 KV cache: logprobs differ from transformers by ${half}`);
  });

  test(`${family}: sampling over the default f16 cache: sampled logprobs within 1e-2 of the float32 cache's, compute_logprobs bit-equal and transformers' within 1e-5`, async () => {
    const { config, weights } = loadModelDir(dir);
    const w = buildInferenceWeights(config, weights, null);
    const prompt = Int32Array.from(ref.tokens.slice(0, 8));
    const run = async (kv: KvDtype) => {
      const inf = inferenceModel(w, getKernels(), kv);
      const h: SamplerHandle = {
        id: kv,
        limits: { vocabSize: config.vocabSize, contextLength: config.maxPositionEmbeddings },
        model: () => inf,
        decoder: () => Promise.reject(new Error("no tokenizer")),
      };
      const req = { prompt, numSamples: 4, params: { max_tokens: 24, temperature: 1, seed: 9 }, promptLogprobs: false, topkPromptLogprobs: 0, fallbackSeed: 0 };
      const sched = new DecodeScheduler();
      const [sampled, scored] = await Promise.all([sched.submit(h, resolveSampleRequest(req, h.limits)), sched.submitLogprobs(h, Int32Array.from(ref.tokens))]);
      return { sampled, scored };
    };
    const [half, full] = [await run("f16"), await run("f32")];
    assert.deepEqual(half.scored, full.scored);
    assert.ok(worst(half.scored.slice(1), ref.logprobs) < TOLERANCE, "compute_logprobs beside f16 sampling");
    let compared = 0;
    let diff = 0;
    full.sampled.sequences.forEach((q, i) => {
      const h = half.sampled.sequences[i];
      for (let t = 0; t < q.tokens.length && q.tokens[t] === h.tokens[t]; t++) {
        diff = Math.max(diff, Math.abs(q.logprobs[t] - h.logprobs[t]));
        compared++;
      }
    });
    assert.ok(compared >= 48, `only ${compared} of 96 sampled tokens matched`);
    assert.ok(diff < KV_F16_TOLERANCE && diff > 0, `sampled logprobs over f16 differ from float32's by ${diff}`);
  });

  test(`${family}: a bf16 checkpoint held resident (16-bit matrices) scores like transformers on the widened weights`, (t) => {
    const k = getKernels();
    if (k.name !== "native") return t.skip("the resident path needs the native addon");
    const { config, weights } = loadBaseModelDir(join(ROOT, `${family}-bf16`), "resident");
    assert.ok(
      [...weights.values()].some((w) => w instanceof HalfArray),
      "no matrix was kept in 16 bits",
    );
    const model = EngineModel.create(config, weights, { mode: "lora", rank: 2, seed: 1, trainAttn: true, trainMlp: true, trainUnembed: false }, k);
    const tokens = ref.tokens;
    const input = {
      inputTokens: Int32Array.from(tokens.slice(0, -1)),
      lossInputs: { target_tokens: Int32Array.from(tokens.slice(1)), weights: new Float32Array(tokens.length - 1).fill(1) },
    };
    const train = model.forwardBackward([input], "cross_entropy", undefined, false).logprobs[0]!;
    assert.ok(worst(train, ref.logprobs_bf16_weights) < TOLERANCE, "training forward on resident weights");
    const inf = inferenceModel(buildInferenceWeights(config, weights, null), k);
    assert.ok(worst(computePromptLogprobs(inf, Int32Array.from(tokens), "f32").slice(1), ref.logprobs_bf16_weights) < TOLERANCE, "sampler on resident weights");
    // The bf16 rounding is visible: the fp32 reference differs from the widened one.
    assert.ok(worst(train, ref.logprobs) > 1e-5, "bf16 weights gave the fp32 logprobs: the fixture is not rounded");
  });
}

test("gpt_oss: an MXFP4 checkpoint loads resident (expert bytes mapped, widened one expert at a time) and scores like transformers' dequantized model", (t) => {
  const k = getKernels();
  if (k.name !== "native") return t.skip("the resident path needs the native addon");
  const dir = join(ROOT, "gpt_oss-mxfp4");
  const ref = JSON.parse(readFileSync(join(ROOT, "gpt_oss", "reference.json"), "utf8")) as Reference & { logprobs_mxfp4: number[] };
  const { config, weights } = loadBaseModelDir(dir, "resident");
  const quantized = [...weights.entries()].filter(([, w]) => w instanceof Mxfp4Matrix);
  assert.equal(quantized.length, 2 * config.numLayers, "gate_up_proj and down_proj of every layer stay MXFP4");
  const fileSize = statSync(join(dir, "model.safetensors")).size;
  for (const [name, w] of quantized) assert.equal((w as Mxfp4Matrix).blocks.buffer.byteLength, fileSize, `${name} is not a view of the file's mapping`);
  const tokens = ref.tokens;
  const input = {
    inputTokens: Int32Array.from(tokens.slice(0, -1)),
    lossInputs: { target_tokens: Int32Array.from(tokens.slice(1)), weights: new Float32Array(tokens.length - 1).fill(1) },
  };
  const model = EngineModel.create(config, weights, { mode: "lora", rank: 2, seed: 1, trainAttn: true, trainMlp: true, trainUnembed: false }, k);
  const train = model.forwardBackward([input], "cross_entropy", undefined, true).logprobs[0]!;
  assert.ok(worst(train, ref.logprobs_mxfp4) < TOLERANCE, `training forward on MXFP4 experts: ${worst(train, ref.logprobs_mxfp4)}`);
  assert.ok(model.gradNorm() > 0, "the LoRA step through MXFP4 experts has a gradient");
  // The sampler shares the training model's frozen base, MXFP4 experts included.
  const inf = inferenceModel(buildInferenceWeights(config, model.baseWeights(), null), k);
  const sampled = computePromptLogprobs(inf, Int32Array.from(tokens), "f32").slice(1);
  assert.ok(worst(sampled, ref.logprobs_mxfp4) < TOLERANCE, `sampler on MXFP4 experts: ${worst(sampled, ref.logprobs_mxfp4)}`);
  assert.ok(worst(train, ref.logprobs_bf16_weights) > 0.1, "the MXFP4 experts are not the bf16 fixture's");
  assert.throws(() => EngineModel.create(config, weights, { mode: "full", seed: 0 }, k), /full fine-tuning needs dense weights/);
});

test("gpt_oss: the float32 loader widens an MXFP4 checkpoint into the dense fused tensors (reference kernels too)", () => {
  const ref = JSON.parse(readFileSync(join(ROOT, "gpt_oss", "reference.json"), "utf8")) as Reference & { logprobs_mxfp4: number[] };
  for (const k of [getKernels(), referenceKernels]) {
    const diff = worst(trainingLogprobs(join(ROOT, "gpt_oss-mxfp4"), k, ref.tokens), ref.logprobs_mxfp4);
    assert.ok(diff < TOLERANCE, `${k.name} kernels: logprobs differ from transformers by ${diff}`);
  }
});

test("gpt_oss: a trained expert adapter (Tinker's shared-outer w1/w3/w2) gives the sampler the training forward's logprobs on fp32, bf16 and MXFP4 experts", (t) => {
  const k = getKernels();
  const ref = JSON.parse(readFileSync(join(ROOT, "gpt_oss", "reference.json"), "utf8")) as Reference & { logprobs_mxfp4: number[] };
  const tokens = ref.tokens;
  const input = {
    inputTokens: Int32Array.from(tokens.slice(0, -1)),
    lossInputs: { target_tokens: Int32Array.from(tokens.slice(1)), weights: new Float32Array(tokens.length - 1).fill(1) },
  };
  const bases: Array<[string, () => ReturnType<typeof loadBaseModelDir>, number[]]> = [["fp32", () => loadModelDir(join(ROOT, "gpt_oss")), ref.logprobs]];
  if (k.name === "native")
    bases.push(
      ["bf16 resident", () => loadBaseModelDir(join(ROOT, "gpt_oss-bf16"), "resident"), ref.logprobs_bf16_weights],
      ["MXFP4 resident", () => loadBaseModelDir(join(ROOT, "gpt_oss-mxfp4"), "resident"), ref.logprobs_mxfp4],
    );
  else t.diagnostic("the resident bf16 and MXFP4 cases need the native addon");
  for (const [label, load, baseLogprobs] of bases) {
    const { config, weights } = load();
    const model = EngineModel.create(config, weights, { mode: "lora", rank: 2, seed: 1, trainAttn: false, trainMlp: true, trainUnembed: false }, k);
    const trained = model.trainableTensors();
    assert.deepEqual(
      [...trained.keys()].filter((n) => n.includes("layers.0.")),
      ["w1", "w3", "w2"].flatMap((p) => ["A", "B"].map((ab) => `base_model.model.model.layers.0.mlp.experts.${p}.lora_${ab}.weight`)),
    );
    randomizeTrainable(model, 7, 0.3);
    const train = model.forwardBackward([input], "cross_entropy", undefined, false).logprobs[0]!;
    assert.ok(worst(train, baseLogprobs) > 1e-2, `${label}: the expert adapter barely moves the logprobs (${worst(train, baseLogprobs)})`);
    const inf = inferenceModel(buildInferenceWeights(config, model.baseWeights(), { rank: 2, tensors: model.trainableTensors() }), k);
    const sampled = computePromptLogprobs(inf, Int32Array.from(tokens), "f32").slice(1);
    assert.ok(worst(sampled, Array.from(train)) < TOLERANCE, `${label}: sampler vs training forward ${worst(sampled, Array.from(train))}`);
    const partial = model.trainableTensors();
    partial.delete("base_model.model.model.layers.1.mlp.experts.w2.lora_B.weight");
    assert.throws(
      () => buildInferenceWeights(config, model.baseWeights(), { rank: 2, tensors: partial }),
      /layer 1's expert factors are incomplete: .*w2\.lora_B/,
    );
  }
});
