// A LoRA adapter as PEFT stores it: tensors `base_model.model.<module>.lora_A.weight` ([r, in]) and
// `…lora_B.weight` ([out, r]) with scale lora_alpha / r. This file pairs them per module and checks
// them against the base model's weight shapes, so an adapter for another model fails before
// anything is written.
import type { SafetensorsEntry } from "../engine/safetensors/index.ts";
import { checkExpertsFitBase, isExpertFactorName, pairExpertFactors, type ExpertLayout, type ExpertLoraLayer } from "./expertLora.ts";
import { ExportError } from "./folder.ts";

export interface LoraModule {
  /** The module path in the base model, e.g. `model.layers.0.self_attn.q_proj` or `lm_head`. */
  module: string;
  a: Float32Array;
  b: Float32Array;
  rank: number;
  outDim: number;
  inDim: number;
}

export interface LoraAdapter {
  modules: Map<string, LoraModule>;
  /** Mixture-of-experts models: each layer's expert factors (Tinker's shared-outer w1/w3/w2, expertLora.ts) by experts module. */
  experts: Map<string, ExpertLoraLayer>;
  /** lora_alpha / r. */
  scale: number;
}

const NAME_RE = /^base_model\.model\.(.+)\.lora_([AB])\.weight$/;

export function pairLoraTensors(tensors: Map<string, { shape: number[]; data: Float32Array }>, rank: number, alpha: number, where: string): LoraAdapter {
  const halves = new Map<string, { a?: { shape: number[]; data: Float32Array }; b?: { shape: number[]; data: Float32Array } }>();
  for (const [name, t] of tensors) {
    if (isExpertFactorName(name)) continue;
    const m = NAME_RE.exec(name);
    if (m === null)
      throw new ExportError(
        `${where}: tensor ${JSON.stringify(name)} is not a LoRA tensor (expected base_model.model.<module>.lora_A.weight or .lora_B.weight)`,
      );
    const entry = halves.get(m[1]!) ?? {};
    if (m[2] === "A") entry.a = t;
    else entry.b = t;
    halves.set(m[1]!, entry);
  }
  const modules = new Map<string, LoraModule>();
  for (const [module, { a, b }] of halves) {
    if (a === undefined || b === undefined)
      throw new ExportError(`${where}: module ${module} has lora_${a === undefined ? "B" : "A"} but not lora_${a === undefined ? "A" : "B"}`);
    if (a.shape.length !== 2 || b.shape.length !== 2 || a.shape[0] !== rank || b.shape[1] !== rank) {
      throw new ExportError(
        `${where}: module ${module} has lora_A [${a.shape.join(", ")}] and lora_B [${b.shape.join(", ")}]; expected [${rank}, in] and [out, ${rank}] for r=${rank}`,
      );
    }
    modules.set(module, { module, a: a.data, b: b.data, rank, outDim: b.shape[0]!, inDim: a.shape[1]! });
  }
  const experts = pairExpertFactors(tensors, rank, where);
  if (modules.size === 0 && experts.size === 0) throw new ExportError(`${where}: the adapter has no LoRA tensors`);
  return { modules, experts, scale: alpha / rank };
}

/** What the base holds for the adapter's expert factors (expertLora.ts). */
export interface ExpertFit {
  mxfp4Experts: boolean;
  /** The base's expert layout, null when the adapter has no expert factors. */
  expertLayout: ExpertLayout | null;
  /** How many base tensors the expert factors fold into. */
  expertTensors: number;
}

/**
 * Checks every adapted module against the base weights' shapes. `lm_head` may be missing from the
 * base when embeddings are tied: then it is the embedding matrix. Returns the modules whose head is tied.
 */
export function checkAdapterFitsBase(
  adapter: LoraAdapter,
  baseEntries: Map<string, SafetensorsEntry>,
  tied: boolean,
  baseDir: string,
): ExpertFit & { untieHead: boolean } {
  let untieHead = false;
  const fit: ExpertFit = { mxfp4Experts: false, expertLayout: null, expertTensors: 0 };
  for (const layer of adapter.experts.values()) {
    const { layout, tensors } = checkExpertsFitBase(layer, baseEntries, baseDir);
    fit.mxfp4Experts ||= layout === "mxfp4";
    fit.expertLayout = layout;
    fit.expertTensors += tensors;
  }
  for (const m of adapter.modules.values()) {
    let target = `${m.module}.weight`;
    let entry = baseEntries.get(target);
    if (entry === undefined && m.module === "lm_head" && tied) {
      target = "model.embed_tokens.weight";
      entry = baseEntries.get(target);
      untieHead = true;
    }
    if (entry === undefined)
      throw new ExportError(
        `adapter module ${m.module} has no weight ${m.module}.weight in the base model ${baseDir}; the adapter was trained on another model`,
      );
    const [out, inn] = entry.shape;
    if (entry.shape.length !== 2 || out !== m.outDim || inn !== m.inDim) {
      throw new ExportError(
        `adapter module ${m.module} is [${m.outDim}, ${m.inDim}] but the base model's ${target} in ${baseDir} is [${entry.shape.join(", ")}]; the adapter was trained on another model`,
      );
    }
  }
  return { untieHead, ...fit };
}
