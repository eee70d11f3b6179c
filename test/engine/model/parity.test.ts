// The engine's forward against the naive per-token implementation in naive.ts, in float64.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ModelConfig } from "../../../src/engine/model/config.ts";
import { FULL, LLAMA3_SCALED, LORA_ALL, makeModel64, tinyBatch, tinyConfig, tinyWeights, inputsFor } from "./helpers.ts";
import { logSoftmaxAt, mergeLora, naiveLogits } from "./naive.ts";
import { EngineModel } from "../../../src/engine/model/model.ts";
import { referenceKernels } from "../../../src/engine/kernels/reference.ts";

function assertParity(config: ModelConfig, model: EngineModel, naiveWeights: Map<string, ArrayLike<number>>, naiveConfig = config): number {
  const batch = inputsFor(tinyBatch(config, 11, [7, 4, 1]), "cross_entropy");
  const out = model.forwardBackward(batch, "cross_entropy", undefined, false);
  let worst = 0;
  let spread = 0;
  batch.forEach((datum, s) => {
    const logits = naiveLogits(naiveConfig, naiveWeights, Array.from(datum.inputTokens));
    const targets = datum.lossInputs.target_tokens;
    for (let i = 0; i < logits.length; i++) {
      const expected = logSoftmaxAt(logits[i], targets[i]);
      worst = Math.max(worst, Math.abs(out.logprobs[s][i] - expected));
      spread = Math.max(spread, Math.abs(expected - out.logprobs[0][0]));
    }
  });
  // The returned logprobs are float32 (wire type), so allow float32 rounding of values near -3.
  assert.ok(worst < 2e-6, `logprobs differ from the naive forward by ${worst}`);
  // Full float64 logits through the cache path of the same layers: exact to rounding.
  const tokens = batch[0].inputTokens;
  const cache = model.createKvCache(tokens.length, 1);
  const logits = model.forwardIncremental(
    cache,
    tokens,
    Int32Array.from(tokens, (_, i) => i),
    new Int32Array(tokens.length),
  );
  const expected = naiveLogits(naiveConfig, naiveWeights, Array.from(tokens));
  const V = config.vocabSize;
  expected.forEach((row, i) => row.forEach((z, j) => assert.ok(Math.abs(logits[i * V + j] - z) < 1e-10, `logit [${i}, ${j}]: ${logits[i * V + j]} vs ${z}`)));
  assert.ok(spread > 0.05, "degenerate test: all logprobs are equal");
  return worst;
}

describe("forward parity with a naive implementation (float64)", () => {
  const cases: Array<[string, ModelConfig]> = [
    ["llama", tinyConfig("llama")],
    ["llama tied", tinyConfig("llama", { tieWordEmbeddings: true })],
    ["llama with llama3 rope scaling (all three frequency bands)", LLAMA3_SCALED],
    ["llama with attention_bias (q,k,v,o)", tinyConfig("llama", { attentionBias: true })],
    ["qwen2 (q,k,v biases)", tinyConfig("qwen2")],
    ["qwen3 (q/k norms)", tinyConfig("qwen3", { tieWordEmbeddings: true })],
    ["plain MHA (numKvHeads = numHeads)", tinyConfig("llama", { numKvHeads: 4 })],
    ["olmo2 (post-norms, q/k norms over the whole projection)", tinyConfig("olmo2")],
    ["gemma3 (sliding window of 2 in layer 0, (1 + w) norms, GELU-tanh, scaled embeddings)", tinyConfig("gemma3_text")],
    ["smollm3 (layer 1 without RoPE, sliding over 3 keys)", tinyConfig("smollm3")],
    ["phi3 (fused qkv_proj and gate_up_proj, sliding over 3 keys)", tinyConfig("phi3")],
    ["qwen3_5_text (a Gated DeltaNet layer, gated attention with partial RoPE)", tinyConfig("qwen3_5_text")],
  ];
  for (const [name, config] of cases) {
    it(name, () => {
      const weights = tinyWeights(config);
      assertParity(config, makeModel64(config, FULL), weights);
    });
  }

  it("qwen3_5_text over 90 tokens: the incremental forward's float64 logits equal the naive recurrence's to rounding", () => {
    const config = tinyConfig("qwen3_5_text", { maxPositionEmbeddings: 128 });
    const weights = tinyWeights(config);
    const model = makeModel64(config, FULL);
    const tokens = Int32Array.from({ length: 90 }, (_, i) => (i * 7 + 3) % config.vocabSize);
    const cache = model.createKvCache(90, 2);
    // Slot 1 first holds another sequence, so its state must start over at position 0.
    model.forwardIncremental(
      cache,
      tokens.subarray(5, 25),
      Int32Array.from({ length: 20 }, (_, i) => i),
      new Int32Array(20).fill(1),
    );
    const positions = Int32Array.from(tokens, (_, i) => i);
    const logits = model.forwardIncremental(cache, tokens, positions, new Int32Array(90).fill(1));
    const expected = naiveLogits(config, weights, Array.from(tokens));
    const V = config.vocabSize;
    let worst = 0;
    expected.forEach((row, i) => row.forEach((z, j) => (worst = Math.max(worst, Math.abs(logits[i * V + j] - z)))));
    assert.ok(worst < 1e-10, `logits differ from the naive recurrence by ${worst}`);
  });

  it("a LoRA model equals the naive forward with merged weights W + (32/r) B A (untied and tied heads)", () => {
    for (const tied of [false, true]) {
      const config = tinyConfig("qwen2", { tieWordEmbeddings: tied });
      const weights = tinyWeights(config);
      const model = EngineModel.create(config, weights, LORA_ALL, referenceKernels, { dtype: "float64" });
      const t = model.trainableTensors();
      let k = 0;
      for (const [name, data] of t) if (name.includes("lora_B")) for (let i = 0; i < data.length; i++) data[i] = Math.sin(++k) * 0.05;
      model.loadTrainableTensors(t);
      const merged = mergeLora(weights, t, LORA_ALL.rank);
      assertParity(config, model, merged, { ...config, tieWordEmbeddings: false });
    }
  });

  it("LoRA with B = 0 gives exactly the base model's logprobs", () => {
    const config = tinyConfig("llama");
    const batch = inputsFor(tinyBatch(config), "cross_entropy");
    const base = makeModel64(config, FULL).forwardBackward(batch, "cross_entropy", undefined, false);
    const lora = makeModel64(config, LORA_ALL).forwardBackward(batch, "cross_entropy", undefined, false);
    assert.deepEqual(lora.logprobs, base.logprobs);
  });

  it("tied equals untied with lm_head copied from embed_tokens, bit for bit", () => {
    const tied = tinyConfig("llama", { tieWordEmbeddings: true });
    const untied = { ...tied, tieWordEmbeddings: false };
    const w = tinyWeights(tied);
    const w2 = new Map(w);
    w2.set("lm_head.weight", Float32Array.from(w.get("model.embed_tokens.weight") ?? []));
    const batch = inputsFor(tinyBatch(tied), "cross_entropy");
    const a = EngineModel.create(tied, w, FULL, referenceKernels).forwardBackward(batch, "cross_entropy", undefined, false);
    const b = EngineModel.create(untied, w2, FULL, referenceKernels).forwardBackward(batch, "cross_entropy", undefined, false);
    assert.deepEqual(a.logprobs, b.logprobs);
  });
});
