// Loads a Hugging Face model folder (config.json + safetensors) into what EngineModel.create
// takes: the parsed config and tensors by HF name (float32, or for frozen bases 16-bit matrices
// mapped from the file), each checked against the shape the config implies so a mismatched
// checkpoint fails here with its file named, not deep in a matmul.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expectedTensorShapes, parseModelConfig, type ModelConfig, type ModelType } from "../model/config.ts";
import { HalfArray, type BaseArray } from "../kernels/halfArray.ts";
import { Mxfp4Matrix } from "../kernels/mxfp4.ts";
import { readModelSafetensors, readModelSafetensorsResident } from "../safetensors/directory.ts";
import type { ResidentTensor } from "../safetensors/resident.ts";
import type { ReadPath } from "../safetensors/reader.ts";

export function readModelConfig(dir: string): { config: ModelConfig; json: Record<string, unknown> } {
  const file = join(dir, "config.json");
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new Error(`${file}: cannot read model config (${(err as Error).message})`);
  }
  return { config: parseModelConfig(json, file), json: json as Record<string, unknown> };
}

/** Float32 tensors by HF name, filtered and shape-checked against `config`; `via` as in readSafetensors. */
export function loadModelWeights(dir: string, config: ModelConfig, options: { via?: ReadPath } = {}): Map<string, Float32Array> {
  // This reader widens every floating tensor (and MXFP4 experts, dense: true), so the checked map holds Float32Arrays only.
  return checkModelTensors(dir, config, readModelSafetensors(dir, options), true) as Map<string, Float32Array>;
}

export function loadModelDir(
  dir: string,
  options: { via?: ReadPath } = {},
): { config: ModelConfig; configJson: Record<string, unknown>; weights: Map<string, Float32Array> } {
  const { config, json } = readModelConfig(dir);
  return { config, configJson: json, weights: loadModelWeights(dir, config, options) };
}

/** How frozen base weights are held: 16-bit matrices mapped from the file, or all float32. */
export type BaseWeightsMode = "resident" | "fp32";

/**
 * COOKBOOK_BASE_WEIGHTS=fp32 forces float32 base weights (the loader before 16-bit residency);
 * unset (or "auto") keeps 16-bit matrices resident when the native kernels run (they need the addon
 * to map files, and the reference kernels would widen a whole matrix per product).
 */
export function baseWeightsMode(kernelsName: "native" | "reference"): BaseWeightsMode {
  const env = process.env.COOKBOOK_BASE_WEIGHTS;
  if (env !== undefined && env !== "" && env !== "auto" && env !== "fp32") {
    throw new Error(
      `COOKBOOK_BASE_WEIGHTS=${JSON.stringify(env)} is not valid; expected "fp32" (float32 base weights) or "auto" (16-bit matrices kept as mapped from the checkpoint, the default)`,
    );
  }
  if (env === "fp32" || kernelsName !== "native" || process.platform === "win32") return "fp32";
  return "resident";
}

/**
 * A model folder as frozen base weights: in "resident" mode every BF16/F16 matrix is a HalfArray
 * over a memory mapping of its file (loading costs the mapping, not a float32 copy of the model);
 * in "fp32" mode, loadModelDir. F32 checkpoints give float32 either way.
 */
export function loadBaseModelDir(
  dir: string,
  mode: BaseWeightsMode,
): { config: ModelConfig; configJson: Record<string, unknown>; weights: Map<string, BaseArray> } {
  if (mode === "fp32") return loadModelDir(dir);
  const { config, json } = readModelConfig(dir);
  return { config, configJson: json, weights: checkModelTensors(dir, config, readModelSafetensorsResident(dir), false) };
}

/**
 * GPT-OSS as released stores its experts' matrices as MXFP4 `<name>_blocks` / `<name>_scales`
 * pairs (kernels/mxfp4.ts): each pair becomes `<name>` with the dense parameter's shape, an
 * Mxfp4Matrix over the bytes as loaded (mapped, in resident mode), or widened when `dense`.
 */
