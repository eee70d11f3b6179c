// The weights a sampler decodes with: the frozen base matrices (float32, or the checkpoint's 16-bit
// values, which the kernels widen as they stream them), shared with training models and never
// copied, plus the LoRA factors of each adapted matrix kept unmerged. A projection
// computes x·Wᵀ + scale·(x·Aᵀ)·Bᵀ (docs/numerics.md#kv-cache): the two rank-r products cost about r/D of
// the base product, while merging would cost a full fp32 copy of every adapted matrix per snapshot
// (gigabytes at 1B parameters, and two resident copies while an RL loop swaps samplers).
import { denseWeight, HalfArray, toFloat32, weightView, type BaseArray, type DenseArray } from "../kernels/halfArray.ts";
import { expertBuffers, Mxfp4Matrix, type ExpertBuffers, type QuantizedExpert } from "../kernels/mxfp4.ts";
import type { Kernels } from "../kernels/types.ts";
import {
  ATTENTION_PROJECTIONS,
  MLP_PROJECTIONS,
  expertPrefix,
  layerIsLinear,
  linearPrefix,
  linearProjectionShape,
  fusedExpertName,
  layerIsMoe,
  layerNormNames,
  projectionHasBias,
  projectionPrefix,
  projectionShape,
  routerBiasName,
  routerName,
  sinksName,
  type ModelConfig,
  type ProjectionName,
} from "../model/config.ts";
import { EXPERT_LORA_PROJECTIONS, expertLoraModule, expertLoraShapes, type ExpertLoraValues } from "../model/expertLora.ts";
import { LORA_ALPHA, peftName } from "../model/params.ts";

/** A LoRA pair of one matrix: A [r, in], B [out, r], applied as scale·B·A. */
export interface LoraFactors {
  a: Float32Array;
  b: Float32Array;
  rank: number;
  scale: number;
}

/** A base matrix [out, in] ([in, out] when transposed: GPT-OSS's experts) and its adapter, if any. */
export interface Projection {
  weight: DenseArray;
  lora: LoraFactors | null;
  transposed?: boolean;
}

/** Norms as in the training model's LayerParams: null where the family has none. */
export interface InferenceLayer {
  // Norm weights are what the kernels multiply by (1 + w for Gemma, see needNorm).
  inputNorm: Float32Array | null;
  /** The attention's projections; null in a linear-attention layer. */
  q: Projection | null;
  k: Projection | null;
  v: Projection | null;
  o: Projection | null;
  qBias: Float32Array | null;
  kBias: Float32Array | null;
  vBias: Float32Array | null;
  oBias: Float32Array | null;
  qNorm: Float32Array | null;
  kNorm: Float32Array | null;
  /** GPT-OSS's per-head sink logits. */
  sinks: Float32Array | null;
  attnOutNorm: Float32Array | null;
  postNorm: Float32Array | null;
  mlpOutNorm: Float32Array | null;
  /** The dense MLP; null in a mixture-of-experts layer. */
  gate: Projection | null;
  up: Projection | null;
  down: Projection | null;
  moe: InferenceMoe | null;
  /** Qwen3.5's Gated DeltaNet in a linear-attention layer (model/deltanet.ts), else null. */
  linear: InferenceLinear | null;
}

export interface InferenceLinear {
  inProjQkv: Projection;
  inProjZ: Projection;
  inProjB: Projection;
  inProjA: Projection;
  outProj: Projection;
  /** conv1d.weight [C, K]; dt_bias, A_log [Hv]; the gated norm's weight [dv] (as it is, no 1 + w). */
  conv: Float32Array;
  dtBias: Float32Array;
  aLog: Float32Array;
  norm: Float32Array;
}

/**
 * A mixture-of-experts layer's router [E, D] and experts (model/moe.ts routes the same way). GPT-OSS:
 * a router bias, and experts whose `gate` is the fused gate_up (no `up`), with biases.
 */
export interface InferenceMoe {
  router: DenseArray;
  routerBias: Float32Array | null;
  experts: InferenceExpert[];
  /** The experts' shared-outer adapter (model/expertLora.ts), unmerged as every adapter here. */
  lora: ExpertLoraValues | null;
}

export interface InferenceExpert {
  gate: Projection;
  up: Projection | null;
  down: Projection;
  gateBias: Float32Array | null;
  downBias: Float32Array | null;
  /** MXFP4 experts: widenExpert fills the buffers gate and down read. */
  quantized?: QuantizedExpert;
}

