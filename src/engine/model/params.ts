// Builds the model's tensors from HF weights and a trainable setup: which tensors are frozen,
// which carry gradients, and the LoRA adapters with their PEFT names (docs/numerics.md#lora-adapters).
import { InvalidArgumentError } from "../../tinker/errors.ts";
import { isValidLoraRank, LORA_RANK_RULE } from "../../tinker/loraRank.ts";
import {
  ATTENTION_PROJECTIONS,
  MLP_PROJECTIONS,
  expectedTensorShapes,
  expertPrefix,
  fusedExpertName,
  isAttentionProjection,
  layerIsLinear,
  linearPrefix,
  linearProjectionShape,
  linearTensorShapes,
  layerIsMoe,
  layerNormNames,
  projectionHasBias,
  projectionPrefix,
  projectionShape,
  qkNormWidths,
  routerBiasName,
  routerName,
  shapeSize,
  sinksName,
  type ModelConfig,
  type ProjectionName,
} from "./config.ts";
import type { LinearAttnParams } from "./deltanet.ts";
import { RandomStream } from "./rng.ts";
import { denseWeight, weightView, type BaseArray, type DenseArray, type HalfArray } from "../kernels/halfArray.ts";
import { expertBuffers, Mxfp4Matrix, type ExpertBuffers, type QuantizedExpert } from "../kernels/mxfp4.ts";
import type { FloatArray } from "../kernels/types.ts";
import { expertLoraModule, expertLoraShapes, type ExpertLoraGrads, type ExpertLoraProjection, type ExpertLoraValues } from "./expertLora.ts";
import { allocFloat, toDtype, type Dtype, type Linear, type LoraAdapter, type Tensor, type WeightTensor } from "./tensor.ts";

export type TrainableSetup =
  | { mode: "lora"; rank: number; seed: number; trainAttn: boolean; trainMlp: boolean; trainUnembed: boolean }
  | { mode: "full"; seed: number };

/** Tinker's fixed LoRA alpha (docs/numerics.md#lora-scale): scale = 32 / rank. */
export const LORA_ALPHA = 32;

/** A layer's weights. The norms follow config.ts's layerNormNames: null where the family has none. */
export interface LayerParams {
  /** Norm of the attention's input. */
  readonly inputNorm: Tensor | null;
  /** The attention's projections; null in a linear-attention layer (Qwen3.5's Gated DeltaNet). */
  readonly q: Linear | null;
  readonly k: Linear | null;
  readonly v: Linear | null;
  readonly o: Linear | null;
  readonly qNorm: Tensor | null;
  readonly kNorm: Tensor | null;
  /** GPT-OSS: each query head's sink logit, [H]. */
  readonly sinks: Tensor | null;
  /** Norm of the attention's output before the residual add (olmo2). */
  readonly attnOutNorm: Tensor | null;
  /** Norm of the MLP's input (HF's post_attention_layernorm in llama and qwen). */
  readonly postNorm: Tensor | null;
  /** Norm of the MLP's output before the residual add (olmo2). */
  readonly mlpOutNorm: Tensor | null;
  /** The dense MLP's projections; null in a mixture-of-experts layer. */
  readonly gate: Linear | null;
  readonly up: Linear | null;
  readonly down: Linear | null;
  /** The sparse MLP block of a mixture-of-experts layer, else null. */
  readonly moe: MoeParams | null;
  /** The Gated DeltaNet of a linear-attention layer, else null. */
  readonly linear: LinearAttnParams | null;
}

/** q, k, v, o of a full-attention layer. */
export function attentionLinears(p: LayerParams): { q: Linear; k: Linear; v: Linear; o: Linear } {
  if (p.q === null || p.k === null || p.v === null || p.o === null) throw new Error("an attention layer without q/k/v/o projections");
  return { q: p.q, k: p.k, v: p.v, o: p.o };
}

