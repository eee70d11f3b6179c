// The weights a sampler decodes with: plain float32 matrices with any LoRA adapter merged in
// (W + (alpha/r)·B·A, engine-numerics §7.4), so a decode step costs exactly what the base model
// costs. Frozen base tensors are shared, never copied; only adapted matrices get a merged copy.
import type { Kernels } from "../kernels/types.ts";
import {
  ATTENTION_PROJECTIONS, MLP_PROJECTIONS, projectionHasBias, projectionPrefix, projectionShape, type ModelConfig, type ProjectionName,
} from "../model/config.ts";
import { LORA_ALPHA, peftName } from "../model/params.ts";

export interface InferenceLayer {
  inputNorm: Float32Array;
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  o: Float32Array;
  qBias: Float32Array | null;
  kBias: Float32Array | null;
  vBias: Float32Array | null;
  oBias: Float32Array | null;
  qNorm: Float32Array | null;
  kNorm: Float32Array | null;
  postNorm: Float32Array;
  gate: Float32Array;
  up: Float32Array;
  down: Float32Array;
}

export interface InferenceWeights {
  config: ModelConfig;
  embed: Float32Array;
  layers: InferenceLayer[];
  finalNorm: Float32Array;
  /** [V, D]; the embedding itself when tied and no head adapter is merged. */
  head: Float32Array;
}

/** LoRA tensors by PEFT name (`base_model.model.<module>.lora_A.weight`), with their rank. */
export interface AdapterTensors {
  rank: number;
  tensors: Map<string, Float32Array>;
}

function need(weights: Map<string, Float32Array>, name: string): Float32Array {
  const w = weights.get(name);
  if (w === undefined) throw new Error(`sampler weights: tensor "${name}" is missing`);
  return w;
}

/**
 * Returns `base` with the adapter of `module` merged in (a new array), or `base` itself when the
 * adapter has no entry for that module. Throws when only one of A and B is present or sizes disagree.
 */
function merged(k: Kernels, base: Float32Array, module: string, outDim: number, inDim: number, adapter: AdapterTensors | null, used: Set<string>): Float32Array {
  if (adapter === null) return base;
  const aName = peftName(module, "lora_A");
  const bName = peftName(module, "lora_B");
  const a = adapter.tensors.get(aName);
  const b = adapter.tensors.get(bName);
  if (a === undefined && b === undefined) return base;
  if (a === undefined || b === undefined) throw new Error(`adapter: ${a === undefined ? aName : bName} is missing (its pair ${a === undefined ? bName : aName} is present)`);
  const r = adapter.rank;
  if (a.length !== r * inDim) throw new Error(`adapter: ${aName} has ${a.length} elements, expected [${r}, ${inDim}]`);
  if (b.length !== outDim * r) throw new Error(`adapter: ${bName} has ${b.length} elements, expected [${outDim}, ${r}]`);
  used.add(aName);
  used.add(bName);
  const out = Float32Array.from(base);
  k.gemm(false, false, outDim, inDim, r, LORA_ALPHA / r, b, a, 1, out);
  return out;
}

/**
 * Builds a sampler's weights from HF-named base weights and an optional adapter. Every adapter
 * tensor must be used (an adapter for another architecture fails here, not silently).
 */
export function buildInferenceWeights(config: ModelConfig, base: Map<string, Float32Array>, adapter: AdapterTensors | null, k: Kernels): InferenceWeights {
  const used = new Set<string>();
  const proj = (l: number, p: ProjectionName): Float32Array => {
    const prefix = projectionPrefix(l, p);
    const [outDim, inDim] = projectionShape(config, p);
    return merged(k, need(base, `${prefix}.weight`), prefix, outDim, inDim, adapter, used);
  };
  const bias = (l: number, p: ProjectionName): Float32Array | null =>
    projectionHasBias(config, p) ? need(base, `${projectionPrefix(l, p)}.bias`) : null;
  const layers: InferenceLayer[] = [];
  for (let l = 0; l < config.numLayers; l++) {
    const [q, kk, v, o] = ATTENTION_PROJECTIONS.map((p) => proj(l, p));
    const [gate, up, down] = MLP_PROJECTIONS.map((p) => proj(l, p));
    layers.push({
      inputNorm: need(base, `model.layers.${l}.input_layernorm.weight`),
      q, k: kk, v, o,
      qBias: bias(l, "q_proj"), kBias: bias(l, "k_proj"), vBias: bias(l, "v_proj"), oBias: bias(l, "o_proj"),
      qNorm: config.qkNorm ? need(base, `model.layers.${l}.self_attn.q_norm.weight`) : null,
      kNorm: config.qkNorm ? need(base, `model.layers.${l}.self_attn.k_norm.weight`) : null,
      postNorm: need(base, `model.layers.${l}.post_attention_layernorm.weight`),
      gate, up, down,
    });
  }
  const embed = need(base, "model.embed_tokens.weight");
  const headBase = config.tieWordEmbeddings ? embed : need(base, "lm_head.weight");
  const head = merged(k, headBase, "lm_head", config.vocabSize, config.hiddenSize, adapter, used);
  if (adapter !== null) {
    const unused = [...adapter.tensors.keys()].filter((n) => !used.has(n));
    if (unused.length > 0) {
      throw new Error(`adapter: ${unused.length} tensor(s) do not belong to a ${config.modelType} model with ${config.numLayers} layers: ${unused.slice(0, 3).join(", ")}${unused.length > 3 ? ", ..." : ""}`);
    }
  }
  return { config, embed, layers, finalNorm: need(base, "model.norm.weight"), head };
}

/** Bytes held by arrays of `w` that are not in `shared` (what merging cost in memory). */
export function ownedBytes(w: InferenceWeights, shared: Map<string, Float32Array>): number {
  const sharedSet = new Set(shared.values());
  let n = 0;
  const count = (a: Float32Array | null): void => {
    if (a !== null && !sharedSet.has(a)) n += a.byteLength;
  };
  for (const l of w.layers) for (const a of [l.q, l.k, l.v, l.o, l.gate, l.up, l.down]) count(a);
  count(w.head);
  return n;
}