export interface InferenceWeights {
  config: ModelConfig;
  embed: DenseArray;
  layers: InferenceLayer[];
  finalNorm: Float32Array;
  /** [V, D]; its weight is the embedding itself when tied. */
  head: Projection;
  /** Largest adapter rank over all projections (0 without an adapter): scratch size for x·Aᵀ. */
  maxRank: number;
}

/** LoRA tensors by PEFT name (`base_model.model.<module>.lora_A.weight`), with their rank. */
export interface AdapterTensors {
  rank: number;
  tensors: Map<string, Float32Array>;
}

function needAny(weights: Map<string, BaseArray>, name: string): BaseArray {
  const w = weights.get(name);
  if (w === undefined) throw new Error(`sampler weights: tensor "${name}" is missing`);
  return w;
}

function need(weights: Map<string, BaseArray>, name: string): DenseArray {
  return denseWeight(needAny(weights, name), name);
}

/** A norm weight or bias as float32 (a loader keeps only matrices in 16 bits; widen any other). */
function needVector(weights: Map<string, BaseArray>, name: string): Float32Array {
  return toFloat32(need(weights, name));
}

/** An RMSNorm weight as the kernels multiply by it: 1 + w for Gemma (a new array), else w. */
function needNorm(config: ModelConfig, weights: Map<string, BaseArray>, name: string): Float32Array {
  const w = needVector(weights, name);
  return config.normOffset === true ? Float32Array.from(w, (x) => 1 + x) : w;
}

/**
 * The projection of `module`: `base` with the adapter's factors for it, if the adapter has them.
 * Throws when only one of A and B is present or sizes disagree.
 */
function projection(base: DenseArray, module: string, outDim: number, inDim: number, adapter: AdapterTensors | null, used: Set<string>): Projection {
  if (adapter === null) return { weight: base, lora: null };
  const aName = peftName(module, "lora_A");
  const bName = peftName(module, "lora_B");
  const a = adapter.tensors.get(aName);
  const b = adapter.tensors.get(bName);
  if (a === undefined && b === undefined) return { weight: base, lora: null };
  if (a === undefined || b === undefined)
    throw new Error(`adapter: ${a === undefined ? aName : bName} is missing (its pair ${a === undefined ? bName : aName} is present)`);
  const r = adapter.rank;
  if (a.length !== r * inDim) throw new Error(`adapter: ${aName} has ${a.length} elements, expected [${r}, ${inDim}]`);
  if (b.length !== outDim * r) throw new Error(`adapter: ${bName} has ${b.length} elements, expected [${outDim}, ${r}]`);
  used.add(aName);
  used.add(bName);
  return { weight: base, lora: { a, b, rank: r, scale: LORA_ALPHA / r } };
}

/** Row blocks of a fused projection [Σrows, inDim] as projections sharing its A (B and W by row views). */
function splitProjection(p: Projection, inDim: number, rows: readonly number[]): Projection[] {
  const out: Projection[] = [];
  let r0 = 0;
  for (const n of rows) {
    const r1 = r0 + n;
    const lora = p.lora === null ? null : { ...p.lora, b: p.lora.b.subarray(r0 * p.lora.rank, r1 * p.lora.rank) };
    out.push({ weight: weightView(p.weight, r0 * inDim, r1 * inDim), lora });
    r0 = r1;
  }
  return out;
}

/** Up to this many rows (decode steps, short prompts) a product streams the weights (gemmRowsNT). */
export const ROWS_PRODUCT_MAX = 64;

/**
 * y = x·Wᵀ (+ scale·(x·Aᵀ)·Bᵀ) for n rows of x [n, inDim] into y [n, outDim]; `scratch` holds at
 * least n·rank floats. Decode-sized products go through gemmRowsNT, whose bits for a row do not
 * depend on the other rows (a sequence decodes the same alone or in a batch); prompt-sized ones
 * through gemmPrefillNT, likewise row-independent.
 */
