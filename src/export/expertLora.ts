// The experts' shared-outer adapter in the exports (docs/numerics.md#expert-lora): Tinker's w1/w3/w2
// factors of a layer's experts (`<layer>.mlp.experts.w1.lora_A.weight` [1 or E, r, D], …), folded
// for --merged into the base's expert weights exactly as Tinker's cookbook merges them, and
// rewritten for --adapter in a PEFT form that represents them exactly. Two base layouts:
// - fused (GPT-OSS): gate into the even columns of gate_up_proj [E, D, 2F], up into the odd ones,
//   down into down_proj [E, F, D]; the adapter is PEFT's target_parameters LoRA of those tensors
//   (ParamWrapper): per expert, gate_up's A stacks the gate and up A's and its B places their B's
//   block-diagonally in the interleaved rows (rank 2r, the same alpha/r through alpha_pattern), and
//   down's shared B is repeated for every expert.
// - per expert (Qwen3-MoE): each expert's gate_proj, up_proj [F, D] and down_proj [D, F]; the
//   adapter is an ordinary PEFT LoRA pair per expert projection, the shared factor repeated into
//   every expert's pair (the same product, so exact).
import type { Kernels } from "../engine/kernels/types.ts";
import type { SafetensorsEntry } from "../engine/safetensors/index.ts";
import { ExportError } from "./folder.ts";

const NAME_RE = /^base_model\.model\.(.+\.mlp\.experts)\.(w[123])\.lora_([AB])\.weight$/;

/** Whether `name` is one of Tinker's expert factors (as the engine's mixture-of-experts checkpoints hold them). */
export function isExpertFactorName(name: string): boolean {
  return NAME_RE.test(name);
}

/** One projection's factors: A [nA, r, in] and B [nB, out, r], nA and nB 1 (shared) or E. */
interface ExpertPair {
  a: Float32Array;
  b: Float32Array;
  nA: number;
  nB: number;
  inDim: number;
  outDim: number;
}

/** A layer's expert factors: gate (w1), up (w3), down (w2). */
export interface ExpertLoraLayer {
  /** The experts module, e.g. `model.layers.0.mlp.experts`. */
  module: string;
  experts: number;
  rank: number;
  gate: ExpertPair;
  up: ExpertPair;
  down: ExpertPair;
}

type Raw = { shape: number[]; data: Float32Array };

/** Pairs the expert factors of `tensors` per layer, checking Tinker's shapes (one factor may be shared). */
export function pairExpertFactors(tensors: Map<string, Raw>, rank: number, where: string): Map<string, ExpertLoraLayer> {
  const parts = new Map<string, Map<string, Raw>>();
  for (const [name, t] of tensors) {
    const m = NAME_RE.exec(name);
    if (m === null) continue;
    const layer = parts.get(m[1]!) ?? new Map<string, Raw>();
    layer.set(`${m[2]}.${m[3]}`, t);
    parts.set(m[1]!, layer);
  }
  const out = new Map<string, ExpertLoraLayer>();
  for (const [module, got] of parts) {
    const pair = (proj: string): ExpertPair => {
      const a = got.get(`${proj}.A`);
      const b = got.get(`${proj}.B`);
      if (a === undefined || b === undefined)
        throw new ExportError(`${where}: ${module}.${proj} has lora_${a === undefined ? "B" : "A"} but not lora_${a === undefined ? "A" : "B"}`);
      if (a.shape.length !== 3 || b.shape.length !== 3 || a.shape[1] !== rank || b.shape[2] !== rank)
        throw new ExportError(
          `${where}: ${module}.${proj} has lora_A [${a.shape.join(", ")}] and lora_B [${b.shape.join(", ")}]; expected [experts or 1, ${rank}, in] and [experts or 1, out, ${rank}] for r=${rank}`,
        );
      return { a: a.data, b: b.data, nA: a.shape[0]!, nB: b.shape[0]!, inDim: a.shape[2]!, outDim: b.shape[1]! };
    };
    if (![...got.keys()].every((k) => ["w1", "w2", "w3"].includes(k.split(".")[0]!)) || got.size !== 6)
      throw new ExportError(`${where}: ${module} needs lora_A and lora_B of w1, w3 and w2; it has ${[...got.keys()].sort().join(", ")}`);
    const gate = pair("w1");
    const up = pair("w3");
    const down = pair("w2");
    const experts = Math.max(gate.nA, gate.nB, up.nA, up.nB, down.nA, down.nB);
    for (const [proj, p] of [
      ["w1", gate],
      ["w3", up],
      ["w2", down],
    ] as const) {
      if ((p.nA !== 1 && p.nA !== experts) || (p.nB !== 1 && p.nB !== experts) || (p.nA === 1 && p.nB === 1 && experts > 1))
        throw new ExportError(`${where}: ${module}.${proj} has ${p.nA} A and ${p.nB} B factors; each must be 1 (shared) or the ${experts} experts`);
    }
    if (gate.inDim !== up.inDim || gate.outDim !== up.outDim || down.inDim !== gate.outDim || down.outDim !== gate.inDim)
      throw new ExportError(
        `${where}: ${module}'s factors disagree: w1 ${gate.inDim}→${gate.outDim}, w3 ${up.inDim}→${up.outDim}, w2 ${down.inDim}→${down.outDim}`,
      );
    out.set(module, { module, experts, rank, gate, up, down });
  }
  return out;
}

