// The decoder configuration the engine needs, read from a Hugging Face config.json
// (docs/numerics.md#model-config, docs/numerics.md#qwen2-and-qwen3-differences, docs/numerics.md#model-families).
// The decoder families are llama / qwen2 / qwen3 / olmo2 / gemma3_text / smollm3 / phi3 / qwen3_moe /
// qwen3_5_text (also read from a qwen3_5 checkpoint's text_config) / gpt_oss; anything the maths here does not implement
// (other rope scalings, MLP biases, sliding windows) is rejected by name rather than silently ignored.

export interface Llama3RopeScaling {
  type: "llama3";
  factor: number;
  lowFreqFactor: number;
  highFreqFactor: number;
  originalMaxPositionEmbeddings: number;
}

/** YaRN (GPT-OSS): frequencies blended between interpolated and extrapolated by a ramp over the dimensions. */
export interface YarnRopeScaling {
  type: "yarn";
  factor: number;
  betaFast: number;
  betaSlow: number;
  originalMaxPositionEmbeddings: number;
  /** Whether the correction range is rounded to whole dimensions (transformers' default true; GPT-OSS false). */
  truncate: boolean;
  /** cos and sin are multiplied by this (so attention scores by its square). */
  attentionFactor: number;
}

export const MODEL_TYPES = ["llama", "qwen2", "qwen3", "olmo2", "gemma3_text", "smollm3", "phi3", "qwen3_moe", "qwen3_5_text", "gpt_oss"] as const;
export type ModelType = (typeof MODEL_TYPES)[number];
/** The config.json model_types the engine reads: its families, and qwen3_5 (the multimodal checkpoint whose text_config is qwen3_5_text). */
export const CHECKPOINT_MODEL_TYPES: readonly string[] = [...MODEL_TYPES, "qwen3_5"];

export interface ModelConfig {
  modelType: ModelType;
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  rmsNormEps: number;
  ropeTheta: number;
  ropeScaling: null | Llama3RopeScaling | YarnRopeScaling;
  maxPositionEmbeddings: number;
  tieWordEmbeddings: boolean;
  /** Biases on q,k,v (and o except for qwen2, whose o_proj never has one). Always true for qwen2. */
  attentionBias: boolean;
  /** Qwen3: RMSNorm over each head of q and k before RoPE. */
  qkNorm: boolean;
  /**
   * What the q/k norm spans: each head ("head", qwen3, weights [head_dim]) or the whole projection
   * ("projection", olmo2, weights [heads·head_dim]). Absent means "head".
   */
  qkNormScope?: "head" | "projection";
  /**
   * Where a layer's RMSNorms sit. "pre" (absent; llama, qwen): the attention and the MLP read a
   * normed residual (input_layernorm, post_attention_layernorm). "post" (olmo2): each block reads the
   * residual as it is and its output is normed before it is added (post_attention_layernorm,
   * post_feedforward_layernorm). "sandwich" (gemma3): both, with pre_feedforward_layernorm as the
   * MLP's input norm.
   */
  normPlacement?: "pre" | "post" | "sandwich";
  /** Gemma: every RMSNorm scales by (1 + weight) rather than by weight (its weights start at 0). */
  normOffset?: boolean;
  /** Gemma: token embeddings are multiplied by this (fp32 sqrt(hidden_size)); the tied head is not. */
  embedScale?: number;
  /** The MLP gate's activation: "silu" (absent) or "gelu_tanh" (gelu_pytorch_tanh, Gemma). */
  hiddenAct?: "silu" | "gelu_tanh";
  /** Gemma: attention scores scale by query_pre_attn_scalar^-0.5 instead of head_dim^-0.5. */
  queryPreAttnScalar?: number;
  /** Per layer: true where the layer attends over a sliding window of slidingWindow keys (Gemma's layer_types). */
  slidingLayers?: boolean[];
  slidingWindow?: number;
  /** RoPE base of the sliding-window layers (Gemma's local rope_theta); absent means ropeTheta. */
  ropeThetaLocal?: number;
  /**
   * Phi-3: q, k, v are stored as one qkv_proj ([H·d + 2·Hkv·d, D], rows in that order) and gate, up
   * as one gate_up_proj ([2F, D], gate first). The engine keeps them fused (LoRA adapts the fused
   * matrix, as PEFT does) and computes each part through row views of it.
   */
  fusedProjections?: boolean;
  /** Per layer: false where the layer applies no rotary embedding (SmolLM3's NoPE layers); absent means all rope. */
  ropeLayers?: boolean[];
  /** Mixture of experts (Qwen3-MoE, GPT-OSS): the sparse MLP blocks and their routing. */
  moe?: MoeConfig;
  /** Qwen3.5: the Gated DeltaNet (linear attention) layers and their shapes. */
  linearAttention?: LinearAttentionConfig;
  /**
   * Qwen3.5: q_proj is twice as wide; each head's rows are its query then its gate, and the
   * attention output is multiplied by sigmoid(gate) before o_proj.
   */
  attnOutputGate?: boolean;
  /** Leading dims of each head that RoPE rotates (partial_rotary_factor · head_dim); absent means all. */
  rotaryDim?: number;
  /** GPT-OSS: a learned logit per query head (self_attn.sinks) joins each softmax's denominator. */
  attentionSinks?: boolean;
  bosTokenId?: number;
  eosTokenId?: number | number[];
}