export function project(k: Kernels, p: Projection, x: Float32Array, n: number, outDim: number, inDim: number, y: Float32Array, scratch: Float32Array): void {
  const rows = n <= ROWS_PRODUCT_MAX;
  // A transposed weight ([in, out]) has no row-streaming kernel: a plain GEMM (its rows' bits may
  // then depend on the batch's other rows).
  if (p.transposed === true) k.gemm(false, false, n, outDim, inDim, 1, x, p.weight, 0, y);
  else if (rows) k.gemmRowsNT(n, outDim, inDim, 1, x, p.weight, 0, y);
  else k.gemmPrefillNT(n, outDim, inDim, 1, x, p.weight, 0, y);
  if (p.lora === null) return;
  const { a, b, rank, scale } = p.lora;
  if (rows) {
    k.gemmRowsNT(n, rank, inDim, 1, x, a, 0, scratch);
    k.gemmRowsNT(n, outDim, rank, scale, scratch, b, 1, y);
  } else {
    k.gemm(false, true, n, rank, inDim, 1, x, a, 0, scratch);
    k.gemm(false, true, n, outDim, rank, scale, scratch, b, 1, y);
  }
}

/**
 * Builds a sampler's weights from HF-named base weights and an optional adapter. Every adapter
 * tensor must be used (an adapter for another architecture fails here, not silently).
 */
export function buildInferenceWeights(config: ModelConfig, base: Map<string, BaseArray>, adapter: AdapterTensors | null): InferenceWeights {
  const used = new Set<string>();
  const expertBuffers: { buffers: ExpertBuffers | null } = { buffers: null };
  const proj = (l: number, p: ProjectionName): Projection => {
    const prefix = projectionPrefix(l, p);
    const [outDim, inDim] = projectionShape(config, p);
    return projection(need(base, `${prefix}.weight`), prefix, outDim, inDim, adapter, used);
  };
  const bias = (l: number, p: ProjectionName): Float32Array | null =>
    projectionHasBias(config, p) ? needVector(base, `${projectionPrefix(l, p)}.bias`) : null;
  const layers: InferenceLayer[] = [];
  const norm = (name: string | null): Float32Array | null => (name === null ? null : needNorm(config, base, name));
  const { numHeads: H, numKvHeads: Hkv, headDim: d, intermediateSize: F, hiddenSize: D } = config;
  const fused = config.fusedProjections === true;
  for (let l = 0; l < config.numLayers; l++) {
    let linear: InferenceLinear | null = null;
    if (layerIsLinear(config, l)) {
      const prefix = linearPrefix(l);
      const lp = (p: "in_proj_qkv" | "in_proj_z" | "in_proj_b" | "in_proj_a" | "out_proj"): Projection => {
        const [outDim, inDim] = linearProjectionShape(config, p);
        return projection(need(base, `${prefix}.${p}.weight`), `${prefix}.${p}`, outDim, inDim, adapter, used);
      };
      linear = {
        inProjQkv: lp("in_proj_qkv"),
        inProjZ: lp("in_proj_z"),
        inProjB: lp("in_proj_b"),
        inProjA: lp("in_proj_a"),
        outProj: lp("out_proj"),
        conv: needVector(base, `${prefix}.conv1d.weight`),
        dtBias: needVector(base, `${prefix}.dt_bias`),
        aLog: needVector(base, `${prefix}.A_log`),
        norm: needVector(base, `${prefix}.norm.weight`),
      };
    }
    // Phi-3's fused matrices are computed part by part through row views (see params.ts splitLinear).
    let attention: (Projection | null)[] = [null, null, null, null];
    if (linear === null) {
      attention = fused
        ? [...splitProjection(proj(l, "qkv_proj"), D, [H * d, Hkv * d, Hkv * d]), proj(l, "o_proj")]
        : ATTENTION_PROJECTIONS.map((p) => proj(l, p));
    }
    const [q, kk, v, o] = attention;
    const full = linear === null;
    const sparse = layerIsMoe(config, l);
    let dense: (Projection | null)[] = [null, null, null];
    if (!sparse) dense = fused ? [...splitProjection(proj(l, "gate_up_proj"), D, [F, F]), proj(l, "down_proj")] : MLP_PROJECTIONS.map((p) => proj(l, p));
    const [gate, up, down] = dense;
    let moe: InferenceMoe | null = null;
    if (sparse && config.moe !== undefined) {
      const Fe = config.moe.expertIntermediateSize;
      const expert = (e: number, p: "gate_proj" | "up_proj" | "down_proj", outDim: number, inDim: number): Projection => {
        const prefix = expertPrefix(l, e, p);
        return projection(need(base, `${prefix}.weight`), prefix, outDim, inDim, adapter, used);
      };
      moe =
        config.moe.gptOss !== undefined
          ? gptOssExperts(config, base, l, expertBuffers, adapter, used)
          : {
              router: need(base, routerName(config, l)),
              routerBias: null,
              experts: Array.from({ length: config.moe.numExperts }, (_, e) => ({
                gate: expert(e, "gate_proj", Fe, D),
                up: expert(e, "up_proj", Fe, D),
                down: expert(e, "down_proj", D, Fe),
                gateBias: null,
                downBias: null,
              })),
              lora: expertLoraOf(config, l, adapter, used),
            };
    }
    const norms = layerNormNames(config, l);
    layers.push({
      inputNorm: norm(norms.attnIn),
      q,
      k: kk,
      v,
      o,
      qBias: full ? bias(l, "q_proj") : null,
      kBias: full ? bias(l, "k_proj") : null,
      vBias: full ? bias(l, "v_proj") : null,
      oBias: full ? bias(l, "o_proj") : null,
      qNorm: config.qkNorm && full ? needNorm(config, base, `model.layers.${l}.self_attn.q_norm.weight`) : null,
      kNorm: config.qkNorm && full ? needNorm(config, base, `model.layers.${l}.self_attn.k_norm.weight`) : null,
      sinks: config.attentionSinks === true ? needVector(base, sinksName(l)) : null,
      attnOutNorm: norm(norms.attnOut),
      postNorm: norm(norms.mlpIn),
      mlpOutNorm: norm(norms.mlpOut),
      gate,
      up,
      down,
      moe,
      linear,
    });
  }
  const embed = need(base, "model.embed_tokens.weight");
  const headBase = config.tieWordEmbeddings ? embed : need(base, "lm_head.weight");
  const head = projection(headBase, "lm_head", config.vocabSize, config.hiddenSize, adapter, used);
  if (adapter !== null) {
    const unused = [...adapter.tensors.keys()].filter((n) => !used.has(n));
    if (unused.length > 0) {
      throw new Error(
        `adapter: ${unused.length} tensor(s) do not belong to a ${config.modelType} model with ${config.numLayers} layers: ${unused.slice(0, 3).join(", ")}${unused.length > 3 ? ", ..." : ""}`,
      );
    }
  }
  const maxRank = adapter !== null && used.size > 0 ? adapter.rank : 0;
  return { config, embed, layers, finalNorm: needNorm(config, base, "model.norm.weight"), head, maxRank };
}