function joinMxfp4(dir: string, config: ModelConfig, tensors: Map<string, ResidentTensor>, dense: boolean): Map<string, ResidentTensor | Mxfp4Tensor> {
  const expected = expectedTensorShapes(config);
  const out = new Map<string, ResidentTensor | Mxfp4Tensor>(tensors);
  for (const [name, blocks] of tensors) {
    if (!name.endsWith("_blocks")) continue;
    const base = name.slice(0, -"_blocks".length);
    const shape = expected.get(base);
    const scales = tensors.get(`${base}_scales`);
    if (shape === undefined || scales === undefined || config.moe?.gptOss === undefined) continue;
    const [E, cols, rows] = shape as [number, number, number];
    const G = cols / 32;
    const wantBlocks = [E, rows, G, 16];
    const wantScales = [E, rows, G];
    const same = (a: number[], b: number[]): boolean => a.length === b.length && a.every((d, i) => d === b[i]);
    if (!(blocks.data instanceof Uint8Array) || !(scales.data instanceof Uint8Array) || !same(blocks.shape, wantBlocks) || !same(scales.shape, wantScales)) {
      throw new Error(
        `${dir}: MXFP4 tensors ${name} (${blocks.dtype} [${blocks.shape.join(", ")}]) and ${base}_scales (${scales.dtype} [${scales.shape.join(", ")}]) must be U8 [${wantBlocks.join(", ")}] and U8 [${wantScales.join(", ")}] for config.json's ${base} [${shape.join(", ")}]`,
      );
    }
    const m = new Mxfp4Matrix(E, rows, cols, blocks.data, scales.data);
    out.delete(name);
    out.delete(`${base}_scales`);
    out.set(base, { dtype: "MXFP4", shape, data: dense ? m.toDense() : m });
  }
  return out;
}

interface Mxfp4Tensor {
  dtype: "MXFP4";
  shape: number[];
  data: Mxfp4Matrix | Float32Array;
}

/**
 * The engine's name of a checkpoint tensor, or null for one it does not use. A Qwen3.5 checkpoint
 * (Qwen3_5ForConditionalGeneration) keeps the decoder under model.language_model., the vision
 * tower under model.visual. and the multi-token-prediction head under mtp.; a text-only save
 * (Qwen3_5ForCausalLM) uses the plain names. Both load.
 */
export function decoderTensorName(config: ModelConfig, name: string): string | null {
  if (config.modelType !== "qwen3_5_text") return name;
  if (name.startsWith("model.language_model.")) return `model.${name.slice("model.language_model.".length)}`;
  if (name.startsWith("model.visual.") || name.startsWith("mtp.")) return null;
  return name;
}

/** The tensors `config` needs, each checked for shape; unused extras of tied/old checkpoints dropped. */
function checkModelTensors(dir: string, config: ModelConfig, read: Map<string, ResidentTensor>, dense: boolean): Map<string, BaseArray> {
  const expected = expectedTensorShapes(config);
  const out = new Map<string, BaseArray>();
  const unexpected: string[] = [];
  const named = new Map<string, ResidentTensor>();
  for (const [stored, t] of read) {
    const name = decoderTensorName(config, stored);
    if (name !== null) named.set(name, t);
  }
  for (const [name, t] of joinMxfp4(dir, config, named, dense)) {
    const shape = expected.get(name);
    if (shape === undefined) {
      // Tied checkpoints sometimes still carry the head; old ones carry rotary buffers. Neither is used.
      if ((name === "lm_head.weight" && config.tieWordEmbeddings) || name.endsWith("rotary_emb.inv_freq")) continue;
      unexpected.push(name);
      continue;
    }
    if (!(t.data instanceof Float32Array) && !(t.data instanceof HalfArray) && !(t.data instanceof Mxfp4Matrix)) {
      throw new Error(`${dir}: tensor ${name} has integer dtype ${t.dtype}; model weights must be floating point`);
    }
    if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
      throw new Error(`${dir}: tensor ${name} has shape [${t.shape.join(", ")}] but config.json implies [${shape.join(", ")}]`);
    }
    out.set(name, t.data);
  }
  if (unexpected.length > 0) {
    throw new Error(
      `${dir}: ${unexpected.length} tensor(s) that a ${config.modelType} model with this config.json does not have: ${unexpected.slice(0, 5).join(", ")}${unexpected.length > 5 ? ", ..." : ""}`,
    );
  }
  const missing = [...expected.keys()].filter((n) => !out.has(n));
  if (missing.length > 0) {
    throw new Error(
      `${dir}: missing ${missing.length} tensor(s) that config.json requires: ${missing.slice(0, 5).join(", ")}${missing.length > 5 ? ", ..." : ""}`,
    );
  }
  return out;
}

function ropeScalingJson(s: ModelConfig["ropeScaling"]): Record<string, unknown> | null {
  if (s === null) return null;
  if (s.type === "yarn") {
    return {
      rope_type: "yarn",
      factor: s.factor,
      beta_fast: s.betaFast,
      beta_slow: s.betaSlow,
      original_max_position_embeddings: s.originalMaxPositionEmbeddings,
      truncate: s.truncate,
      attention_factor: s.attentionFactor,
    };
  }
  return {
    rope_type: "llama3",
    factor: s.factor,
    low_freq_factor: s.lowFreqFactor,
    high_freq_factor: s.highFreqFactor,
    original_max_position_embeddings: s.originalMaxPositionEmbeddings,
  };
}