/**
 * A sparse MLP block (docs/numerics.md#mixture-of-experts): a router (mlp.gate, [E, D]) picks the
 * top-k of E SwiGLU experts (mlp.experts.<e>.{gate,up,down}_proj, width expertIntermediateSize)
 * per token by softmax probability, and the block outputs their sum weighted by those
 * probabilities (renormalised to sum 1 over the k when normTopkProb).
 */
export interface MoeConfig {
  numExperts: number;
  topK: number;
  normTopkProb: boolean;
  expertIntermediateSize: number;
  /** Per layer: true where the MLP is the sparse block, false where it is the dense MLP (intermediateSize). */
  sparseLayers: boolean[];
  /** The load-balancing loss's coefficient in transformers (router_aux_loss_coef); only reported, never trained on. */
  routerAuxLossCoef: number;
  /**
   * GPT-OSS's layout and expert: a router with a bias (mlp.router.{weight,bias}); each layer's
   * experts stored fused as mlp.experts.gate_up_proj [E, D, 2·Fe] (x·W orientation, gate and up
   * in alternating columns) and down_proj [E, Fe, D], each with a bias; the clamped SwiGLU
   * (up + 1)·g·σ(1.702·g) with g clamped above and up on both sides at swigluLimit.
   */
  gptOss?: { swigluLimit: number };
}

/**
 * Qwen3.5's Gated DeltaNet (docs/numerics.md#gated-deltanet): in_proj_qkv [2·Hk·dk + Hv·dv, D],
 * in_proj_z [Hv·dv, D], in_proj_b and in_proj_a [Hv, D], a depthwise causal conv1d of convKernel
 * taps over the qkv channels, the gated delta rule per value head (value head h reads key head
 * h / (Hv / Hk)), a gated RMSNorm per value head and out_proj [D, Hv·dv].
 */
export interface LinearAttentionConfig {
  /** Per layer: true where the layer is linear attention, false where it is gated full attention. */
  layers: boolean[];
  convKernel: number;
  numKeyHeads: number;
  numValueHeads: number;
  keyHeadDim: number;
  valueHeadDim: number;
}

/** Whether layer `l` mixes tokens by linear attention (Qwen3.5's Gated DeltaNet) rather than attention. */
export function layerIsLinear(config: ModelConfig, l: number): boolean {
  return config.linearAttention?.layers[l] === true;
}

export const LINEAR_PROJECTIONS = ["in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a", "out_proj"] as const;
export type LinearProjection = (typeof LINEAR_PROJECTIONS)[number];

/** [out, in] of a linear-attention projection. */
export function linearProjectionShape(config: ModelConfig, proj: LinearProjection): [number, number] {
  const la = config.linearAttention;
  if (la === undefined) throw new Error("linearProjectionShape: the config has no linear attention");
  const D = config.hiddenSize;
  const Vd = la.numValueHeads * la.valueHeadDim;
  switch (proj) {
    case "in_proj_qkv":
      return [2 * la.numKeyHeads * la.keyHeadDim + Vd, D];
    case "in_proj_z":
      return [Vd, D];
    case "in_proj_b":
    case "in_proj_a":
      return [la.numValueHeads, D];
    case "out_proj":
      return [D, Vd];
  }
}

/** The HF module prefix of layer `l`'s linear attention (`<prefix>.in_proj_qkv.weight`, ...). */
export function linearPrefix(layer: number): string {
  return `model.layers.${layer}.linear_attn`;
}
/** GPT-OSS's clamp of the experts' gate (above) and up (both sides). */
export const GPT_OSS_SWIGLU_LIMIT = 7;

/** GPT-OSS's SwiGLU slope: g·σ(alpha·g). */
export const GPT_OSS_GLU_ALPHA = 1.702;

/** Whether layer `l`'s MLP is a mixture of experts. */
export function layerIsMoe(config: ModelConfig, l: number): boolean {
  return config.moe?.sparseLayers[l] === true;
}

export const EXPERT_PROJECTIONS = ["gate_proj", "up_proj", "down_proj"] as const;
export type ExpertProjection = (typeof EXPERT_PROJECTIONS)[number];

/** The HF module name of expert `e`'s projection in layer `l` (its weight is `<prefix>.weight`). */
export function expertPrefix(layer: number, expert: number, proj: ExpertProjection): string {
  return `model.layers.${layer}.mlp.experts.${expert}.${proj}`;
}

/** The router's weight, [numExperts, hidden] (its bias, GPT-OSS: same name with .bias). */
export function routerName(config: ModelConfig, layer: number): string {
  return config.moe?.gptOss !== undefined ? `model.layers.${layer}.mlp.router.weight` : `model.layers.${layer}.mlp.gate.weight`;
}

/** GPT-OSS's router bias, [numExperts]. */
export function routerBiasName(layer: number): string {
  return `model.layers.${layer}.mlp.router.bias`;
}

/** GPT-OSS's fused expert tensors of layer `l`: gate_up_proj, gate_up_proj_bias, down_proj, down_proj_bias. */
export function fusedExpertName(layer: number, which: "gate_up_proj" | "gate_up_proj_bias" | "down_proj" | "down_proj_bias"): string {
  return `model.layers.${layer}.mlp.experts.${which}`;
}