/**
 * Layer l's expert factors from the adapter (Tinker's w1/w3/w2 names and shapes), or null
 * when it has none; a partial set or a wrong size throws.
 */
function expertLoraOf(config: ModelConfig, l: number, adapter: AdapterTensors | null, used: Set<string>): ExpertLoraValues | null {
  const moe = config.moe as NonNullable<ModelConfig["moe"]>;
  if (adapter === null) return null;
  const r = adapter.rank;
  const found = new Map<string, Float32Array>();
  const missing: string[] = [];
  for (const proj of EXPERT_LORA_PROJECTIONS) {
    const shapes = expertLoraShapes(proj, r, moe.numExperts, config.hiddenSize, moe.expertIntermediateSize);
    (["lora_A", "lora_B"] as const).forEach((which, i) => {
      const name = peftName(expertLoraModule(l, proj), which);
      const t = adapter.tensors.get(name);
      if (t === undefined) return void missing.push(name);
      const shape = shapes[i] as number[];
      if (t.length !== shape.reduce((a, b) => a * b, 1)) throw new Error(`adapter: ${name} has ${t.length} elements, expected [${shape.join(", ")}]`);
      found.set(name, t);
    });
  }
  if (found.size === 0) return null;
  if (missing.length > 0) throw new Error(`adapter: layer ${l}'s expert factors are incomplete: ${missing.join(", ")} missing`);
  for (const n of found.keys()) used.add(n);
  const get = (proj: (typeof EXPERT_LORA_PROJECTIONS)[number], which: "lora_A" | "lora_B"): Float32Array =>
    found.get(peftName(expertLoraModule(l, proj), which)) as Float32Array;
  return {
    rank: r,
    scale: LORA_ALPHA / r,
    gateA: get("w1", "lora_A"),
    gateB: get("w1", "lora_B"),
    upA: get("w3", "lora_A"),
    upB: get("w3", "lora_B"),
    downA: get("w2", "lora_A"),
    downB: get("w2", "lora_B"),
  };
}

