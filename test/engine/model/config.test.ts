// config.json parsing and the expected checkpoint tensors.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { attentionScale, expectedTensorShapes, parseModelConfig, shapeSize } from "../../../src/engine/model/config.ts";
import { ropeInvFreq } from "../../../src/engine/model/rope.ts";

const smollm = {
  architectures: ["LlamaForCausalLM"],
  model_type: "llama",
  vocab_size: 49152,
  hidden_size: 576,
  intermediate_size: 1536,
  num_hidden_layers: 30,
  num_attention_heads: 9,
  num_key_value_heads: 3,
  head_dim: 64,
  hidden_act: "silu",
  rms_norm_eps: 1e-5,
  rope_theta: 100000,
  rope_scaling: null,
  max_position_embeddings: 8192,
  tie_word_embeddings: true,
  bos_token_id: 0,
  eos_token_id: 0,
  attention_bias: false,
  mlp_bias: false,
  torch_dtype: "bfloat16",
};

describe("parseModelConfig", () => {
  it("reads a SmolLM2-135M config and counts 134,515,008 parameters", () => {
    const c = parseModelConfig(smollm, "smollm/config.json");
    assert.equal(c.headDim, 64);
    assert.equal(c.ropeTheta, 100000);
    assert.equal(c.tieWordEmbeddings, true);
    assert.equal(c.eosTokenId, 0);
    let total = 0;
    for (const shape of expectedTensorShapes(c).values()) total += shapeSize(shape);
    assert.equal(total, 134515008);
    assert.ok(!expectedTensorShapes(c).has("lm_head.weight"));
    assert.deepEqual(expectedTensorShapes(c).get("model.layers.29.self_attn.k_proj.weight"), [192, 576]);
  });

  it("qwen2 always has q,k,v biases (not o); qwen3 has q/k norms and head_dim 128 by default", () => {
    const q2 = parseModelConfig(
      { ...smollm, model_type: "qwen2", attention_bias: undefined, head_dim: undefined, hidden_size: 896, num_attention_heads: 14, num_key_value_heads: 2 },
      "q2",
    );
    assert.equal(q2.headDim, 64);
    const s2 = expectedTensorShapes(q2);
    assert.deepEqual(s2.get("model.layers.0.self_attn.q_proj.bias"), [896]);
    assert.deepEqual(s2.get("model.layers.0.self_attn.v_proj.bias"), [128]);
    assert.ok(!s2.has("model.layers.0.self_attn.o_proj.bias"));
    const q3 = parseModelConfig(
      { ...smollm, model_type: "qwen3", head_dim: undefined, hidden_size: 1024, num_attention_heads: 16, num_key_value_heads: 8, eos_token_id: [1, 2] },
      "q3",
    );
    assert.equal(q3.headDim, 128);
    assert.equal(q3.qkNorm, true);
    assert.deepEqual(q3.eosTokenId, [1, 2]);
    const s3 = expectedTensorShapes(q3);
    assert.deepEqual(s3.get("model.layers.3.self_attn.q_proj.weight"), [2048, 1024]);
    assert.deepEqual(s3.get("model.layers.3.self_attn.o_proj.weight"), [1024, 2048]);
    assert.deepEqual(s3.get("model.layers.3.self_attn.k_norm.weight"), [128]);
  });

  it("olmo2: q/k norms over the whole projections, post-norms instead of input norms, eps 1e-5 by default", () => {
    const o = parseModelConfig(
      { ...smollm, model_type: "olmo2", head_dim: undefined, rms_norm_eps: undefined, hidden_size: 2048, num_attention_heads: 16, num_key_value_heads: 16 },
      "o",
    );
    assert.equal(o.headDim, 128);
    assert.equal(o.rmsNormEps, 1e-5);
    assert.equal(o.qkNormScope, "projection");
    assert.equal(o.normPlacement, "post");
    const s = expectedTensorShapes(o);
    assert.deepEqual(s.get("model.layers.1.self_attn.q_norm.weight"), [2048]);
    assert.deepEqual(s.get("model.layers.1.self_attn.k_norm.weight"), [2048]);
    assert.deepEqual(s.get("model.layers.1.post_attention_layernorm.weight"), [2048]);
    assert.deepEqual(s.get("model.layers.1.post_feedforward_layernorm.weight"), [2048]);
    assert.ok(!s.has("model.layers.1.input_layernorm.weight"));
  });

  it("gemma3_text: layer types, per-type rope bases, (1 + w) norms, embedding and score scales; unsupported options refused", () => {
    const base = {
      model_type: "gemma3_text",
      vocab_size: 262144,
      hidden_size: 640,
      intermediate_size: 2048,
      num_hidden_layers: 3,
      num_attention_heads: 4,
      num_key_value_heads: 1,
      head_dim: 256,
      query_pre_attn_scalar: 256,
      sliding_window: 512,
      layer_types: ["sliding_attention", "sliding_attention", "full_attention"],
      hidden_activation: "gelu_pytorch_tanh",
      rope_parameters: { full_attention: { rope_type: "default", rope_theta: 1000000 }, sliding_attention: { rope_type: "default", rope_theta: 10000 } },
    };
    const g = parseModelConfig(base, "g");
    assert.deepEqual(g.slidingLayers, [true, true, false]);
    assert.equal(g.slidingWindow, 512);
    assert.equal(g.ropeTheta, 1000000);
    assert.equal(g.ropeThetaLocal, 10000);
    assert.equal(g.tieWordEmbeddings, true);
    assert.equal(g.embedScale, Math.fround(Math.sqrt(640)));
    assert.equal(g.normOffset, true);
    assert.equal(g.hiddenAct, "gelu_tanh");
    const s = expectedTensorShapes(g);
    for (const n of ["input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm"]) {
      assert.deepEqual(s.get(`model.layers.2.${n}.weight`), [640]);
    }
    assert.deepEqual(s.get("model.layers.0.self_attn.q_norm.weight"), [256]);
    assert.ok(!s.has("lm_head.weight"));
    // Older configs: no layer_types (every 6th layer global) and the legacy rope fields.
    const old = parseModelConfig(
      { ...base, num_hidden_layers: 7, layer_types: undefined, rope_parameters: undefined, rope_theta: 5e5, rope_local_base_freq: 2e4 },
      "old",
    );
    assert.deepEqual(old.slidingLayers, [true, true, true, true, true, false, true]);
    assert.equal(old.ropeTheta, 5e5);
    assert.equal(old.ropeThetaLocal, 2e4);
    assert.throws(
      () => parseModelConfig({ ...base, final_logit_softcapping: 30 }, "/g/config.json"),
      /\/g\/config.json: field "final_logit_softcapping" must be null \(logit soft-capping is not implemented\), got 30/,
    );
    assert.throws(() => parseModelConfig({ ...base, layer_types: ["full_attention"] }, "g"), /field "layer_types" must be a list of 3/);
    assert.throws(() => parseModelConfig({ ...base, hidden_activation: "gelu" }, "g"), /field "hidden_activation" must be "gelu_pytorch_tanh", got "gelu"/);
    assert.throws(
      () => parseModelConfig({ ...base, rope_parameters: { ...base.rope_parameters, full_attention: { rope_type: "linear", factor: 8 } } }, "g"),
      /field "rope_parameters.full_attention.rope_type" must be "default"/,
    );
  });

  it("smollm3: NoPE layers from no_rope_layers (or every 4th by default), rope theta 2e6 and tied embeddings by default, optional sliding window", () => {
    const base = { ...smollm, model_type: "smollm3", num_hidden_layers: 8, rope_theta: undefined, tie_word_embeddings: undefined };
    const a = parseModelConfig(base, "a");
    assert.deepEqual(a.ropeLayers, [true, true, true, false, true, true, true, false]);
    assert.equal(a.ropeTheta, 2_000_000);
    assert.equal(a.tieWordEmbeddings, true);
    assert.equal(a.slidingLayers, undefined);
    const b = parseModelConfig({ ...base, num_hidden_layers: 2, no_rope_layers: [0, 1], use_sliding_window: true, sliding_window: 64 }, "b");
    assert.deepEqual(b.ropeLayers, [false, true]);
    assert.deepEqual(b.slidingLayers, [true, false]);
    assert.equal(b.slidingWindow, 64);
    assert.throws(() => parseModelConfig({ ...base, no_rope_layers: [1, 0] }, "c.json"), /c.json: field "no_rope_layers" must be a list of 8 entries/);
    assert.throws(() => parseModelConfig({ ...smollm, use_sliding_window: true }, "d.json"), /field "use_sliding_window" must be false/);
  });

  it("qwen3_5_text: linear-attention layers (every 4th full by default), gated attention, (1 + w) norms, partial RoPE; a qwen3_5 checkpoint's text_config", () => {
    const text = {
      model_type: "qwen3_5_text",
      vocab_size: 248320,
      hidden_size: 1024,
      intermediate_size: 3584,
      num_hidden_layers: 8,
      num_attention_heads: 8,
      num_key_value_heads: 2,
      head_dim: 256,
      linear_conv_kernel_dim: 4,
      linear_key_head_dim: 128,
      linear_value_head_dim: 128,
      linear_num_key_heads: 16,
      linear_num_value_heads: 16,
      rope_parameters: { rope_type: "default", rope_theta: 10000000, partial_rotary_factor: 0.25, mrope_section: [11, 11, 10], mrope_interleaved: true },
    };
    const a = parseModelConfig(text, "a");
    assert.deepEqual(a.linearAttention, {
      layers: [true, true, true, false, true, true, true, false],
      convKernel: 4,
      numKeyHeads: 16,
      numValueHeads: 16,
      keyHeadDim: 128,
      valueHeadDim: 128,
    });
    assert.equal(a.rotaryDim, 64);
    assert.equal(a.ropeTheta, 10000000);
    assert.ok(a.attnOutputGate && a.normOffset && a.qkNorm && !a.tieWordEmbeddings);
    // The multimodal checkpoint nests the decoder; its top-level tying applies when the text config has none.
    const b = parseModelConfig({ model_type: "qwen3_5", tie_word_embeddings: true, text_config: text, vision_config: { depth: 2 } }, "/q/config.json");
    assert.deepEqual({ ...b, tieWordEmbeddings: false }, a);
    assert.equal(b.tieWordEmbeddings, true);
    assert.throws(
      () => parseModelConfig({ model_type: "qwen3_5" }, "/q/config.json"),
      /\/q\/config.json: field "text_config" of a qwen3_5 config must be an object/,
    );
    assert.throws(
      () => parseModelConfig({ ...text, layer_types: ["linear_attention", "sliding_attention"] }, "c.json"),
      /c.json: field "layer_types" must be a list of 8 "linear_attention" \/ "full_attention" entries/,
    );
    assert.throws(
      () => parseModelConfig({ ...text, linear_num_value_heads: 24 }, "d.json"),
      /field "linear_num_value_heads" must be a multiple of linear_num_key_heads \(16\)/,
    );
    assert.throws(
      () => parseModelConfig({ ...text, rope_parameters: { ...text.rope_parameters, partial_rotary_factor: 0.001 } }, "e.json"),
      /field "partial_rotary_factor" must be a factor giving an even rotary width/,
    );
  });

  it("reads llama3 rope scaling under rope_scaling (type or rope_type) and rope_parameters", () => {
    const scaling = { rope_type: "llama3", factor: 32, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 };
    const a = parseModelConfig({ ...smollm, rope_theta: 500000, rope_scaling: scaling }, "a");
    assert.deepEqual(a.ropeScaling, { type: "llama3", factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 });
    const b = parseModelConfig({ ...smollm, rope_theta: undefined, rope_scaling: undefined, rope_parameters: { ...scaling, rope_theta: 500000 } }, "b");
    assert.deepEqual(b.ropeScaling, a.ropeScaling);
    assert.equal(b.ropeTheta, 500000);
    const c = parseModelConfig({ ...smollm, rope_scaling: { type: "default" } }, "c");
    assert.equal(c.ropeScaling, null);
  });

  it("errors name the source and the field", () => {
    assert.throws(
      () => parseModelConfig({ ...smollm, model_type: "gpt2" }, "/m/config.json"),
      /\/m\/config.json: field "model_type" must be one of "llama", "qwen2", "qwen3", "olmo2", "gemma3_text", "smollm3".*got "gpt2"/,
    );
    assert.throws(() => parseModelConfig({ ...smollm, hidden_size: undefined }, "x.json"), /x.json: required field "hidden_size" is missing/);
    assert.throws(() => parseModelConfig({ ...smollm, num_hidden_layers: 2.5 }, "x.json"), /field "num_hidden_layers" must be an integer >= 1, got 2.5/);
    assert.throws(
      () => parseModelConfig({ ...smollm, num_key_value_heads: 4 }, "x.json"),
      /num_attention_heads \(9\) must be a multiple of num_key_value_heads \(4\)/,
    );
    assert.throws(
      () => parseModelConfig({ ...smollm, rope_scaling: { rope_type: "longrope", factor: 4 } }, "x.json"),
      /field "rope_scaling.rope_type" must be "llama3", "yarn" or "default"/,
    );
    assert.throws(() => parseModelConfig({ ...smollm, rope_scaling: { rope_type: "llama3", factor: 4 } }, "x.json"), /rope_scaling.low_freq_factor/);
    assert.throws(() => parseModelConfig({ ...smollm, mlp_bias: true }, "x.json"), /field "mlp_bias" must be false/);
    assert.throws(() => parseModelConfig({ ...smollm, hidden_act: "gelu" }, "x.json"), /field "hidden_act" must be "silu"/);
    assert.throws(() => parseModelConfig([], "x.json"), /x.json: expected a JSON object, got an array/);
  });
});