/**
 * One SwiGLU expert (or a dense MLP): gate, up [F, D] and down [D, F]. GPT-OSS's experts have no
 * separate up: `gate` is the fused gate_up ([D, 2F] transposed, gate and up in alternating
 * outputs, with its bias) and `down` is [F, D] transposed with a bias.
 */
export interface ExpertParams {
  readonly gate: Linear;
  readonly up: Linear | null;
  readonly down: Linear;
  /** MXFP4 experts (GPT-OSS as released): widenExpert fills the buffers gate and down read. */
  readonly quantized?: QuantizedExpert;
}

/** A mixture-of-experts MLP: the router [E, D] (never LoRA-adapted, as PEFT's targets leave mlp.gate alone), its bias (GPT-OSS) and the experts. */
export interface MoeParams {
  readonly router: WeightTensor;
  readonly routerBias: Tensor | null;
  readonly experts: ExpertParams[];
  /** With train_mlp: the experts' shared-outer adapter (expertLora.ts); the experts' Linears have none. */
  readonly lora: ExpertLoraParams | null;
}

/** A layer's expert factors as trainable tensors (Tinker's names and shapes, expertLora.ts). */
export interface ExpertLoraParams {
  readonly rank: number;
  readonly scale: number;
  readonly gateA: Tensor;
  readonly gateB: Tensor;
  readonly upA: Tensor;
  readonly upB: Tensor;
  readonly downA: Tensor;
  readonly downB: Tensor;
}

/** The factors' values for expertLora.ts. */
export function expertLoraValues(p: ExpertLoraParams): ExpertLoraValues {
  return { rank: p.rank, scale: p.scale, gateA: p.gateA.data, gateB: p.gateB.data, upA: p.upA.data, upB: p.upB.data, downA: p.downA.data, downB: p.downB.data };
}

/** The factors' gradient buffers (always there: the factors exist only in LoRA mode, where they train). */
export function expertLoraGrads(p: ExpertLoraParams): ExpertLoraGrads {
  const g = (t: Tensor): FloatArray => {
    if (t.grad === null) throw new Error(`${t.name} has no gradient buffer`);
    return t.grad;
  };
  return { gateA: g(p.gateA), gateB: g(p.gateB), upA: g(p.upA), upB: g(p.upB), downA: g(p.downA), downB: g(p.downB) };
}

/** Every linear layer of a decoder layer (attention, dense MLP or every expert). */
export function layerLinears(p: LayerParams): Linear[] {
  const out: Linear[] = [];
  for (const lin of [p.q, p.k, p.v, p.o, p.gate, p.up, p.down]) if (lin !== null) out.push(lin);
  const la = p.linear;
  if (la !== null) out.push(la.inProjQkv, la.inProjZ, la.inProjB, la.inProjA, la.outProj);
  for (const e of p.moe?.experts ?? []) for (const lin of [e.gate, e.up, e.down]) if (lin !== null) out.push(lin);
  return out;
}

export interface ModelParams {
  readonly embed: WeightTensor;
  readonly layers: LayerParams[];
  readonly finalNorm: Tensor;
  /** The output projection; its weight is the embed tensor itself when embeddings are tied. */
  readonly head: Linear;
  /** Tensors with gradients, in a fixed order, keyed by their checkpoint names. */
  readonly trainable: Tensor[];
  /** Frozen tensors by HF name (full mode: empty). */
  readonly frozen: Map<string, WeightTensor>;
  /** Frozen MXFP4 expert tensors by HF name, kept as loaded (no Linear reads them directly). */
  readonly quantized: Map<string, Mxfp4Matrix>;
}

