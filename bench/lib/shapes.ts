// Model shapes the speed benchmarks use: the real architectures' dimensions (config.json of each
// model on the Hub), so a random-weight model costs what the real one costs.
import { type ModelConfig, parseModelConfig } from "../../src/engine/model/config.ts";
import { modelConfigToHfJson } from "../../src/engine/storage/loadModel.ts";

export const BENCH_SHAPES = {
  "smollm2-135m": {
    modelType: "llama",
    vocabSize: 49152,
    hiddenSize: 576,
    intermediateSize: 1536,
    numLayers: 30,
    numHeads: 9,
    numKvHeads: 3,
    headDim: 64,
    rmsNormEps: 1e-5,
    ropeTheta: 100000,
    ropeScaling: null,
    maxPositionEmbeddings: 8192,
    tieWordEmbeddings: true,
    attentionBias: false,
    qkNorm: false,
  },
  "qwen3-0.6b": {
    modelType: "qwen3",
    vocabSize: 151936,
    hiddenSize: 1024,
    intermediateSize: 3072,
    numLayers: 28,
    numHeads: 16,
    numKvHeads: 8,
    headDim: 128,
    rmsNormEps: 1e-6,
    ropeTheta: 1000000,
    ropeScaling: null,
    maxPositionEmbeddings: 40960,
    tieWordEmbeddings: true,
    attentionBias: false,
    qkNorm: true,
  },
  "llama-3.2-1b": {
    modelType: "llama",
    vocabSize: 128256,
    hiddenSize: 2048,
    intermediateSize: 8192,
    numLayers: 16,
    numHeads: 32,
    numKvHeads: 8,
    headDim: 64,
    rmsNormEps: 1e-5,
    ropeTheta: 500000,
    ropeScaling: { type: "llama3", factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 },
    maxPositionEmbeddings: 131072,
    tieWordEmbeddings: true,
    attentionBias: false,
    qkNorm: false,
  },
  // Qwen3-30B-A3B's layer (128 experts of width 768, 8 per token, renormalised; 32 / 4 heads of
  // 128) and its vocabulary, with 2 of its 48 layers: a step costs 2/48 of the real model's layers.
  "qwen3-30b-a3b-2l": {
    modelType: "qwen3_moe",
    vocabSize: 151936,
    hiddenSize: 2048,
    intermediateSize: 6144,
    numLayers: 2,
    numHeads: 32,
    numKvHeads: 4,
    headDim: 128,
    rmsNormEps: 1e-6,
    ropeTheta: 1000000,
    ropeScaling: null,
    maxPositionEmbeddings: 40960,
    tieWordEmbeddings: false,
    attentionBias: false,
    qkNorm: true,
    moe: { numExperts: 128, topK: 8, normTopkProb: true, expertIntermediateSize: 768, sparseLayers: [true, true], routerAuxLossCoef: 0.001 },
  },
} satisfies Record<string, ModelConfig>;

export type BenchShapeName = keyof typeof BENCH_SHAPES;

const gemmaLayerTypes = (layers: number): string[] => Array.from({ length: layers }, (_, l) => ((l + 1) % 6 === 0 ? "full_attention" : "sliding_attention"));

/**
 * The newer families' shapes as their Hub config.json gives them (the fields the engine reads),
 * parsed by the engine's own config reader. Models too big for this machine's benchmarks keep
 * their real layer but fewer layers ("-4l": 4 of them), so a step costs that share of the real one.
 */