function aOf(p: ExpertPair, e: number, r: number): Float32Array {
  const size = r * p.inDim;
  const i = p.nA === 1 ? 0 : e;
  return p.a.subarray(i * size, (i + 1) * size);
}

function bOf(p: ExpertPair, e: number, r: number): Float32Array {
  const size = p.outDim * r;
  const i = p.nB === 1 ? 0 : e;
  return p.b.subarray(i * size, (i + 1) * size);
}

/** How a base model stores a layer's experts: fused tensors (GPT-OSS, maybe MXFP4) or a module per expert (Qwen3-MoE). */
export type ExpertLayout = "fused" | "mxfp4" | "per-expert";

/** The base tensors (engine names) a layer's factors fold into, with their shapes, for a layout. */
function expertTargets(layer: ExpertLoraLayer, layout: "fused" | "per-expert"): Array<[string, number[]]> {
  const { experts: E, gate, down } = layer;
  const [D, F] = [gate.inDim, gate.outDim];
  if (layout === "fused")
    return [
      [`${layer.module}.gate_up_proj`, [E, D, 2 * F]],
      [`${layer.module}.down_proj`, [E, down.inDim, down.outDim]],
    ];
  return Array.from(
    { length: E },
    (_, e): Array<[string, number[]]> => [
      [`${layer.module}.${e}.gate_proj.weight`, [F, D]],
      [`${layer.module}.${e}.up_proj.weight`, [F, D]],
      [`${layer.module}.${e}.down_proj.weight`, [down.outDim, down.inDim]],
    ],
  ).flat();
}

/**
 * Checks a layer's factors against the base's expert weights (MXFP4 ones are named `_blocks`).
 * Returns the base's layout and how many of its tensors the factors fold into.
 */
export function checkExpertsFitBase(layer: ExpertLoraLayer, base: Map<string, SafetensorsEntry>, baseDir: string): { layout: ExpertLayout; tensors: number } {
  if (!base.has(`${layer.module}.gate_up_proj`) && !base.has(`${layer.module}.down_proj`) && base.has(`${layer.module}.gate_up_proj_blocks`))
    return { layout: "mxfp4", tensors: 2 };
  const layout = base.has(`${layer.module}.0.gate_proj.weight`) ? "per-expert" : "fused";
  const want = expertTargets(layer, layout);
  for (const [name, shape] of want) {
    const entry = base.get(name);
    if (entry === undefined)
      throw new ExportError(`the adapter adapts ${layer.module} but the base model ${baseDir} has no ${name}; it was trained on another model`);
    if (entry.shape.join(",") !== shape.join(","))
      throw new ExportError(
        `the adapter's ${layer.module} factors need ${name} [${shape.join(", ")}] but the base model ${baseDir} has [${entry.shape.join(", ")}]; it was trained on another model`,
      );
  }
  return { layout, tensors: want.length };
}

/** Which base tensor (engine name) `name` is for the expert factors: a fused one or one expert's projection. */
export function expertTensorTarget(
  name: string,
): { module: string; which: "gate_up_proj" | "down_proj" } | { module: string; expert: number; which: "gate_proj" | "up_proj" | "down_proj" } | null {
  const fused = /^(.+\.mlp\.experts)\.(gate_up_proj|down_proj)$/.exec(name);
  if (fused !== null) return { module: fused[1]!, which: fused[2] as "gate_up_proj" | "down_proj" };
  const own = /^(.+\.mlp\.experts)\.(\d+)\.(gate_proj|up_proj|down_proj)\.weight$/.exec(name);
  if (own !== null) return { module: own[1]!, expert: Number(own[2]), which: own[3] as "gate_proj" | "up_proj" | "down_proj" };
  return null;
}

/**
 * Adds the layer's delta to a base tensor in place (`scale` is alpha / r): GPT-OSS's fused gate_up
 * [E, D, 2F] (gate in the even columns, up in the odd ones) or down [E, F, D], or (`expert` given)
 * that expert's gate_proj, up_proj [F, D] or down_proj [D, F].
 */