export function validateSetup(setup: TrainableSetup): void {
  if (!Number.isFinite(setup.seed) || !Number.isInteger(setup.seed)) {
    throw new InvalidArgumentError(`trainable setup: seed must be an integer, got ${setup.seed}`);
  }
  if (setup.mode === "full") return;
  if (setup.mode !== "lora")
    throw new InvalidArgumentError(`trainable setup: mode must be "lora" or "full", got ${JSON.stringify((setup as { mode: unknown }).mode)}`);
  const r = setup.rank;
  if (!isValidLoraRank(r)) {
    throw new InvalidArgumentError(`LoRA rank must be ${LORA_RANK_RULE}, got ${r}`);
  }
  if (!setup.trainAttn && !setup.trainMlp && !setup.trainUnembed) {
    throw new InvalidArgumentError("LoRA setup trains nothing: at least one of train_attn, train_mlp, train_unembed must be true");
  }
}

/** Checks names and element counts of HF weights against the config; returns nothing or throws. */
export function validateWeights(config: ModelConfig, weights: Map<string, BaseArray>): void {
  const expected = expectedTensorShapes(config);
  const missing: string[] = [];
  for (const [name, shape] of expected) {
    const w = weights.get(name);
    if (w === undefined) {
      missing.push(name);
      continue;
    }
    if (w.length !== shapeSize(shape)) {
      throw new Error(`weights: tensor "${name}" has ${w.length} elements, expected shape [${shape.join(", ")}] (${shapeSize(shape)} elements)`);
    }
  }
  if (missing.length > 0) {
    throw new Error(
      `weights: ${missing.length} tensor(s) missing for a ${config.modelType} model with ${config.numLayers} layers: ${missing.slice(0, 5).join(", ")}${missing.length > 5 ? ", ..." : ""}`,
    );
  }
  const unexpected: string[] = [];
  for (const name of weights.keys()) {
    if (expected.has(name)) continue;
    // Tied checkpoints sometimes still store the head; older ones store rotary buffers.
    if (name === "lm_head.weight" && config.tieWordEmbeddings) continue;
    if (name.endsWith("rotary_emb.inv_freq")) continue;
    unexpected.push(name);
  }
  if (unexpected.length > 0) {
    throw new Error(
      `weights: ${unexpected.length} unexpected tensor(s) for a ${config.modelType} model: ${unexpected.slice(0, 5).join(", ")}${unexpected.length > 5 ? ", ..." : ""}`,
    );
  }
}

export function peftName(hfModule: string, which: "lora_A" | "lora_B"): string {
  return `base_model.model.${hfModule}.${which}.weight`;
}

interface BuildContext {
  config: ModelConfig;
  weights: Map<string, BaseArray>;
  setup: TrainableSetup;
  dtype: Dtype;
  trainable: Tensor[];
  frozen: Map<string, WeightTensor>;
  quantized: Map<string, Mxfp4Matrix>;
  /** The buffers MXFP4 experts widen into, shared by every expert of the model. */
  expertBuffers: ExpertBuffers | null;
}

function rawSource(ctx: BuildContext, name: string): BaseArray {
  const src = ctx.weights.get(name);
  if (src === undefined) throw new Error(`weights: tensor "${name}" is missing`);
  return src;
}

function source(ctx: BuildContext, name: string): DenseArray {
  return denseWeight(rawSource(ctx, name), name);
}

/**
 * A weight matrix. Frozen float32-mode weights are shared with the caller as they are (no copy of
 * a large checkpoint; 16-bit ones stay 16-bit, widened by the kernels that read them); trainable
 * ones (full mode) and float64 ones are float copies, so training never mutates the caller's arrays.
 */
function matrixTensor(ctx: BuildContext, name: string, shape: number[]): WeightTensor {
  const src = source(ctx, name);
  if (ctx.setup.mode === "full") return trainableTensor(ctx, name, shape, src);
  const t: WeightTensor = { name, shape, data: ctx.dtype === "float32" ? src : toDtype(ctx.dtype, src), grad: null };
  ctx.frozen.set(name, t);
  return t;
}