export const HF_BENCH_SHAPES: Record<string, Record<string, unknown>> = {
  // google/gemma-3-270m: 18 layers, 5 sliding (window 512) then 1 global, 4 heads / 1 KV head of 256.
  "gemma3-270m": {
    model_type: "gemma3_text",
    vocab_size: 262144,
    hidden_size: 640,
    intermediate_size: 2048,
    num_hidden_layers: 18,
    num_attention_heads: 4,
    num_key_value_heads: 1,
    head_dim: 256,
    hidden_activation: "gelu_pytorch_tanh",
    query_pre_attn_scalar: 256,
    sliding_window: 512,
    layer_types: gemmaLayerTypes(18),
    rope_parameters: { full_attention: { rope_type: "default", rope_theta: 1000000 }, sliding_attention: { rope_type: "default", rope_theta: 10000 } },
    max_position_embeddings: 32768,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: true,
  },
  // HuggingFaceTB/SmolLM3-3B: 36 layers of which every 4th has no RoPE; 4 of them here.
  "smollm3-3b-4l": {
    model_type: "smollm3",
    vocab_size: 128256,
    hidden_size: 2048,
    intermediate_size: 11008,
    num_hidden_layers: 4,
    num_attention_heads: 16,
    num_key_value_heads: 4,
    no_rope_layers: [1, 1, 1, 0],
    rope_parameters: { rope_type: "default", rope_theta: 5000000 },
    max_position_embeddings: 65536,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: true,
  },
  // allenai/OLMo-2-0425-1B: 16 layers, 16 heads without grouping, untied 100352-token vocabulary.
  "olmo2-1b": {
    model_type: "olmo2",
    vocab_size: 100352,
    hidden_size: 2048,
    intermediate_size: 8192,
    num_hidden_layers: 16,
    num_attention_heads: 16,
    num_key_value_heads: 16,
    rope_parameters: { rope_type: "default", rope_theta: 500000 },
    max_position_embeddings: 4096,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: false,
  },
  // Qwen/Qwen3.5-0.8B's text decoder: 24 layers, every 4th gated full attention (8 heads / 2 KV heads
  // of 256, a quarter of each head roped), the others Gated DeltaNet (16 heads of 128 for q, k, v).
  "qwen3.5-0.8b": {
    model_type: "qwen3_5_text",
    vocab_size: 248320,
    hidden_size: 1024,
    intermediate_size: 3584,
    num_hidden_layers: 24,
    num_attention_heads: 8,
    num_key_value_heads: 2,
    head_dim: 256,
    layer_types: Array.from({ length: 24 }, (_, l) => ((l + 1) % 4 === 0 ? "full_attention" : "linear_attention")),
    linear_conv_kernel_dim: 4,
    linear_num_key_heads: 16,
    linear_num_value_heads: 16,
    linear_key_head_dim: 128,
    linear_value_head_dim: 128,
    partial_rotary_factor: 0.25,
    rope_parameters: { rope_type: "default", rope_theta: 10000000, partial_rotary_factor: 0.25 },
    max_position_embeddings: 262144,
    rms_norm_eps: 1e-6,
    tie_word_embeddings: true,
  },
  // microsoft/Phi-3-mini-4k-instruct: 32 layers with fused qkv and gate_up, window 2047; 4 of them here.
  "phi3-mini-4l": {
    model_type: "phi3",
    vocab_size: 32064,
    hidden_size: 3072,
    intermediate_size: 8192,
    num_hidden_layers: 4,
    num_attention_heads: 32,
    num_key_value_heads: 32,
    sliding_window: 2047,
    rope_parameters: { rope_type: "default", rope_theta: 10000 },
    max_position_embeddings: 4096,
    rms_norm_eps: 1e-5,
    tie_word_embeddings: false,
  },
  // openai/gpt-oss-20b's layers (32 experts of width 2880, 4 per token, attention sinks, 64 / 8
  // heads of 64, YaRN) and its 201088-token vocabulary, with 2 of its 24 layers (one sliding, one
  // full); bf16 experts here (the released MXFP4 ones are measured by bench:gpt_oss_memory).
  "gpt-oss-20b-2l": {
    model_type: "gpt_oss",
    vocab_size: 201088,
    hidden_size: 2880,
    intermediate_size: 2880,
    num_hidden_layers: 2,
    num_attention_heads: 64,
    num_key_value_heads: 8,
    head_dim: 64,
    num_local_experts: 32,
    num_experts_per_tok: 4,
    attention_bias: true,
    layer_types: ["sliding_attention", "full_attention"],
    sliding_window: 128,
    swiglu_limit: 7.0,
    rope_theta: 150000,
    rope_scaling: { rope_type: "yarn", factor: 32.0, beta_fast: 32.0, beta_slow: 1.0, original_max_position_embeddings: 4096, truncate: false },
    max_position_embeddings: 131072,
    rms_norm_eps: 1e-5,
    router_aux_loss_coef: 0.9,
    tie_word_embeddings: false,
  },
};

export const BENCH_SHAPE_NAMES = [...Object.keys(BENCH_SHAPES), ...Object.keys(HF_BENCH_SHAPES)];

export function benchShape(name: string): ModelConfig {
  const hf = HF_BENCH_SHAPES[name];
  if (hf !== undefined) return parseModelConfig(hf, `bench shape ${name}`);
  if (!(name in BENCH_SHAPES)) {
    throw new Error(`unknown shape "${name}"; expected one of ${BENCH_SHAPE_NAMES.join(", ")}`);
  }
  return BENCH_SHAPES[name as BenchShapeName];
}

/** The config.json transformers builds the shape's random model from. */
export function benchShapeHfJson(name: string): Record<string, unknown> {
  const hf = HF_BENCH_SHAPES[name];
  if (hf !== undefined) return { ...hf };
  return hfJsonOf(benchShape(name));
}

/** config.json for transformers' random init of a config built in code. */
export function hfJsonOf(config: ModelConfig): Record<string, unknown> {
  const json = modelConfigToHfJson(config);
  delete json.architectures;
  delete json.torch_dtype;
  return json;
}

/**
 * FLOPs of one LoRA training step on T tokens in sequences of `len`: forward and input-gradient
 * products through every frozen linear and the head (4·P·T), the rank-r adapter products on all of
 * them (forward, both adapter gradients, input gradient: 6·r·(in+out)·T per adapted linear), and
 * causal attention (scores and values, forward 2 products, backward 4, over the causal half).
 */
export function loraStepFlops(c: ModelConfig, T: number, len: number, rank: number): { dense: number; lora: number; attention: number } {
  const { hiddenSize: D, numHeads: H, numKvHeads: Hkv, headDim: d, numLayers: L, vocabSize: V } = c;
  // A mixture of experts costs, per token, its k experts and the router.
  const moe = c.moe;
  const F = moe === undefined ? c.intermediateSize : moe.expertIntermediateSize;
  const mlpCopies = moe === undefined ? 1 : moe.topK;
  const linears: [number, number][] = [
    [D, H * d],
    [D, Hkv * d],
    [D, Hkv * d],
    [H * d, D],
    ...Array.from({ length: mlpCopies }, (): [number, number][] => [
      [D, F],
      [D, F],
      [F, D],
    ]).flat(),
  ];
  let params = V * D + (moe === undefined ? 0 : L * D * moe.numExperts);
  let inOut = D + V;
  for (const [i, o] of linears) {
    params += L * i * o;
    inOut += L * (i + o);
  }
  const seqs = T / len;
  return {
    dense: 4 * params * T,
    lora: 6 * rank * inOut * T,
    attention: (L * seqs * 6 * 2 * H * d * (len * (len + 1))) / 2,
  };
}