/** GPT-OSS's attention sinks of layer `l`, [H]. */
export function sinksName(layer: number): string {
  return `model.layers.${layer}.self_attn.sinks`;
}

/** The attention scores' scale: query_pre_attn_scalar^-0.5 (Gemma) or head_dim^-0.5, times YaRN's attention factor squared. */
export function attentionScale(config: ModelConfig): number {
  const s = config.ropeScaling;
  // YaRN scales cos and sin, so both q and k: the scores take the square.
  const yarn = s !== null && s.type === "yarn" ? s.attentionFactor * s.attentionFactor : 1;
  return yarn / Math.sqrt(config.queryPreAttnScalar ?? config.headDim);
}

/** Whether layer `l` rotates q and k (false for SmolLM3's NoPE layers). */
export function layerUsesRope(config: ModelConfig, l: number): boolean {
  return config.ropeLayers?.[l] !== false;
}

/** The window of layer `l`: its number of keys, or 0 for full causal attention. */
export function layerWindow(config: ModelConfig, l: number): number {
  return config.slidingLayers?.[l] === true ? (config.slidingWindow ?? 0) : 0;
}

export type ProjectionName = "q_proj" | "k_proj" | "v_proj" | "o_proj" | "gate_proj" | "up_proj" | "down_proj" | "qkv_proj" | "gate_up_proj";
export const ATTENTION_PROJECTIONS = ["q_proj", "k_proj", "v_proj", "o_proj"] as const;
export const MLP_PROJECTIONS = ["gate_proj", "up_proj", "down_proj"] as const;
const FUSED_PROJECTIONS = ["qkv_proj", "o_proj", "gate_up_proj", "down_proj"] as const;

/** The projection matrices a layer stores (Phi-3's fused ones, or the seven separate ones). */
export function storedProjections(config: ModelConfig): readonly ProjectionName[] {
  return config.fusedProjections === true ? FUSED_PROJECTIONS : [...ATTENTION_PROJECTIONS, ...MLP_PROJECTIONS];
}

/** Whether a projection belongs to the attention (LoRA's train_attn) rather than the MLP. */
export function isAttentionProjection(proj: ProjectionName): boolean {
  return proj === "q_proj" || proj === "k_proj" || proj === "v_proj" || proj === "o_proj" || proj === "qkv_proj";
}

/** Whether a projection carries a bias vector under this config. */
export function projectionHasBias(config: ModelConfig, proj: ProjectionName): boolean {
  if (!config.attentionBias) return false;
  if (proj === "q_proj" || proj === "k_proj" || proj === "v_proj") return true;
  return proj === "o_proj" && config.modelType !== "qwen2";
}

/** [out, in] of a projection in HF orientation. */
export function projectionShape(config: ModelConfig, proj: ProjectionName): [number, number] {
  const { hiddenSize: D, intermediateSize: F, numHeads: H, numKvHeads: Hkv, headDim: d } = config;
  switch (proj) {
    case "q_proj":
      return [(config.attnOutputGate === true ? 2 : 1) * H * d, D];
    case "k_proj":
    case "v_proj":
      return [Hkv * d, D];
    case "o_proj":
      return [D, H * d];
    case "gate_proj":
    case "up_proj":
      return [F, D];
    case "down_proj":
      return [D, F];
    case "qkv_proj":
      return [(H + 2 * Hkv) * d, D];
    case "gate_up_proj":
      return [2 * F, D];
  }
}

/** The HF names of a layer's RMSNorm weights by role; null where the family has none. */
export interface LayerNormNames {
  /** Normalises the attention's input. */
  attnIn: string | null;
  /** Normalises the attention's output before the residual add. */
  attnOut: string | null;
  /** Normalises the MLP's input. */
  mlpIn: string | null;
  /** Normalises the MLP's output before the residual add. */
  mlpOut: string | null;
}

export function layerNormNames(config: ModelConfig, layer: number): LayerNormNames {
  const at = (n: string): string => `model.layers.${layer}.${n}.weight`;
  if (config.normPlacement === "post") {
    return { attnIn: null, attnOut: at("post_attention_layernorm"), mlpIn: null, mlpOut: at("post_feedforward_layernorm") };
  }
  if (config.normPlacement === "sandwich") {
    return {
      attnIn: at("input_layernorm"),
      attnOut: at("post_attention_layernorm"),
      mlpIn: at("pre_feedforward_layernorm"),
      mlpOut: at("post_feedforward_layernorm"),
    };
  }
  return { attnIn: at("input_layernorm"), attnOut: null, mlpIn: at("post_attention_layernorm"), mlpOut: null };
}

/** Widths of the q and k norm weights ([head_dim] each, or the whole projections). */
export function qkNormWidths(config: ModelConfig): [number, number] {
  const d = config.headDim;
  return config.qkNormScope === "projection" ? [config.numHeads * d, config.numKvHeads * d] : [d, d];
}