/** A vector (norm weight, bias): always a float array of the model's dtype. */
function vectorTensor(ctx: BuildContext, name: string, shape: number[]): Tensor {
  const src = source(ctx, name);
  if (ctx.setup.mode === "full") return trainableTensor(ctx, name, shape, src);
  const t: Tensor = { name, shape, data: ctx.dtype === "float32" && src instanceof Float32Array ? src : toDtype(ctx.dtype, src), grad: null };
  ctx.frozen.set(name, t);
  return t;
}

function trainableTensor(ctx: BuildContext, name: string, shape: number[], src: DenseArray): Tensor {
  const data = toDtype(ctx.dtype, src);
  const t: Tensor = { name, shape, data, grad: allocFloat(ctx.dtype, data.length) };
  ctx.trainable.push(t);
  return t;
}

/**
 * A trainable LoRA pair of `module`: A of `aShape` (its last dimension the input width) and B of
 * `bShape`. PEFT's kaiming_uniform(a=sqrt(5)) init for A, U(-1/sqrt(in), 1/sqrt(in)); B = 0 keeps step 0 exact.
 */
function loraPair(ctx: BuildContext, module: string, aShape: number[], bShape: number[]): [Tensor, Tensor] {
  const aName = peftName(module, "lora_A");
  const bName = peftName(module, "lora_B");
  const a = allocFloat(ctx.dtype, shapeSize(aShape));
  const bound = 1 / Math.sqrt(aShape[aShape.length - 1]);
  new RandomStream(ctx.setup.seed, aName).fillUniform(a, -bound, bound);
  const bSize = shapeSize(bShape);
  const aT: Tensor = { name: aName, shape: aShape, data: a, grad: allocFloat(ctx.dtype, a.length) };
  const bT: Tensor = { name: bName, shape: bShape, data: allocFloat(ctx.dtype, bSize), grad: allocFloat(ctx.dtype, bSize) };
  ctx.trainable.push(aT, bT);
  return [aT, bT];
}

function makeLora(ctx: BuildContext, module: string, inDim: number, outDim: number, rank: number): LoraAdapter {
  const [a, b] = loraPair(ctx, module, [rank, inDim], [outDim, rank]);
  return { a, b, rank, scale: LORA_ALPHA / rank };
}

/** Layer l's expert factors when the setup trains the MLP (Tinker's shared-outer layout, expertLora.ts). */
function expertLora(ctx: BuildContext, l: number): ExpertLoraParams | null {
  const s = ctx.setup;
  const moe = ctx.config.moe;
  if (s.mode !== "lora" || !s.trainMlp || moe === undefined) return null;
  const pair = (proj: ExpertLoraProjection): [Tensor, Tensor] =>
    loraPair(ctx, expertLoraModule(l, proj), ...expertLoraShapes(proj, s.rank, moe.numExperts, ctx.config.hiddenSize, moe.expertIntermediateSize));
  const [gateA, gateB] = pair("w1");
  const [upA, upB] = pair("w3");
  const [downA, downB] = pair("w2");
  return { rank: s.rank, scale: LORA_ALPHA / s.rank, gateA, gateB, upA, upB, downA, downB };
}

function projection(ctx: BuildContext, layer: number, proj: ProjectionName): Linear {
  const prefix = projectionPrefix(layer, proj);
  const [outDim, inDim] = projectionShape(ctx.config, proj);
  const bias = projectionHasBias(ctx.config, proj) ? vectorTensor(ctx, `${prefix}.bias`, [outDim]) : null;
  return adaptedLinear(ctx, prefix, outDim, inDim, bias, isAttentionProjection(proj));
}

/** The linear layer `<prefix>.weight` ([outDim, inDim]) with its adapter when the setup trains its kind. */
function adaptedLinear(ctx: BuildContext, prefix: string, outDim: number, inDim: number, bias: Tensor | null, attention: boolean): Linear {
  const weight = matrixTensor(ctx, `${prefix}.weight`, [outDim, inDim]);
  let lora: LoraAdapter | null = null;
  const s = ctx.setup;
  if (s.mode === "lora" && (attention ? s.trainAttn : s.trainMlp)) lora = makeLora(ctx, prefix, inDim, outDim, s.rank);
  return { inDim, outDim, weight, bias, lora };
}

