// Frozen base weights kept 16-bit (mapped from a bf16 checkpoint) against the float32 path on the
// same checkpoint: widening is exact and the kernels run the same arithmetic on the same floats, so
// logprobs, gradients, the step after AdamW and sampled tokens must be identical bit for bit (packed
// GEMM, the default on AVX-512). On the OpenBLAS path 16-bit products are cut into other blocks than
// float32 ones, which changes rounding only: measured 2e-7 (logprobs) and 4e-6 (gradients) of each
// array's largest value, the size of the change the float32 path itself shows between 1 and 2
// threads; the test allows 5e-5.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { HalfArray, type BaseArray } from "../../../src/engine/kernels/halfArray.ts";
import { loadNativeKernels, type NativeKernels } from "../../../src/engine/kernels/native.ts";
import { loadBaseModelDir, loadModelDir } from "../../../src/engine/storage/loadModel.ts";
import type { ModelConfig } from "../../../src/engine/model/config.ts";
import { EngineModel, type SequenceInput } from "../../../src/engine/model/model.ts";
import { float32ToF16 } from "../../../src/engine/safetensors/dtypes.ts";
import { resolveSampleRequest } from "../../../src/engine/sampling/request.ts";
import { SamplerRegistry } from "../../../src/engine/sampling/samplers.ts";
import { DecodeScheduler, computePromptLogprobs } from "../../../src/engine/sampling/scheduler.ts";
import { PROJECT_ROOT } from "../../../src/projectRoot.ts";
import { tempDir, tinyConfigJson, writeTinyModel } from "../helpers.ts";

const TINY_CHAT = join(PROJECT_ROOT, "fixtures/models/tiny-chat");