/** The HF config.json for a config built in code (models trained from scratch), inverse of parseModelConfig. */
export function modelConfigToHfJson(config: ModelConfig): Record<string, unknown> {
  const archs: Record<ModelType, string> = {
    llama: "LlamaForCausalLM",
    qwen2: "Qwen2ForCausalLM",
    qwen3: "Qwen3ForCausalLM",
    olmo2: "Olmo2ForCausalLM",
    gemma3_text: "Gemma3ForCausalLM",
    smollm3: "SmolLM3ForCausalLM",
    phi3: "Phi3ForCausalLM",
    qwen3_moe: "Qwen3MoeForCausalLM",
    qwen3_5_text: "Qwen3_5ForCausalLM",
    gpt_oss: "GptOssForCausalLM",
  };
  const arch = archs[config.modelType];
  const json: Record<string, unknown> = {
    architectures: [arch],
    model_type: config.modelType,
    vocab_size: config.vocabSize,
    hidden_size: config.hiddenSize,
    intermediate_size: config.intermediateSize,
    num_hidden_layers: config.numLayers,
    num_attention_heads: config.numHeads,
    num_key_value_heads: config.numKvHeads,
    head_dim: config.headDim,
    hidden_act: "silu",
    rms_norm_eps: config.rmsNormEps,
    rope_theta: config.ropeTheta,
    rope_scaling: ropeScalingJson(config.ropeScaling),
    max_position_embeddings: config.maxPositionEmbeddings,
    tie_word_embeddings: config.tieWordEmbeddings,
    torch_dtype: "float32",
  };
  if (config.modelType !== "qwen2") json.attention_bias = config.attentionBias;
  if (config.modelType === "gemma3_text") {
    delete json.hidden_act;
    delete json.rope_theta;
    delete json.rope_scaling;
    json.hidden_activation = "gelu_pytorch_tanh";
    json.query_pre_attn_scalar = config.queryPreAttnScalar;
    json.sliding_window = config.slidingWindow;
    json.layer_types = (config.slidingLayers ?? []).map((s) => (s ? "sliding_attention" : "full_attention"));
    json.rope_parameters = {
      full_attention: { rope_type: "default", rope_theta: config.ropeTheta },
      sliding_attention: { rope_type: "default", rope_theta: config.ropeThetaLocal ?? config.ropeTheta },
    };
  }
  if (config.modelType === "phi3") {
    delete json.attention_bias;
    json.sliding_window = config.slidingWindow ?? null;
  }
  if (config.modelType === "smollm3") {
    json.no_rope_layers = Array.from({ length: config.numLayers }, (_, l) => (config.ropeLayers?.[l] === false ? 0 : 1));
    if (config.slidingLayers !== undefined) {
      json.use_sliding_window = true;
      json.sliding_window = config.slidingWindow;
      json.layer_types = config.slidingLayers.map((s) => (s ? "sliding_attention" : "full_attention"));
    }
  }
  const lin = config.linearAttention;
  if (lin !== undefined) {
    delete json.rope_theta;
    delete json.rope_scaling;
    json.rope_parameters = { rope_type: "default", rope_theta: config.ropeTheta, partial_rotary_factor: (config.rotaryDim ?? config.headDim) / config.headDim };
    json.layer_types = lin.layers.map((linear) => (linear ? "linear_attention" : "full_attention"));
    json.linear_conv_kernel_dim = lin.convKernel;
    json.linear_num_key_heads = lin.numKeyHeads;
    json.linear_num_value_heads = lin.numValueHeads;
    json.linear_key_head_dim = lin.keyHeadDim;
    json.linear_value_head_dim = lin.valueHeadDim;
  }
  const moe = config.moe;
  if (moe?.gptOss !== undefined) {
    json.num_local_experts = moe.numExperts;
    json.num_experts_per_tok = moe.topK;
    json.intermediate_size = moe.expertIntermediateSize;
    json.router_aux_loss_coef = moe.routerAuxLossCoef;
    json.swiglu_limit = moe.gptOss.swigluLimit;
    json.sliding_window = config.slidingWindow;
    json.layer_types = (config.slidingLayers ?? []).map((s) => (s ? "sliding_attention" : "full_attention"));
  } else if (moe !== undefined) {
    json.num_experts = moe.numExperts;
    json.num_experts_per_tok = moe.topK;
    json.norm_topk_prob = moe.normTopkProb;
    json.moe_intermediate_size = moe.expertIntermediateSize;
    json.decoder_sparse_step = 1;
    json.mlp_only_layers = moe.sparseLayers.flatMap((sparse, l) => (sparse ? [] : [l]));
    json.router_aux_loss_coef = moe.routerAuxLossCoef;
  }
  if (config.bosTokenId !== undefined) json.bos_token_id = config.bosTokenId;
  if (config.eosTokenId !== undefined) json.eos_token_id = config.eosTokenId;
  return json;
}