/**
 * The router and experts of a mixture-of-experts layer. With train_mlp the experts adapt through
 * Tinker's shared-outer factors (`lora`, expertLora.ts), never through adapters of their own linears.
 */
function moeParams(ctx: BuildContext, l: number): MoeParams {
  const moe = ctx.config.moe;
  if (moe === undefined) throw new Error("moeParams: the config has no experts");
  const { hiddenSize: D } = ctx.config;
  const Fe = moe.expertIntermediateSize;
  const router = matrixTensor(ctx, routerName(ctx.config, l), [moe.numExperts, D]);
  if (moe.gptOss !== undefined) return gptOssExperts(ctx, l, router);
  const experts: ExpertParams[] = [];
  for (let e = 0; e < moe.numExperts; e++) {
    const frozen = (proj: "gate_proj" | "up_proj" | "down_proj", outDim: number, inDim: number): Linear => ({
      inDim,
      outDim,
      weight: matrixTensor(ctx, `${expertPrefix(l, e, proj)}.weight`, [outDim, inDim]),
      bias: null,
      lora: null,
    });
    experts.push({ gate: frozen("gate_proj", Fe, D), up: frozen("up_proj", Fe, D), down: frozen("down_proj", D, Fe) });
  }
  return { router, routerBias: null, experts, lora: expertLora(ctx, l) };
}

/**
 * GPT-OSS's router bias and experts, each expert's matrices and biases views of the layer's fused
 * tensors (so a 16-bit checkpoint stays 16-bit and full training updates the tensors it saves).
 * With train_mlp the experts adapt through Tinker's shared-outer factors (`lora`), applied beside
 * the base products, never merged into them (docs/numerics.md#expert-lora).
 */
function gptOssExperts(ctx: BuildContext, l: number, router: WeightTensor): MoeParams {
  const moe = ctx.config.moe as NonNullable<ModelConfig["moe"]>;
  const { hiddenSize: D } = ctx.config;
  const { numExperts: E, expertIntermediateSize: Fe } = moe;
  const routerBias = vectorTensor(ctx, routerBiasName(l), [E]);
  const gateUpBias = vectorTensor(ctx, fusedExpertName(l, "gate_up_proj_bias"), [E, 2 * Fe]);
  const downBias = vectorTensor(ctx, fusedExpertName(l, "down_proj_bias"), [E, D]);
  const gateUpName = fusedExpertName(l, "gate_up_proj");
  const downName = fusedExpertName(l, "down_proj");
  const rawGateUp = rawSource(ctx, gateUpName);
  const rawDown = rawSource(ctx, downName);
  if (rawGateUp instanceof Mxfp4Matrix || rawDown instanceof Mxfp4Matrix) {
    if (!(rawGateUp instanceof Mxfp4Matrix && rawDown instanceof Mxfp4Matrix))
      throw new Error(`layer ${l}: gate_up_proj and down_proj must both be MXFP4 or both dense`);
    if (ctx.setup.mode === "full") {
      throw new InvalidArgumentError("full fine-tuning needs dense weights: an MXFP4 checkpoint (GPT-OSS as released) trains with LoRA, its experts frozen");
    }
    ctx.quantized.set(gateUpName, rawGateUp);
    ctx.quantized.set(downName, rawDown);
    ctx.expertBuffers ??= expertBuffers(2 * Fe * D, D * Fe);
    const into = ctx.expertBuffers;
    const widened = (name: string, shape: number[], data: HalfArray): WeightTensor => ({ name: `${name} (one expert, widened)`, shape, data, grad: null });
    const experts = Array.from(
      { length: E },
      (_, e): ExpertParams => ({
        // Widened output-major ([2F, D], [D, F]): the rows as MXFP4 stores them, gate and up alternating.
        gate: { inDim: D, outDim: 2 * Fe, weight: widened(gateUpName, [2 * Fe, D], into.gateUp), bias: rowsOf(gateUpBias, 2 * Fe, e, e + 1), lora: null },
        up: null,
        down: { inDim: Fe, outDim: D, weight: widened(downName, [D, Fe], into.down), bias: rowsOf(downBias, D, e, e + 1), lora: null },
        quantized: { gateUp: rawGateUp, down: rawDown, expert: e, into },
      }),
    );
    return { router, routerBias, experts, lora: expertLora(ctx, l) };
  }
  const gateUp = matrixTensor(ctx, gateUpName, [E, D, 2 * Fe]);
  const down = matrixTensor(ctx, downName, [E, Fe, D]);
  const experts: ExpertParams[] = [];
  for (let e = 0; e < E; e++) {
    experts.push({
      gate: {
        inDim: D,
        outDim: 2 * Fe,
        transposed: true,
        weight: rowsOf(gateUp, 2 * Fe, e * D, (e + 1) * D),
        bias: rowsOf(gateUpBias, 2 * Fe, e, e + 1),
        lora: null,
      },
      up: null,
      down: { inDim: Fe, outDim: D, transposed: true, weight: rowsOf(down, D, e * Fe, (e + 1) * Fe), bias: rowsOf(downBias, D, e, e + 1), lora: null },
    });
  }
  return { router, routerBias, experts, lora: expertLora(ctx, l) };
}