export function projectionPrefix(layer: number, proj: ProjectionName): string {
  const group = isAttentionProjection(proj) ? "self_attn" : "mlp";
  return `model.layers.${layer}.${group}.${proj}`;
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

class FieldReader {
  constructor(
    private readonly json: Json,
    readonly source: string,
  ) {}

  fail(field: string, expected: string, value: unknown): never {
    throw new Error(`${this.source}: field "${field}" must be ${expected}, got ${JSON.stringify(value)}`);
  }

  int(field: string, fallback?: number, min = 1): number {
    const v = this.json[field];
    if (v === undefined || v === null) {
      if (fallback !== undefined) return fallback;
      throw new Error(`${this.source}: required field "${field}" is missing`);
    }
    if (typeof v !== "number" || !Number.isInteger(v) || v < min) this.fail(field, `an integer >= ${min}`, v);
    return v;
  }

  positive(field: string, fallback: number, obj: Json = this.json, label = field): number {
    const v = obj[field];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) this.fail(label, "a positive number", v);
    return v;
  }

  bool(field: string, fallback: boolean): boolean {
    const v = this.json[field];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== "boolean") this.fail(field, "true or false", v);
    return v;
  }
}

const DEFAULT_MAX_POSITIONS: Record<ModelType, number> = {
  llama: 2048,
  qwen2: 32768,
  qwen3: 32768,
  olmo2: 2048,
  gemma3_text: 131072,
  smollm3: 32768,
  phi3: 4096,
  qwen3_moe: 32768,
  qwen3_5_text: 32768,
  gpt_oss: 131072,
};
/** transformers' rms_norm_eps default per family. */
const DEFAULT_RMS_EPS: Record<ModelType, number> = {
  llama: 1e-6,
  qwen2: 1e-6,
  qwen3: 1e-6,
  olmo2: 1e-5,
  gemma3_text: 1e-6,
  smollm3: 1e-6,
  phi3: 1e-5,
  qwen3_moe: 1e-6,
  qwen3_5_text: 1e-6,
  gpt_oss: 1e-5,
};

/** Parses an HF config.json object. `source` (usually the file path) prefixes every error. */
export function parseModelConfig(json: unknown, source: string): ModelConfig {
  if (!isObject(json)) throw new Error(`${source}: expected a JSON object, got ${Array.isArray(json) ? "an array" : typeof json}`);
  // A Qwen3.5 checkpoint (Qwen3_5ForConditionalGeneration) nests its decoder in text_config; the
  // engine runs that decoder and ignores the vision tower.
  if (json.model_type === "qwen3_5") {
    const text = json.text_config;
    if (!isObject(text)) throw new Error(`${source}: field "text_config" of a qwen3_5 config must be an object, got ${JSON.stringify(text)}`);
    const tie = text.tie_word_embeddings ?? json.tie_word_embeddings;
    return parseModelConfig({ ...text, model_type: "qwen3_5_text", tie_word_embeddings: tie }, `${source} (text_config)`);
  }
  const r: FieldReader = new FieldReader(json, source);
  const rawType = json.model_type;
  if (!(MODEL_TYPES as readonly unknown[]).includes(rawType)) {
    r.fail("model_type", `one of ${MODEL_TYPES.map((t) => `"${t}"`).join(", ")} (the decoder families this engine implements)`, rawType);
  }
  const modelType = rawType as ModelType;
  const gemma = modelType === "gemma3_text";
  if (gemma) {
    // Gemma reads hidden_activation; hidden_act is an older spelling of the same field.
    const field = json.hidden_activation !== undefined && json.hidden_activation !== null ? "hidden_activation" : "hidden_act";
    const act = json[field] ?? "gelu_pytorch_tanh";
    if (act !== "gelu_pytorch_tanh") r.fail(field, `"gelu_pytorch_tanh"`, act);
    for (const f of ["final_logit_softcapping", "attn_logit_softcapping"]) {
      if (json[f] !== undefined && json[f] !== null) r.fail(f, "null (logit soft-capping is not implemented)", json[f]);
    }
    if (json.use_bidirectional_attention === true) r.fail("use_bidirectional_attention", "false (only causal attention is implemented)", true);
  } else {
    const act = json.hidden_act;
    if (act !== undefined && act !== "silu") r.fail("hidden_act", `"silu"`, act);
  }
  if (json.mlp_bias === true) r.fail("mlp_bias", "false (MLP biases are not implemented)", json.mlp_bias);
  const smollm3 = modelType === "smollm3";
  if (json.use_sliding_window === true && !smollm3) r.fail("use_sliding_window", "false (sliding-window attention is not implemented for this family)", true);

  const hiddenSize = r.int("hidden_size");
  const numHeads = r.int("num_attention_heads");
  const numKvHeads = r.int("num_key_value_heads", numHeads);
  if (numHeads % numKvHeads !== 0) {
    throw new Error(`${source}: num_attention_heads (${numHeads}) must be a multiple of num_key_value_heads (${numKvHeads})`);
  }
  const gptOss = modelType === "gpt_oss";
  let headDimDefault: number | undefined;
  if (modelType === "qwen3") headDimDefault = 128;
  else if (modelType === "qwen3_5_text") headDimDefault = 256;
  else if (gptOss) headDimDefault = 64;
  else if (gemma) headDimDefault = 256;
  else if (hiddenSize % numHeads === 0) headDimDefault = hiddenSize / numHeads;
  const headDim = r.int("head_dim", headDimDefault);
  if (headDim % 2 !== 0) r.fail("head_dim", "an even number (RoPE rotates pairs)", headDim);

  // Newer transformers keep theta and scaling in rope_parameters; hub files mostly use the top level.
  const ropeParams = isObject(json.rope_parameters) ? json.rope_parameters : undefined;
  const defaultTheta = smollm3 ? 2_000_000 : gptOss ? 150_000 : 10000;
  const ropeTheta =
    ropeParams && ropeParams.rope_theta !== undefined
      ? r.positive("rope_theta", defaultTheta, ropeParams, "rope_parameters.rope_theta")
      : r.positive("rope_theta", defaultTheta);
  // Gemma keeps one rope entry per layer type (parseGemma reads them).
  const scalingJson = gemma ? null : (json.rope_scaling ?? (ropeParams && ropeParams.rope_type !== undefined ? ropeParams : null));
  const maxPositionEmbeddings = r.int("max_position_embeddings", DEFAULT_MAX_POSITIONS[modelType]);
  const ropeScaling = parseRopeScaling(
    scalingJson,
    r,
    json.rope_scaling !== undefined && json.rope_scaling !== null ? "rope_scaling" : "rope_parameters",
    maxPositionEmbeddings,
  );

  let attentionBias: boolean;
  if (modelType === "qwen2") attentionBias = true;
  else attentionBias = r.bool("attention_bias", gptOss);

  const config: ModelConfig = {
    modelType,
    vocabSize: r.int("vocab_size"),
    hiddenSize,
    intermediateSize: r.int("intermediate_size"),
    numLayers: r.int("num_hidden_layers"),
    numHeads,
    numKvHeads,
    headDim,
    rmsNormEps: r.positive("rms_norm_eps", DEFAULT_RMS_EPS[modelType]),
    ropeTheta,
    ropeScaling,
    maxPositionEmbeddings,
    tieWordEmbeddings: r.bool("tie_word_embeddings", gemma || smollm3),
    attentionBias,
    qkNorm: modelType === "qwen3" || modelType === "qwen3_moe" || modelType === "olmo2" || gemma || modelType === "qwen3_5_text",
  };
  if (gemma) parseGemma(json, r, config);
  if (smollm3) parseSmolLM3(json, r, config);
  if (modelType === "phi3") parsePhi3(json, r, config);
  if (modelType === "qwen3_moe") parseQwen3Moe(json, r, config);
  if (modelType === "qwen3_5_text") parseQwen35(json, r, config);
  if (gptOss) parseGptOss(json, r, config);
  if (modelType === "olmo2") {
    config.qkNormScope = "projection";
    config.normPlacement = "post";
  }
  const bos = json.bos_token_id;
  if (typeof bos === "number" && Number.isInteger(bos)) config.bosTokenId = bos;
  const eos = json.eos_token_id;
  if (typeof eos === "number" && Number.isInteger(eos)) config.eosTokenId = eos;
  else if (Array.isArray(eos) && eos.every((e) => typeof e === "number" && Number.isInteger(e))) config.eosTokenId = eos as number[];
  return config;
}