describe("gpt_oss config", () => {
  const gptOss = {
    model_type: "gpt_oss",
    vocab_size: 64,
    hidden_size: 32,
    intermediate_size: 32,
    num_hidden_layers: 4,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    num_local_experts: 4,
    rope_scaling: { rope_type: "yarn", factor: 32, beta_fast: 32, beta_slow: 1, truncate: false, original_max_position_embeddings: 4096 },
  };
  it("takes transformers' defaults: alternating sliding layers (window 128), biases, sinks, head_dim 64, top 4, the clamp at 7", () => {
    const c = parseModelConfig(gptOss, "x");
    assert.deepEqual(c.slidingLayers, [true, false, true, false]);
    assert.equal(c.slidingWindow, 128);
    assert.equal(c.headDim, 64);
    assert.equal(c.ropeTheta, 150000);
    assert.equal(c.rmsNormEps, 1e-5);
    assert.ok(c.attentionBias && c.attentionSinks);
    assert.deepEqual(c.moe, {
      numExperts: 4,
      topK: 4,
      normTopkProb: true,
      expertIntermediateSize: 32,
      sparseLayers: [true, true, true, true],
      routerAuxLossCoef: 0.001,
      gptOss: { swigluLimit: 7 },
    });
  });
  it("refuses a clamp other than transformers' and a quantization other than MXFP4", () => {
    assert.throws(() => parseModelConfig({ ...gptOss, swiglu_limit: 5 }, "x"), /field "swiglu_limit" must be 7/);
    assert.doesNotThrow(() => parseModelConfig({ ...gptOss, swiglu_limit: 7, quantization_config: { quant_method: "mxfp4" } }, "x"));
    assert.throws(
      () => parseModelConfig({ ...gptOss, quantization_config: { quant_method: "bitsandbytes" } }, "x"),
      /quantization_config.quant_method" must be "mxfp4"/,
    );
  });
  it("YaRN gives transformers' inv_freq and attention factor (GPT-OSS-20B's rope, with and without truncate)", () => {
    // transformers 5.18 _compute_yarn_parameters for head_dim 64, theta 150000, factor 32, original 4096: every 4th frequency.
    const expected = {
      false: [
        1.0, 0.22541800141334534, 0.05081327259540558, 0.006794959306716919, 0.0004564839182421565, 1.818833698052913e-5, 4.099978468730114e-6,
        9.242089618055616e-7,
      ],
      true: [
        1.0, 0.22541800141334534, 0.05081327259540558, 0.007015713956207037, 0.0005809474969282746, 1.818833698052913e-5, 4.099978468730114e-6,
        9.242089618055616e-7,
      ],
    };
    for (const truncate of [false, true]) {
      const c = parseModelConfig({ ...gptOss, head_dim: 64, rope_scaling: { ...gptOss.rope_scaling, truncate } }, "x");
      const inv = ropeInvFreq(c).filter((_, i) => i % 4 === 0);
      inv.forEach((v, i) =>
        assert.ok(Math.abs(v - expected[`${truncate}`][i]!) <= 1e-7 * expected[`${truncate}`][i]!, `truncate ${truncate}, i = ${4 * i}: ${v}`),
      );
    }
    const c = parseModelConfig(gptOss, "x");
    assert.ok(c.ropeScaling?.type === "yarn" && Math.abs(c.ropeScaling.attentionFactor - 1.3465735902799727) < 1e-15);
    assert.ok(Math.abs(attentionScale(c) - 1.3465735902799727 ** 2 / 8) < 1e-15);
  });
});

describe("ropeInvFreq", () => {
  it("is 1/theta^(2i/d), and llama3 scaling keeps high, divides low and blends middle frequencies", () => {
    const base = parseModelConfig({ ...smollm, head_dim: 8, num_attention_heads: 72, num_key_value_heads: 24, rope_theta: 100 }, "x");
    const plain = ropeInvFreq(base);
    assert.deepEqual(
      Array.from(plain).map((x) => Number(x.toPrecision(6))),
      [1, 0.316228, 0.1, 0.0316228],
    );
    const scaled = ropeInvFreq({ ...base, ropeScaling: { type: "llama3", factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 32 } });
    assert.equal(scaled[0], plain[0]);
    // wavelength 2π/0.316 = 19.87 lies between 32/4 and 32/1: smooth = (32/19.87 - 1)/3.
    const smooth = (32 / ((2 * Math.PI) / plain[1]) - 1) / 3;
    assert.ok(Math.abs(scaled[1] - (((1 - smooth) * plain[1]) / 8 + smooth * plain[1])) < 1e-7);
    assert.ok(Math.abs(scaled[2] - plain[2] / 8) < 1e-9);
    assert.ok(Math.abs(scaled[3] - plain[3] / 8) < 1e-9);
  });
});