/** GPT-OSS's router and experts as views of the layer's fused tensors, and the experts' adapter if any. */
function gptOssExperts(
  config: ModelConfig,
  base: Map<string, BaseArray>,
  l: number,
  shared: { buffers: ExpertBuffers | null },
  adapter: AdapterTensors | null,
  used: Set<string>,
): InferenceMoe {
  const lora = expertLoraOf(config, l, adapter, used);
  const moe = config.moe as NonNullable<ModelConfig["moe"]>;
  const D = config.hiddenSize;
  const Fe = moe.expertIntermediateSize;
  const gateUpBias = needVector(base, fusedExpertName(l, "gate_up_proj_bias"));
  const downBias = needVector(base, fusedExpertName(l, "down_proj_bias"));
  const router = need(base, routerName(config, l));
  const routerBias = needVector(base, routerBiasName(l));
  const rawGateUp = needAny(base, fusedExpertName(l, "gate_up_proj"));
  const rawDown = needAny(base, fusedExpertName(l, "down_proj"));
  if (rawGateUp instanceof Mxfp4Matrix && rawDown instanceof Mxfp4Matrix) {
    // One pair of buffers for the whole model: the experts run one at a time (as in model/params.ts).
    shared.buffers ??= expertBuffers(2 * Fe * D, D * Fe);
    const into = shared.buffers;
    return {
      router,
      routerBias,
      experts: Array.from({ length: moe.numExperts }, (_, e) => ({
        gate: { weight: into.gateUp, lora: null },
        up: null,
        down: { weight: into.down, lora: null },
        gateBias: gateUpBias.subarray(e * 2 * Fe, (e + 1) * 2 * Fe),
        downBias: downBias.subarray(e * D, (e + 1) * D),
        quantized: { gateUp: rawGateUp, down: rawDown, expert: e, into },
      })),
      lora,
    };
  }
  const gateUp = denseWeight(rawGateUp, fusedExpertName(l, "gate_up_proj"));
  const down = denseWeight(rawDown, fusedExpertName(l, "down_proj"));
  const gu = D * 2 * Fe;
  return {
    router,
    routerBias,
    experts: Array.from({ length: moe.numExperts }, (_, e) => ({
      gate: { weight: weightView(gateUp, e * gu, (e + 1) * gu), lora: null, transposed: true },
      up: null,
      down: { weight: weightView(down, e * Fe * D, (e + 1) * Fe * D), lora: null, transposed: true },
      gateBias: gateUpBias.subarray(e * 2 * Fe, (e + 1) * 2 * Fe),
      downBias: downBias.subarray(e * D, (e + 1) * D),
    })),
    lora,
  };
}

/** Every projection of a layer: attention, dense MLP or every expert. */
function layerProjections(l: InferenceLayer): Projection[] {
  const out: Projection[] = [];
  for (const p of [l.q, l.k, l.v, l.o, l.gate, l.up, l.down]) if (p !== null) out.push(p);
  const la = l.linear;
  if (la !== null) out.push(la.inProjQkv, la.inProjZ, la.inProjB, la.inProjA, la.outProj);
  for (const e of l.moe?.experts ?? []) for (const p of [e.gate, e.up, e.down]) if (p !== null) out.push(p);
  return out;
}

/** Bytes held by arrays of `w` that are not in `shared`: the adapter factors (nothing is merged). */
export function ownedBytes(w: InferenceWeights, shared: Map<string, BaseArray>): number {
  // By buffer: Phi-3's projections are views of the shared fused matrices.
  const bufferOf = (a: BaseArray): ArrayBufferLike => (a instanceof HalfArray ? a.bits.buffer : a instanceof Mxfp4Matrix ? a.blocks.buffer : a.buffer);
  const sharedSet = new Set<ArrayBufferLike>([...shared.values()].map(bufferOf));
  const seen = new Set<BaseArray>();
  let n = 0;
  const count = (a: BaseArray): void => {
    if (!sharedSet.has(bufferOf(a)) && !seen.has(a)) {
      seen.add(a);
      n += a.byteLength;
    }
  };
  const countProjection = (p: Projection): void => {
    count(p.weight);
    if (p.lora !== null) {
      count(p.lora.a);
      count(p.lora.b);
    }
  };
  for (const l of w.layers) {
    for (const p of layerProjections(l)) countProjection(p);
    const el = l.moe?.lora;
    if (el) for (const a of [el.gateA, el.gateB, el.upA, el.upB, el.downA, el.downB]) count(a as Float32Array);
  }
  countProjection(w.head);
  return n;
}