/** Gemma 3's layer pattern, norms, scales and per-layer-type RoPE bases. */
function parseGemma(json: Json, r: FieldReader, config: ModelConfig): void {
  config.normPlacement = "sandwich";
  config.normOffset = true;
  config.hiddenAct = "gelu_tanh";
  config.embedScale = Math.fround(Math.sqrt(config.hiddenSize));
  config.queryPreAttnScalar = r.positive("query_pre_attn_scalar", 256);
  const L = config.numLayers;
  let types: unknown = json.layer_types;
  if (types === undefined || types === null) {
    // transformers' default: every sliding_window_pattern-th layer (1-based) is global.
    const pattern = r.int("sliding_window_pattern", 6);
    types = Array.from({ length: L }, (_, i) => ((i + 1) % pattern === 0 ? "full_attention" : "sliding_attention"));
  }
  if (!Array.isArray(types) || types.length !== L || types.some((t) => t !== "full_attention" && t !== "sliding_attention")) {
    r.fail("layer_types", `a list of ${L} "full_attention" / "sliding_attention" entries (one per layer)`, types);
  }
  config.slidingLayers = types.map((t) => t === "sliding_attention");
  config.slidingWindow = r.int("sliding_window", 4096);
  // rope_parameters holds one entry per layer type; older configs say rope_theta / rope_local_base_freq.
  const params = isObject(json.rope_parameters) ? json.rope_parameters : {};
  const theta = (type: string, legacy: string, fallback: number): number => {
    const entry = params[type];
    if (entry === undefined || entry === null) return r.positive(legacy, fallback);
    if (!isObject(entry)) r.fail(`rope_parameters.${type}`, "an object", entry);
    const ropeType = entry.rope_type ?? entry.type ?? "default";
    if (ropeType !== "default") r.fail(`rope_parameters.${type}.rope_type`, `"default" (other Gemma rope scalings are not implemented)`, ropeType);
    return r.positive("rope_theta", fallback, entry, `rope_parameters.${type}.rope_theta`);
  };
  config.ropeTheta = theta("full_attention", "rope_theta", 1_000_000);
  config.ropeThetaLocal = theta("sliding_attention", "rope_local_base_freq", 10_000);
  if (json.rope_scaling !== undefined && json.rope_scaling !== null) r.fail("rope_scaling", "null (Gemma rope scaling is not implemented)", json.rope_scaling);
  config.ropeScaling = null;
}