/** Layer l's Gated DeltaNet; its projections adapt with the attention's (train_attn). */
function linearAttnParams(ctx: BuildContext, l: number): LinearAttnParams {
  const prefix = linearPrefix(l);
  const shapes = linearTensorShapes(ctx.config, l);
  const lin = (proj: "in_proj_qkv" | "in_proj_z" | "in_proj_b" | "in_proj_a" | "out_proj"): Linear => {
    const [outDim, inDim] = linearProjectionShape(ctx.config, proj);
    return adaptedLinear(ctx, `${prefix}.${proj}`, outDim, inDim, null, true);
  };
  const vector = (name: string): Tensor => vectorTensor(ctx, `${prefix}.${name}`, shapes.get(`${prefix}.${name}`) as number[]);
  return {
    inProjQkv: lin("in_proj_qkv"),
    inProjZ: lin("in_proj_z"),
    inProjB: lin("in_proj_b"),
    inProjA: lin("in_proj_a"),
    conv: vector("conv1d.weight"),
    dtBias: vector("dt_bias"),
    aLog: vector("A_log"),
    norm: vector("norm.weight"),
    outProj: lin("out_proj"),
  };
}

/** Row views of a tensor (rows [r0, r1) of [rows, width]), sharing its data and gradient. */
function rowsOf<T extends Tensor | WeightTensor>(t: T, width: number, r0: number, r1: number): T {
  return { ...t, shape: [r1 - r0, width], data: weightView(t.data, r0 * width, r1 * width), grad: t.grad?.subarray(r0 * width, r1 * width) ?? null };
}

/**
 * A fused projection (Phi-3's qkv_proj, gate_up_proj) as one Linear per part, each a row block of
 * the fused weight. With LoRA the parts share A and take row blocks of B, so x·Wᵀ + s·(x·Aᵀ)·Bᵀ of
 * the fused matrix is exactly the parts' outputs side by side, and A's gradient (which linearBackward
 * accumulates) sums over the parts.
 */
export function splitLinear(lin: Linear, rows: readonly number[]): Linear[] {
  const out: Linear[] = [];
  let r0 = 0;
  for (const n of rows) {
    const r1 = r0 + n;
    const lora = lin.lora === null ? null : { ...lin.lora, b: rowsOf(lin.lora.b, lin.lora.rank, r0, r1) };
    out.push({
      inDim: lin.inDim,
      outDim: n,
      weight: rowsOf(lin.weight, lin.inDim, r0, r1),
      bias: lin.bias === null ? null : rowsOf(lin.bias, 1, r0, r1),
      lora,
    });
    r0 = r1;
  }
  return out;
}

