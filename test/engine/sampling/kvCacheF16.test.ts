// The sampler's f16 KV cache (docs/embedded-engine.md#the-kv-cache), the default with the native
// kernels: sampled logprobs within 1e-2 of the float32 cache, the same tokens while no near-tie
// intervenes, prompt logprobs bit-equal (prompts run over float32 whatever the sampling cache
// holds), half the bytes, and which dtype COOKBOOK_KV_CACHE selects.
import { test } from "node:test";
import assert from "node:assert/strict";
import type { HalfArray } from "../../../src/engine/kernels/halfArray.ts";
import { loadNativeKernels } from "../../../src/engine/kernels/native.ts";
import { referenceKernels } from "../../../src/engine/kernels/reference.ts";
import { parseModelConfig } from "../../../src/engine/model/config.ts";
import { EngineModel } from "../../../src/engine/model/model.ts";
import { inferenceModel, KvCache, kvCacheDtype, type KvDtype } from "../../../src/engine/sampling/forward.ts";
import { resolveSampleRequest } from "../../../src/engine/sampling/request.ts";
import { SamplerRegistry } from "../../../src/engine/sampling/samplers.ts";
import { DecodeScheduler, type SampleResult, type SamplerHandle } from "../../../src/engine/sampling/scheduler.ts";
import { buildInferenceWeights } from "../../../src/engine/sampling/weights.ts";
import { randomTokens, tinyConfigJson } from "../helpers.ts";

const config = parseModelConfig(
  tinyConfigJson({ vocab_size: 300, hidden_size: 128, intermediate_size: 256, num_hidden_layers: 3, max_position_embeddings: 512 }),
  "tiny",
);
const weights = EngineModel.randomWeights(config, 7, { std: 0.08 });
const kernels = loadNativeKernels();
const KV_F16_TOLERANCE = 1e-2;

function handle(kv: KvDtype): SamplerHandle {
  const inf = inferenceModel(buildInferenceWeights(config, weights, null), kernels, kv);
  return {
    id: kv,
    limits: { vocabSize: config.vocabSize, contextLength: config.maxPositionEmbeddings },
    model: () => inf,
    decoder: () => Promise.reject(new Error("no tokenizer")),
  };
}

async function sample(kv: KvDtype, prompt: Int32Array): Promise<SampleResult> {
  const h = handle(kv);
  const req = { prompt, numSamples: 4, params: { max_tokens: 64, temperature: 1, seed: 5 }, promptLogprobs: true, topkPromptLogprobs: 0, fallbackSeed: 0 };
  return new DecodeScheduler().submit(h, resolveSampleRequest(req, h.limits));
}

test("f16 KV cache: prompt logprobs bit-equal to the float32 cache's, sampled ones within 1e-2, same tokens until a near tie", async () => {
  const prompt = Int32Array.from(randomTokens(200, 3).map((t) => t % config.vocabSize));
  const [full, half] = [await sample("f32", prompt), await sample("f16", prompt)];
  assert.deepEqual(half.prompt_logprobs, full.prompt_logprobs);
  let compared = 0;
  let worstSampled = 0;
  full.sequences.forEach((s, i) => {
    const h = half.sequences[i];
    // A sample follows the same tokens until rounding flips a draw near a tie; compare up to there.
    for (let t = 0; t < s.tokens.length && s.tokens[t] === h.tokens[t]; t++) {
      worstSampled = Math.max(worstSampled, Math.abs(s.logprobs[t] - h.logprobs[t]));
      compared++;
    }
  });
  assert.ok(compared >= 128, `only ${compared} of 256 sampled tokens matched`);
  assert.ok(worstSampled < KV_F16_TOLERANCE, `sampled logprobs differ by ${worstSampled}`);
  assert.ok(worstSampled > 0, "the f16 cache gave the float32 logprobs bit for bit: it was not used");
  // The first token is drawn from the prompt's last row, which ran over float32 in both.
  full.sequences.forEach((s, i) => assert.equal(half.sequences[i].logprobs[0], s.logprobs[0]));
});