/** Phi-3: fused projections; a sliding_window (Phi-3-mini-4k) applies to every layer. */
function parsePhi3(json: Json, r: FieldReader, config: ModelConfig): void {
  config.fusedProjections = true;
  const ropeParams = isObject(json.rope_parameters) ? json.rope_parameters : {};
  const partial = ropeParams.partial_rotary_factor ?? json.partial_rotary_factor ?? 1;
  if (partial !== 1) r.fail("partial_rotary_factor", "1 (partial rotary embeddings are not implemented)", partial);
  if (json.sliding_window !== undefined && json.sliding_window !== null) {
    config.slidingWindow = r.int("sliding_window");
    config.slidingLayers = Array.from({ length: config.numLayers }, () => true);
  }
}

/** Qwen3.5: linear-attention layers by layer_types, the gated full attention, (1 + w) norms, partial RoPE. */
function parseQwen35(json: Json, r: FieldReader, config: ModelConfig): void {
  const L = config.numLayers;
  let types: unknown = json.layer_types;
  if (types === undefined || types === null) {
    // transformers' default: every full_attention_interval-th layer (1-based) is full attention.
    const interval = r.int("full_attention_interval", 4);
    types = Array.from({ length: L }, (_, i) => ((i + 1) % interval === 0 ? "full_attention" : "linear_attention"));
  }
  if (!Array.isArray(types) || types.length !== L || types.some((t) => t !== "full_attention" && t !== "linear_attention")) {
    r.fail("layer_types", `a list of ${L} "linear_attention" / "full_attention" entries (one per layer)`, types);
  }
  config.linearAttention = {
    layers: types.map((t) => t === "linear_attention"),
    convKernel: r.int("linear_conv_kernel_dim", 4),
    numKeyHeads: r.int("linear_num_key_heads", 16),
    numValueHeads: r.int("linear_num_value_heads", 32),
    keyHeadDim: r.int("linear_key_head_dim", 128),
    valueHeadDim: r.int("linear_value_head_dim", 128),
  };
  const la = config.linearAttention;
  if (la.numValueHeads % la.numKeyHeads !== 0) {
    r.fail("linear_num_value_heads", `a multiple of linear_num_key_heads (${la.numKeyHeads})`, la.numValueHeads);
  }
  config.attnOutputGate = true;
  config.normOffset = true;
  const ropeParams = isObject(json.rope_parameters) ? json.rope_parameters : {};
  const factor = ropeParams.partial_rotary_factor ?? json.partial_rotary_factor ?? 0.25;
  if (typeof factor !== "number" || !(factor > 0 && factor <= 1)) r.fail("partial_rotary_factor", "a number in (0, 1]", factor);
  // transformers: int(head_dim · factor) dims rotate, in pairs.
  const rotary = Math.floor(config.headDim * factor);
  if (rotary < 2 || rotary % 2 !== 0)
    r.fail("partial_rotary_factor", `a factor giving an even rotary width of at least 2 (head_dim ${config.headDim})`, factor);
  if (rotary !== config.headDim) config.rotaryDim = rotary;
  // Multimodal RoPE sections only matter for image and video positions: text positions are equal
  // on every axis, which makes the rotation plain RoPE.
}

/** Qwen3-MoE's experts, router and which layers are sparse (mlp_only_layers, decoder_sparse_step). */
function parseQwen3Moe(json: Json, r: FieldReader, config: ModelConfig): void {
  const L = config.numLayers;
  // transformers writes num_local_experts (num_experts is its alias); hub files say num_experts.
  const expertsField = json.num_experts !== undefined && json.num_experts !== null ? "num_experts" : "num_local_experts";
  const numExperts = r.int(expertsField, 128, 0);
  const topK = r.int("num_experts_per_tok", 8);
  const only: unknown = json.mlp_only_layers ?? [];
  if (!Array.isArray(only) || only.some((x) => typeof x !== "number" || !Number.isInteger(x) || x < 0 || x >= L)) {
    r.fail("mlp_only_layers", `a list of layer indices in [0, ${L})`, only);
  }
  const step = r.int("decoder_sparse_step", 1);
  const sparseLayers = Array.from({ length: L }, (_, l) => !only.includes(l) && numExperts > 0 && (l + 1) % step === 0);
  if (numExperts > 0 && topK > numExperts) r.fail("num_experts_per_tok", `at most num_experts (${numExperts})`, topK);
  const coef = json.router_aux_loss_coef ?? 0.001;
  if (typeof coef !== "number" || !Number.isFinite(coef) || coef < 0) r.fail("router_aux_loss_coef", "a number >= 0", coef);
  config.moe = {
    numExperts,
    topK,
    normTopkProb: r.bool("norm_topk_prob", false),
    expertIntermediateSize: r.int("moe_intermediate_size", 768),
    sparseLayers,
    routerAuxLossCoef: coef,
  };
}