/** q, k, v, o of layer l, splitting a fused qkv_proj into row views. */
function attentionProjections(ctx: BuildContext, l: number): Linear[] {
  const { numHeads: H, numKvHeads: Hkv, headDim: d } = ctx.config;
  if (ctx.config.fusedProjections !== true) return ATTENTION_PROJECTIONS.map((p) => projection(ctx, l, p));
  return [...splitLinear(projection(ctx, l, "qkv_proj"), [H * d, Hkv * d, Hkv * d]), projection(ctx, l, "o_proj")];
}

/** gate, up, down of layer l, splitting a fused gate_up_proj into row views. */
function mlpProjections(ctx: BuildContext, l: number): Linear[] {
  const F = ctx.config.intermediateSize;
  if (ctx.config.fusedProjections !== true) return MLP_PROJECTIONS.map((p) => projection(ctx, l, p));
  return [...splitLinear(projection(ctx, l, "gate_up_proj"), [F, F]), projection(ctx, l, "down_proj")];
}

export function buildParams(config: ModelConfig, weights: Map<string, BaseArray>, setup: TrainableSetup, dtype: Dtype): ModelParams {
  const ctx: BuildContext = { config, weights, setup, dtype, trainable: [], frozen: new Map(), quantized: new Map(), expertBuffers: null };
  const { hiddenSize: D, vocabSize: V } = config;
  const [qNormWidth, kNormWidth] = qkNormWidths(config);
  const embed = matrixTensor(ctx, "model.embed_tokens.weight", [V, D]);
  const layers: LayerParams[] = [];
  const norm = (name: string | null): Tensor | null => (name === null ? null : vectorTensor(ctx, name, [D]));
  for (let l = 0; l < config.numLayers; l++) {
    const names = layerNormNames(config, l);
    const inputNorm = norm(names.attnIn);
    const linear = layerIsLinear(config, l) ? linearAttnParams(ctx, l) : null;
    const [q, k, v, o] = linear !== null ? [null, null, null, null] : attentionProjections(ctx, l);
    const qkNorm = config.qkNorm && linear === null;
    const qNorm = qkNorm ? vectorTensor(ctx, `model.layers.${l}.self_attn.q_norm.weight`, [qNormWidth]) : null;
    const kNorm = qkNorm ? vectorTensor(ctx, `model.layers.${l}.self_attn.k_norm.weight`, [kNormWidth]) : null;
    const sinks = config.attentionSinks === true ? vectorTensor(ctx, sinksName(l), [config.numHeads]) : null;
    const attnOutNorm = norm(names.attnOut);
    const postNorm = norm(names.mlpIn);
    const sparse = layerIsMoe(config, l);
    const [gate, up, down] = sparse ? [null, null, null] : mlpProjections(ctx, l);
    const moe = sparse ? moeParams(ctx, l) : null;
    const mlpOutNorm = norm(names.mlpOut);
    layers.push({ inputNorm, q, k, v, o, qNorm, kNorm, sinks, attnOutNorm, postNorm, gate, up, down, moe, mlpOutNorm, linear });
  }
  const finalNorm = vectorTensor(ctx, "model.norm.weight", [D]);
  const headWeight = config.tieWordEmbeddings ? embed : matrixTensor(ctx, "lm_head.weight", [V, D]);
  const headLora = setup.mode === "lora" && setup.trainUnembed ? makeLora(ctx, "lm_head", D, V, setup.rank) : null;
  const head: Linear = { inDim: D, outDim: V, weight: headWeight, bias: null, lora: headLora };
  return { embed, layers, finalNorm, head, trainable: ctx.trainable, frozen: ctx.frozen, quantized: ctx.quantized };
}
