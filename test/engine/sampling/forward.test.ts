// The sampler's incremental forward (KV cache, merged LoRA) against the training forward.
import { test } from "node:test";
import assert from "node:assert/strict";
import { referenceKernels } from "../../../src/engine/kernels/index.ts";
import { parseModelConfig } from "../../../src/engine/model/config.ts";
import { EngineModel, type SequenceInput } from "../../../src/engine/model/model.ts";
import { forwardHidden, headLogits, inferenceModel, KvCache } from "../../../src/engine/sampling/forward.ts";
import { computePromptLogprobs } from "../../../src/engine/sampling/scheduler.ts";
import { buildInferenceWeights } from "../../../src/engine/sampling/weights.ts";
import { randomTokens, tinyConfigJson } from "../helpers.ts";

const k = referenceKernels;

/** Qwen3.5 in small: a Gated DeltaNet layer (2 key heads shared by 4 value heads), then gated full attention. */
const QWEN35_JSON = tinyConfigJson({
  model_type: "qwen3_5_text",
  num_hidden_layers: 3,
  layer_types: ["linear_attention", "full_attention", "linear_attention"],
  linear_conv_kernel_dim: 4,
  linear_num_key_heads: 2,
  linear_num_value_heads: 4,
  linear_key_head_dim: 8,
  linear_value_head_dim: 6,
  rope_parameters: { rope_type: "default", rope_theta: 10000, partial_rotary_factor: 0.5 },
});

function ceInput(tokens: number[]): SequenceInput {
  return {
    inputTokens: Int32Array.from(tokens.slice(0, -1)),
    lossInputs: { target_tokens: Int32Array.from(tokens.slice(1)), weights: new Float32Array(tokens.length - 1).fill(1) },
  };
}

function close(a: ArrayLike<number | null>, b: ArrayLike<number>, tol: number, what: string): void {
  assert.equal(a.length, b.length, `${what}: lengths`);
  for (let i = 0; i < a.length; i++) assert.ok(Math.abs((a[i] as number) - b[i]) < tol, `${what}[${i}]: ${a[i]} vs ${b[i]}`);
}

for (const variant of [
  { name: "llama, untied", json: tinyConfigJson() },
  { name: "qwen3 (q/k norm), tied", json: tinyConfigJson({ model_type: "qwen3", tie_word_embeddings: true }) },
  { name: "qwen2 (biases)", json: tinyConfigJson({ model_type: "qwen2" }) },
  { name: "olmo2 (post-norms, whole-projection q/k norms)", json: tinyConfigJson({ model_type: "olmo2" }) },
  {
    name: "gemma3_text (sliding and global layers, (1 + w) norms, GELU-tanh)",
    json: tinyConfigJson({
      model_type: "gemma3_text",
      hidden_act: undefined,
      sliding_window: 4,
      layer_types: ["sliding_attention", "full_attention"],
      query_pre_attn_scalar: 6,
    }),
  },
  { name: "smollm3 (a NoPE layer)", json: tinyConfigJson({ model_type: "smollm3", no_rope_layers: [0, 1] }) },
  {
    name: "qwen3_moe (top-2 of 4 experts with the shared-outer expert LoRA, a dense layer)",
    json: tinyConfigJson({
      model_type: "qwen3_moe",
      num_experts: 4,
      num_experts_per_tok: 2,
      moe_intermediate_size: 6,
      norm_topk_prob: true,
      mlp_only_layers: [1],
    }),
  },
  {
    name: "phi3 (fused projections, LoRA on the fused matrices, sliding window)",
    json: tinyConfigJson({ model_type: "phi3", head_dim: undefined, sliding_window: 5 }),
  },
  { name: "qwen3_5_text (Gated DeltaNet layers with LoRA on in_proj_*/out_proj, gated attention)", json: QWEN35_JSON },
]) {
  test(`prompt logprobs through the KV cache equal the training forward (${variant.name}, trained LoRA merged)`, () => {
    const config = parseModelConfig(variant.json, "tiny");
    const weights = EngineModel.randomWeights(config, 3);
    const model = EngineModel.create(config, weights, { mode: "lora", rank: 4, seed: 1, trainAttn: true, trainMlp: true, trainUnembed: true }, k);
    const train = [ceInput(randomTokens(14, 1)), ceInput(randomTokens(9, 2))];
    for (let i = 0; i < 3; i++) {
      model.forwardBackward(train, "cross_entropy", undefined, true);
      model.optimStep({ learning_rate: 0.05, beta1: 0.9, beta2: 0.95, eps: 1e-8, weight_decay: 0, grad_clip_norm: 0 });
    }
    const inf = inferenceModel(buildInferenceWeights(config, model.baseWeights(), { rank: 4, tensors: model.trainableTensors() }), k);
    const tokens = randomTokens(17, 9);
    const expected = model.forwardBackward([ceInput(tokens)], "cross_entropy", undefined, false).logprobs[0];
    const got = computePromptLogprobs(inf, Int32Array.from(tokens));
    assert.equal(got[0], null);
    close(got.slice(1), expected, 2e-4, "prompt logprobs");
    // An untrained adapter (B = 0) leaves the base model exactly.
    const base = inferenceModel(buildInferenceWeights(config, weights, null), k);
    const fresh = EngineModel.create(config, weights, { mode: "full", seed: 0 }, k);
    close(
      computePromptLogprobs(base, Int32Array.from(tokens)).slice(1),
      fresh.forwardBackward([ceInput(tokens)], "cross_entropy", undefined, false).logprobs[0],
      2e-4,
      "base",
    );
  });
}