/** GPT-OSS: sinks, alternating sliding/full layers, and every layer's MLP a biased, fused, clamped mixture of experts. */
function parseGptOss(json: Json, r: FieldReader, config: ModelConfig): void {
  const L = config.numLayers;
  config.attentionSinks = true;
  let types: unknown = json.layer_types;
  // transformers' default: even layers (0-based) slide, odd ones are global.
  if (types === undefined || types === null) types = Array.from({ length: L }, (_, i) => ((i + 1) % 2 === 1 ? "sliding_attention" : "full_attention"));
  if (!Array.isArray(types) || types.length !== L || types.some((t) => t !== "full_attention" && t !== "sliding_attention")) {
    r.fail("layer_types", `a list of ${L} "full_attention" / "sliding_attention" entries (one per layer)`, types);
  }
  config.slidingLayers = types.map((t) => t === "sliding_attention");
  config.slidingWindow = r.int("sliding_window", 128);
  const numExperts = r.int("num_local_experts", 128);
  const topK = r.int("num_experts_per_tok", 4);
  if (topK > numExperts) r.fail("num_experts_per_tok", `at most num_local_experts (${numExperts})`, topK);
  const coef = json.router_aux_loss_coef ?? 0.001;
  if (typeof coef !== "number" || !Number.isFinite(coef) || coef < 0) r.fail("router_aux_loss_coef", "a number >= 0", coef);
  config.moe = {
    numExperts,
    topK,
    // A softmax over the top-k logits is the full softmax renormalised over the k.
    normTopkProb: true,
    expertIntermediateSize: config.intermediateSize,
    sparseLayers: Array.from({ length: L }, () => true),
    routerAuxLossCoef: coef,
    gptOss: { swigluLimit: GPT_OSS_SWIGLU_LIMIT },
  };
  const quant = json.quantization_config;
  if (quant !== undefined && quant !== null) {
    const method = isObject(quant) ? quant.quant_method : quant;
    if (method !== "mxfp4") r.fail("quantization_config.quant_method", `"mxfp4" (the released GPT-OSS experts; no other quantization is implemented)`, method);
  }
  // transformers' GptOssExperts clamps at 7.0 whatever the config says.
  const limit = json.swiglu_limit;
  if (limit !== undefined && limit !== null && limit !== GPT_OSS_SWIGLU_LIMIT) {
    r.fail("swiglu_limit", `${GPT_OSS_SWIGLU_LIMIT} (transformers' GptOssExperts fixes the clamp there)`, limit);
  }
}

/** SmolLM3's NoPE layers (no_rope_layers: 1 = rope, 0 = none) and its optional sliding window. */
function parseSmolLM3(json: Json, r: FieldReader, config: ModelConfig): void {
  const L = config.numLayers;
  let flags: unknown = json.no_rope_layers;
  if (flags === undefined || flags === null) {
    // transformers' default: every no_rope_layer_interval-th layer (1-based) has no rope.
    const interval = r.int("no_rope_layer_interval", 4);
    flags = Array.from({ length: L }, (_, i) => ((i + 1) % interval !== 0 ? 1 : 0));
  }
  if (!Array.isArray(flags) || flags.length !== L || flags.some((f) => f !== 0 && f !== 1)) {
    r.fail("no_rope_layers", `a list of ${L} entries, 1 (rope) or 0 (no rope), one per layer`, flags);
  }
  config.ropeLayers = flags.map((f) => f === 1);
  if (json.use_sliding_window !== true) return;
  config.slidingWindow = r.int("sliding_window");
  let types: unknown = json.layer_types;
  // transformers' default: the NoPE layers slide.
  if (types === undefined || types === null) types = flags.map((f) => (f === 0 ? "sliding_attention" : "full_attention"));
  if (!Array.isArray(types) || types.length !== L || types.some((t) => t !== "full_attention" && t !== "sliding_attention")) {
    r.fail("layer_types", `a list of ${L} "full_attention" / "sliding_attention" entries (one per layer)`, types);
  }
  config.slidingLayers = types.map((t) => t === "sliding_attention");
}

function parseRopeScaling(v: unknown, r: FieldReader, field: string, maxPositions: number): null | Llama3RopeScaling | YarnRopeScaling {
  if (v === undefined || v === null) return null;
  if (!isObject(v)) r.fail(field, "null or an object", v);
  const type = v.rope_type ?? v.type;
  if (type === "default" || type === undefined) return null;
  if (type !== "llama3" && type !== "yarn") r.fail(`${field}.rope_type`, `"llama3", "yarn" or "default" (other scalings are not implemented)`, type);
  const need = (key: string): number => {
    if (v[key] === undefined || v[key] === null) throw new Error(`${r.source}: field "${field}.${key}" is required for ${type} rope scaling`);
    return r.positive(key, Number.NaN, v, `${field}.${key}`);
  };
  if (type === "yarn") return parseYarn(v, r, field, need("factor"), maxPositions);
  const scaling: Llama3RopeScaling = {
    type: "llama3",
    factor: need("factor"),
    lowFreqFactor: need("low_freq_factor"),
    highFreqFactor: need("high_freq_factor"),
    originalMaxPositionEmbeddings: need("original_max_position_embeddings"),
  };
  if (scaling.highFreqFactor <= scaling.lowFreqFactor) {
    r.fail(`${field}.high_freq_factor`, `greater than low_freq_factor (${scaling.lowFreqFactor})`, scaling.highFreqFactor);
  }
  return scaling;
}