function native(): NativeKernels {
  try {
    return loadNativeKernels();
  } catch (err) {
    assert.fail(`native kernel addon did not build or load: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function tokens(n: number, vocab: number, salt: number): Int32Array {
  return Int32Array.from({ length: n }, (_, i) => (Math.imul(i + 7 * salt, 2654435761) >>> 9) % vocab);
}

/** Three sequences (41 + 17 + 3 tokens: products of 61 rows and decode-sized ones), cross-entropy. */
function batch(vocab: number): SequenceInput[] {
  return [41, 17, 3].map((n, s) => {
    const t = tokens(n + 1, vocab, s);
    const w = Float32Array.from({ length: n }, (_, i) => (i % 5 === 0 ? 0 : 1));
    return { inputTokens: t.subarray(0, n), lossInputs: { target_tokens: t.subarray(1), weights: w } };
  });
}

type Tolerance = "bits" | number;

/** Identical values, or within `tol` of the largest |expected| of the array. */
function same(actual: ArrayLike<number>, expected: ArrayLike<number>, tol: Tolerance, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  let scale = 0;
  for (let i = 0; i < expected.length; i++) scale = Math.max(scale, Math.abs(expected[i]!));
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i]!;
    const e = expected[i]!;
    const ok = tol === "bits" ? Object.is(a, e) : Math.abs(a - e) <= tol * scale;
    if (!ok) assert.fail(`${what}: index ${i}: ${a} vs ${e}${tol === "bits" ? " (must be identical)" : ` (allowed ${tol} × ${scale})`}`);
  }
}

/**
 * Trains a LoRA on every projection and the head from each set of base weights (one step of
 * forward_backward, AdamW, forward), then decodes from a snapshot of each: everything must match.
 */
async function compare(config: ModelConfig, resident: Map<string, BaseArray>, float: Map<string, Float32Array>, tol: Tolerance, what: string): Promise<void> {
  const k = native();
  const setup = { mode: "lora" as const, rank: 4, seed: 3, trainAttn: true, trainMlp: true, trainUnembed: true };
  const models = [EngineModel.create(config, resident, setup, k), EngineModel.create(config, float, setup, k)];
  const data = batch(config.vocabSize);
  const [r0, f0] = models.map((m) => m.forwardBackward(data, "cross_entropy", undefined, true));
  r0!.logprobs.forEach((lp, i) => same(lp, f0!.logprobs[i]!, tol, `${what}: logprobs of datum ${i}`));
  const [rp, fp] = models.map((m) => m.parameters());
  rp!.forEach((t, i) => same(t.grad!, fp![i]!.grad!, tol, `${what}: gradient of ${t.name}`));
  for (const m of models) m.optimStep({ learning_rate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weight_decay: 0, grad_clip_norm: 0 });
  const [r1, f1] = models.map((m) => m.forwardBackward(data, "cross_entropy", undefined, false));
  r1!.logprobs.forEach((lp, i) => same(lp, f1!.logprobs[i]!, tol, `${what}: logprobs after a step, datum ${i}`));

  const registry = new SamplerRegistry(k);
  const samplers = models.map((m, i) => registry.add(`s${i}`, { config, weights: m.baseWeights(), adapter: { rank: 4, tensors: m.trainableTensors() } }));
  // A prompt longer than the decode-sized products (gemm path) and a short one (gemmRowsNT).
  for (const n of [90, 9]) {
    const prompt = tokens(n, config.vocabSize, 9);
    const [rl, fl] = samplers.map((s) => computePromptLogprobs(s.model(), prompt));
    same(rl!.slice(1) as number[], fl!.slice(1) as number[], tol, `${what}: sampler prompt logprobs (${n} tokens)`);
  }
  const scheduler = new DecodeScheduler();
  const spec = {
    prompt: tokens(6, config.vocabSize, 4),
    numSamples: 5,
    params: { max_tokens: 8, temperature: 1, seed: 11 },
    promptLogprobs: false,
    topkPromptLogprobs: 0,
    fallbackSeed: 0,
  };
  const [rs, fs] = await Promise.all(samplers.map((s) => scheduler.submit(s, resolveSampleRequest(spec, s.limits))));
  rs!.sequences.forEach((seq, i) => {
    if (tol === "bits") assert.deepEqual(seq.tokens, fs!.sequences[i]!.tokens, `${what}: sampled tokens of sample ${i}`);
    same(seq.logprobs ?? [], fs!.sequences[i]!.logprobs ?? [], tol, `${what}: sampled logprobs of sample ${i}`);
  });
}

function withBackend<T>(backend: "packed" | "openblas", f: () => Promise<T>): Promise<T> {
  const k = native();
  const initial = k.gemmBackend;
  k.setGemmBackend(backend);
  return f().finally(() => k.setGemmBackend(initial));
}

test("the shipped tiny model (bf16): 16-bit resident base gives the float32 path's results bit for bit", async () => {
  const resident = loadBaseModelDir(TINY_CHAT, "resident");
  const float = loadModelDir(TINY_CHAT);
  const embed = resident.weights.get("model.embed_tokens.weight");
  assert.ok(embed instanceof HalfArray && embed.dtype === "bf16", "matrices stay bf16");
  assert.ok(resident.weights.get("model.norm.weight") instanceof Float32Array, "norm weights are float32");
  await withBackend("packed", () => compare(resident.config, resident.weights, float.weights, "bits", "tiny-chat"));
});

test("random Llama-, Qwen3- and Qwen2-shaped bf16 checkpoints: resident and float32 paths agree bit for bit", async () => {
  const shapes: Record<string, Record<string, unknown>> = {
    llama: { hidden_size: 72, intermediate_size: 136, num_attention_heads: 6, num_key_value_heads: 2, head_dim: 12, vocab_size: 300 },
    qwen3: {
      model_type: "qwen3",
      architectures: ["Qwen3ForCausalLM"],
      hidden_size: 64,
      intermediate_size: 96,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      head_dim: 16,
      vocab_size: 257,
    },
    qwen2: {
      model_type: "qwen2",
      architectures: ["Qwen2ForCausalLM"],
      hidden_size: 48,
      intermediate_size: 80,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      head_dim: 12,
      vocab_size: 200,
      tie_word_embeddings: true,
    },
  };
  for (const [name, overrides] of Object.entries(shapes)) {
    const { dir, cleanup } = tempDir();
    try {
      writeTinyModel(dir, { dtype: "BF16", seed: 5, sharded: name === "qwen3", configJson: tinyConfigJson(overrides) });
      const resident = loadBaseModelDir(dir, "resident");
      assert.ok(resident.weights.get("model.layers.1.mlp.down_proj.weight") instanceof HalfArray, `${name}: projections stay bf16`);
      await withBackend("packed", () => compare(resident.config, resident.weights, loadModelDir(dir).weights, "bits", name));
    } finally {
      cleanup();
    }
  }
});

test("f16 matrices held in memory give the results of their widened float32 values bit for bit", async () => {
  const float = loadModelDir(TINY_CHAT);
  const f16 = new Map<string, BaseArray>();
  const widened = new Map<string, Float32Array>();
  for (const [name, w] of float.weights) {
    if (name.endsWith("norm.weight")) {
      f16.set(name, w);
      widened.set(name, w);
      continue;
    }
    // Scaled down so that some values are f16 subnormals.
    const h = new HalfArray("f16", float32ToF16(w.map((x) => x * 0.02)));
    f16.set(name, h);
    widened.set(name, h.widen());
  }
  await withBackend("packed", () => compare(float.config, f16, widened, "bits", "tiny-chat in f16"));
});

test("on the OpenBLAS path the resident base agrees with float32 to 5e-5 of each array's scale", async () => {
  const k = native();
  if (!k.gemmBackends.includes("openblas")) {
    // test-e2e/openblasGemm.test.ts asserts that the CI build links OpenBLAS.
    assert.deepEqual([...k.gemmBackends], ["packed"]);
    return;
  }
  const resident = loadBaseModelDir(TINY_CHAT, "resident");
  await withBackend("openblas", () => compare(resident.config, resident.weights, loadModelDir(TINY_CHAT).weights, 5e-5, "tiny-chat, OpenBLAS"));
});