for (const [name, json] of [
  ["llama", tinyConfigJson()],
  ["qwen3_5_text: recurrent states per slot, reset at position 0, copied and grown", QWEN35_JSON],
] as const)
  test(`token-by-token decoding, prefill in chunks and decoding in mixed batches give the same logits (${name})`, () => {
    const config = parseModelConfig(json, "tiny");
    const inf = inferenceModel(buildInferenceWeights(config, EngineModel.randomWeights(config, 5), null), k);
    const tokens = randomTokens(12, 4);
    const V = config.vocabSize;
    // All at once.
    const all = new KvCache(config, 1, 16);
    const idx = Int32Array.from(tokens.keys());
    const full = headLogits(inf, forwardHidden(inf, all, Int32Array.from(tokens), idx, new Int32Array(12), idx), 12);
    // One token per call in slot 2 of a 3-slot cache, while slot 0 decodes another sequence in the same calls.
    const inc = new KvCache(config, 3, 16);
    const other = randomTokens(12, 8);
    for (let t = 0; t < 12; t++) {
      const h = forwardHidden(inf, inc, Int32Array.of(other[t], tokens[t]), Int32Array.of(t, t), Int32Array.of(0, 2), Int32Array.of(1));
      close(headLogits(inf, h, 1), full.subarray(t * V, (t + 1) * V), 1e-5, `step ${t}`);
    }
    // A prompt prefilled in slot 0 and copied to slot 1 continues like the original.
    const c = new KvCache(config, 2, 16);
    const p = Int32Array.from(tokens.slice(0, 8));
    forwardHidden(inf, c, p, Int32Array.from(p.keys()), new Int32Array(8), Int32Array.of(7));
    c.copySlot(0, 1, 8);
    const grown = c.grown(4, 32, [8, 8]);
    const h = forwardHidden(inf, grown, Int32Array.of(tokens[8], tokens[8]), Int32Array.of(8, 8), Int32Array.of(0, 1), Int32Array.of(0, 1));
    const l = headLogits(inf, h, 2);
    close(l.subarray(0, V), full.subarray(8 * V, 9 * V), 1e-5, "slot 0 after grow");
    close(l.subarray(V, 2 * V), full.subarray(8 * V, 9 * V), 1e-5, "copied slot");
    // A slot reused for a new sequence starts over at position 0 (its old state is dropped).
    const again = forwardHidden(inf, grown, Int32Array.from(tokens.slice(0, 3)), Int32Array.of(0, 1, 2), Int32Array.of(1, 1, 1), Int32Array.of(2));
    close(headLogits(inf, again, 1), full.subarray(2 * V, 3 * V), 1e-5, "reused slot");
  });

test("an adapter that does not fit the model is refused with the tensor named", () => {
  const config = parseModelConfig(tinyConfigJson(), "tiny");
  const weights = EngineModel.randomWeights(config, 5);
  const tensors = new Map([["base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight", new Float32Array(4 * 32)]]);
  assert.throws(() => buildInferenceWeights(config, weights, { rank: 4, tensors }), /q_proj\.lora_B\.weight is missing/);
  const extra = new Map([["base_model.model.model.layers.9.self_attn.q_proj.lora_A.weight", new Float32Array(4)]]);
  assert.throws(() => buildInferenceWeights(config, weights, { rank: 4, tensors: extra }), /do not belong/);
});