export function mergeExpertFactors(
  k: Kernels,
  layer: ExpertLoraLayer,
  which: "gate_up_proj" | "down_proj" | "gate_proj" | "up_proj",
  scale: number,
  data: Float32Array,
  expert?: number,
): void {
  const { experts: E, rank: r, gate, up, down } = layer;
  const [D, F] = [gate.inDim, gate.outDim];
  if (expert !== undefined) {
    const p = which === "gate_proj" ? gate : which === "up_proj" ? up : down;
    // W [out, in] += s·B[e]·A[e]
    k.gemm(false, false, p.outDim, p.inDim, r, scale, bOf(p, expert, r), aOf(p, expert, r), 1, data);
    return;
  }
  if (which === "down_proj") {
    // down[e] [F, D] += s·A₂[e]ᵀ·B₂[e]ᵀ
    for (let e = 0; e < E; e++) k.gemm(true, true, F, D, r, scale, aOf(down, e, r), bOf(down, e, r), 1, data.subarray(e * F * D, (e + 1) * F * D));
    return;
  }
  const tmp = new Float32Array(D * F);
  for (let e = 0; e < E; e++) {
    const block = data.subarray(e * D * 2 * F, (e + 1) * D * 2 * F);
    for (const [p, parity] of [
      [gate, 0],
      [up, 1],
    ] as const) {
      // [D, F] = s·A[e]ᵀ·B[e]ᵀ, then into every other column.
      k.gemm(true, true, D, F, r, scale, aOf(p, e, r), bOf(p, e, r), 0, tmp);
      for (let d = 0; d < D; d++) for (let j = 0; j < F; j++) block[d * 2 * F + 2 * j + parity] += tmp[d * F + j];
    }
  }
}

/**
 * The per-expert layout's factors as PEFT LoRA pairs of each expert's gate_proj, up_proj and
 * down_proj ([r, in] and [out, r]), the shared factor repeated into every expert's pair.
 */
export function peftPerExpertTensors(layer: ExpertLoraLayer): Map<string, { shape: number[]; data: Float32Array }> {
  const { experts: E, rank: r } = layer;
  const out = new Map<string, { shape: number[]; data: Float32Array }>();
  for (let e = 0; e < E; e++)
    for (const [proj, p] of [
      ["gate_proj", layer.gate],
      ["up_proj", layer.up],
      ["down_proj", layer.down],
    ] as const) {
      const prefix = `base_model.model.${layer.module}.${e}.${proj}`;
      out.set(`${prefix}.lora_A.weight`, { shape: [r, p.inDim], data: Float32Array.from(aOf(p, e, r)) });
      out.set(`${prefix}.lora_B.weight`, { shape: [p.outDim, r], data: Float32Array.from(bOf(p, e, r)) });
    }
  return out;
}

/**
 * The fused layout's factors as PEFT 0.21's target_parameters LoRA (lora.ParamWrapper) of gate_up_proj
 * and down_proj. PEFT wraps the experts' parameters in registration order, so gate_up_proj's
 * wrapper is the inner one (`<module>.base_layer.lora_*`) and down_proj's the outer (`<module>.lora_*`).
 * A ParamWrapper's lora_A is [E·r, in] (expert-major) and lora_B [out, r·E] (expert-minor).
 */
export function peftExpertTensors(layer: ExpertLoraLayer): Map<string, { shape: number[]; data: Float32Array }> {
  const { experts: E, rank: r, gate, up, down } = layer;
  const [D, F] = [gate.inDim, gate.outDim];
  const R = 2 * r;
  const guA = new Float32Array(E * R * D);
  const guB = new Float32Array(2 * F * R * E);
  for (let e = 0; e < E; e++) {
    guA.set(aOf(gate, e, r), e * R * D);
    guA.set(aOf(up, e, r), e * R * D + r * D);
    const bg = bOf(gate, e, r);
    const bu = bOf(up, e, r);
    for (let j = 0; j < F; j++)
      for (let q = 0; q < r; q++) {
        guB[2 * j * R * E + q * E + e] = bg[j * r + q]!;
        guB[(2 * j + 1) * R * E + (r + q) * E + e] = bu[j * r + q]!;
      }
  }
  const dA = new Float32Array(E * r * F);
  const dB = new Float32Array(D * r * E);
  for (let e = 0; e < E; e++) {
    dA.set(aOf(down, e, r), e * r * F);
    const b = bOf(down, e, r);
    for (let d = 0; d < D; d++) for (let q = 0; q < r; q++) dB[d * r * E + q * E + e] = b[d * r + q]!;
  }
  const p = `base_model.model.${layer.module}`;
  return new Map([
    [`${p}.base_layer.lora_A.weight`, { shape: [E * R, D], data: guA }],
    [`${p}.base_layer.lora_B.weight`, { shape: [2 * F, R * E], data: guB }],
    [`${p}.lora_A.weight`, { shape: [E * r, F], data: dA }],
    [`${p}.lora_B.weight`, { shape: [D, r * E], data: dB }],
  ]);
}