test("the default cache: a sampler on the native kernels decodes over f16 (half the float32 cache's bytes) and scores over float32", async () => {
  const reg = new SamplerRegistry(kernels);
  const s = reg.add("a", { config, weights, adapter: null });
  assert.equal(s.model().kvDtype, "f16");
  assert.equal(new SamplerRegistry(referenceKernels).add("r", { config, weights, adapter: null }).model().kvDtype, "f32");
  const prompt = Int32Array.from(randomTokens(40, 8).map((t) => t % config.vocabSize));
  const req = { prompt, numSamples: 16, params: { max_tokens: 8, temperature: 1, seed: 2 }, promptLogprobs: false, topkPromptLogprobs: 0, fallbackSeed: 0 };
  const run = async (h: SamplerHandle) => {
    const sched = new DecodeScheduler();
    const [r, scored] = await Promise.all([sched.submit(h, resolveSampleRequest(req, h.limits)), sched.submitLogprobs(h, prompt)]);
    assert.equal(r.sequences.length, 16);
    return { scored, bytes: sched.stats.cacheBytes };
  };
  const [half, full] = [await run(s), await run(handle("f32"))];
  // 16 slots of 64 positions (the cache's smallest length), K and V in 2 bytes each; the float32
  // cache also holds compute_logprobs' slot (32 slots after rounding up to a power of 2).
  const perPosition = 2 * config.numLayers * config.numKvHeads * config.headDim;
  assert.equal(half.bytes, 16 * 64 * perPosition * 2);
  assert.equal(full.bytes, 32 * 64 * perPosition * 4);
  // compute_logprobs beside it equals a float32 sampler's, bit for bit.
  assert.deepEqual(half.scored, full.scored);
});

test("f16 KV cache: half the bytes; slots copied and grown keep their f16 values", () => {
  const a = new KvCache(config, 2, 8, "f32");
  const b = new KvCache(config, 2, 8, "f16");
  assert.equal(b.bytes * 2, a.bytes);
  const k = Float32Array.from({ length: config.numKvHeads * config.headDim }, (_, i) => 1 + i / 1024);
  kernels.kvStore(k, k, b.k[0], b.v[0], Int32Array.of(0), Int32Array.of(3), 1, config.numKvHeads, config.headDim, 8);
  b.copySlot(0, 1, 4);
  const g = b.grown(4, 16, [4, 4]);
  const d = config.headDim;
  const at = (c: KvCache, slot: number, pos: number): Float32Array => {
    const row = slot * config.numKvHeads * c.maxLen + pos;
    return (c.k[0] as HalfArray).widen(row * d, (row + 1) * d);
  };
  assert.deepEqual(at(g, 1, 3), at(b, 0, 3));
  assert.ok(at(g, 1, 3).some((x) => x !== 0));
});

test("COOKBOOK_KV_CACHE: unset or auto is f16 with native kernels and float32 with the reference ones; f32/f16 force it; a bad value named", () => {
  assert.equal(kvCacheDtype("native", {}), "f16");
  assert.equal(kvCacheDtype("reference", {}), "f32");
  assert.equal(kvCacheDtype("native", { COOKBOOK_KV_CACHE: "" }), "f16");
  assert.equal(kvCacheDtype("native", { COOKBOOK_KV_CACHE: "f32" }), "f32");
  assert.equal(kvCacheDtype("reference", { COOKBOOK_KV_CACHE: "f16" }), "f16");
  assert.equal(kvCacheDtype("native", { COOKBOOK_KV_CACHE: "auto" }), "f16");
  assert.equal(kvCacheDtype("reference", { COOKBOOK_KV_CACHE: "auto" }), "f32");
  assert.throws(() => kvCacheDtype("native", { COOKBOOK_KV_CACHE: "bf16" }), /COOKBOOK_KV_CACHE="bf16" is not valid; expected "f32"/);
});