/** YaRN's parameters with transformers' defaults (_compute_yarn_parameters). */
function parseYarn(v: Json, r: FieldReader, field: string, factor: number, maxPositions: number): YarnRopeScaling {
  const num = (key: string, fallback: number): number => r.positive(key, fallback, v, `${field}.${key}`);
  const mscale = (scale: number, m: number): number => (scale <= 1 ? 1 : 0.1 * m * Math.log(scale) + 1);
  let attentionFactor = v.attention_factor === undefined || v.attention_factor === null ? Number.NaN : num("attention_factor", 1);
  if (Number.isNaN(attentionFactor)) {
    const m = v.mscale;
    const all = v.mscale_all_dim;
    // transformers tests both for truthiness, so 0 means absent.
    if (typeof m === "number" && m !== 0 && typeof all === "number" && all !== 0) attentionFactor = mscale(factor, m) / mscale(factor, all);
    else attentionFactor = mscale(factor, 1);
  }
  const truncate = v.truncate ?? true;
  if (typeof truncate !== "boolean") r.fail(`${field}.truncate`, "true or false", truncate);
  const partial = v.partial_rotary_factor ?? 1;
  if (partial !== 1) r.fail(`${field}.partial_rotary_factor`, "1 (partial rotary embeddings are not implemented)", partial);
  return {
    type: "yarn",
    factor,
    // transformers reads `beta_fast or 32`: 0 falls back too.
    betaFast: v.beta_fast === 0 ? 32 : num("beta_fast", 32),
    betaSlow: v.beta_slow === 0 ? 1 : num("beta_slow", 1),
    originalMaxPositionEmbeddings: num("original_max_position_embeddings", maxPositions),
    truncate,
    attentionFactor,
  };
}

/** Every tensor the checkpoint must hold, HF names → [out, in] or [n]. lm_head is omitted when tied. */
export function expectedTensorShapes(config: ModelConfig): Map<string, number[]> {
  const { hiddenSize: D, vocabSize: V } = config;
  const shapes = new Map<string, number[]>();
  shapes.set("model.embed_tokens.weight", [V, D]);
  for (let l = 0; l < config.numLayers; l++) {
    if (layerIsLinear(config, l)) {
      for (const [name, shape] of linearTensorShapes(config, l)) shapes.set(name, shape);
      for (const name of Object.values(layerNormNames(config, l))) if (name !== null) shapes.set(name, [D]);
      for (const proj of MLP_PROJECTIONS) shapes.set(`${projectionPrefix(l, proj)}.weight`, projectionShape(config, proj));
      continue;
    }
    for (const proj of storedProjections(config)) {
      if (layerIsMoe(config, l) && !isAttentionProjection(proj)) continue;
      const shape = projectionShape(config, proj);
      shapes.set(`${projectionPrefix(l, proj)}.weight`, shape);
      if (projectionHasBias(config, proj)) shapes.set(`${projectionPrefix(l, proj)}.bias`, [shape[0]]);
    }
    if (config.qkNorm) {
      const [qw, kw] = qkNormWidths(config);
      shapes.set(`model.layers.${l}.self_attn.q_norm.weight`, [qw]);
      shapes.set(`model.layers.${l}.self_attn.k_norm.weight`, [kw]);
    }
    for (const name of Object.values(layerNormNames(config, l))) if (name !== null) shapes.set(name, [D]);
    if (config.attentionSinks === true) shapes.set(sinksName(l), [config.numHeads]);
    const moe = config.moe;
    if (moe !== undefined && layerIsMoe(config, l)) {
      const Fe = moe.expertIntermediateSize;
      const E = moe.numExperts;
      shapes.set(routerName(config, l), [E, D]);
      if (moe.gptOss !== undefined) {
        shapes.set(routerBiasName(l), [E]);
        shapes.set(fusedExpertName(l, "gate_up_proj"), [E, D, 2 * Fe]);
        shapes.set(fusedExpertName(l, "gate_up_proj_bias"), [E, 2 * Fe]);
        shapes.set(fusedExpertName(l, "down_proj"), [E, Fe, D]);
        shapes.set(fusedExpertName(l, "down_proj_bias"), [E, D]);
        continue;
      }
      for (let e = 0; e < moe.numExperts; e++) {
        shapes.set(`${expertPrefix(l, e, "gate_proj")}.weight`, [Fe, D]);
        shapes.set(`${expertPrefix(l, e, "up_proj")}.weight`, [Fe, D]);
        shapes.set(`${expertPrefix(l, e, "down_proj")}.weight`, [D, Fe]);
      }
    }
  }
  shapes.set("model.norm.weight", [D]);
  if (!config.tieWordEmbeddings) shapes.set("lm_head.weight", [V, D]);
  return shapes;
}

/** The tensors of layer `l`'s linear attention (HF names → shapes). */
export function linearTensorShapes(config: ModelConfig, l: number): Map<string, number[]> {
  const la = config.linearAttention;
  if (la === undefined) throw new Error("linearTensorShapes: the config has no linear attention");
  const prefix = linearPrefix(l);
  const out = new Map<string, number[]>();
  for (const proj of LINEAR_PROJECTIONS) out.set(`${prefix}.${proj}.weight`, linearProjectionShape(config, proj));
  const channels = linearProjectionShape(config, "in_proj_qkv")[0];
  out.set(`${prefix}.conv1d.weight`, [channels, 1, la.convKernel]);
  out.set(`${prefix}.dt_bias`, [la.numValueHeads]);
  out.set(`${prefix}.A_log`, [la.numValueHeads]);
  out.set(`${prefix}.norm.weight`, [la.valueHeadDim]);
  return out;
}

export function shapeSize(shape: readonly number[]): number {
  let n = 1;
  for (const s of shape) n *= s;
  return n;
}
