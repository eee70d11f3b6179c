// The experts' LoRA of every mixture-of-experts family (Qwen3-MoE, GPT-OSS) in Tinker's
// shared-outer layout (docs/numerics.md#expert-lora): the factor on the hidden-size side is one
// matrix for all of a layer's experts, the other is per expert.
//   gate (w1), up (w3):  A [1, r, D] shared, B [E, F, r] per expert
//   down (w2):           A [E, r, F] per expert, B [1, D, r] shared
// Expert e's gate output gains s·(x·A₁ᵀ)·B₁[e]ᵀ, its up output s·(x·A₃ᵀ)·B₃[e]ᵀ (GPT-OSS: into the
// even and odd columns of its fused gate_up rows) and its down output s·(a·A₂[e]ᵀ)·B₂ᵀ.
// The base experts (16-bit views or MXFP4 widened per expert) are never merged: these are separate
// low-rank products, and the shared factors' products run once over all grouped rows of a layer.
// The training pass (moe.ts) and the sampler (sampling/forward.ts) both call these functions.
import type { FloatArray, Kernels } from "../kernels/types.ts";
import type { ModelConfig } from "./config.ts";

/** Tinker's names of a layer's expert factors: w1 gate, w3 up, w2 down. */
export const EXPERT_LORA_PROJECTIONS = ["w1", "w3", "w2"] as const;
export type ExpertLoraProjection = (typeof EXPERT_LORA_PROJECTIONS)[number];

/** The module path Tinker names a layer's expert factors under (`<module>.w1.lora_A.weight`, …). */
export function expertLoraModule(layer: number, proj: ExpertLoraProjection): string {
  return `model.layers.${layer}.mlp.experts.${proj}`;
}

/** Shapes of one layer's expert factors (rank r, E experts, hidden D, expert width F), lora_A then lora_B. */
export function expertLoraShapes(proj: ExpertLoraProjection, r: number, E: number, D: number, F: number): [number[], number[]] {
  return proj === "w2"
    ? [
        [E, r, F],
        [1, D, r],
      ]
    : [
        [1, r, D],
        [E, F, r],
      ];
}

const NAME_RE = /^base_model\.model\.model\.layers\.(\d+)\.mlp\.experts\.(w[123])\.lora_([AB])\.weight$/;

/** The shape of an expert factor by its checkpoint name, or null when the name is not one. */
export function expertLoraTensorShape(config: ModelConfig, rank: number, name: string): number[] | null {
  const moe = config.moe;
  const m = NAME_RE.exec(name);
  if (m === null || moe === undefined) return null;
  const [a, b] = expertLoraShapes(m[2] as ExpertLoraProjection, rank, moe.numExperts, config.hiddenSize, moe.expertIntermediateSize);
  return m[3] === "A" ? a : b;
}

/** A layer's expert factors (values) with rank and scale alpha / r. */
export interface ExpertLoraValues {
  readonly rank: number;
  readonly scale: number;
  readonly gateA: FloatArray;
  readonly gateB: FloatArray;
  readonly upA: FloatArray;
  readonly upB: FloatArray;
  readonly downA: FloatArray;
  readonly downB: FloatArray;
}

/** Their gradients (+=), laid out as the values. */
export type ExpertLoraGrads = Omit<ExpertLoraValues, "rank" | "scale">;

/** Expert e's block of a per-expert factor of `size` values per expert. */
function expertBlock(a: FloatArray, e: number, size: number): FloatArray {
  return a.subarray(e * size, (e + 1) * size);
}

/** hrGate, hrUp [A, r] = xg·A₁ᵀ, xg·A₃ᵀ for all A grouped rows xg [A, D]. */
export function expertLoraInputs(k: Kernels, f: ExpertLoraValues, xg: FloatArray, A: number, D: number, hrGate: FloatArray, hrUp: FloatArray): void {
  k.gemm(false, true, A, f.rank, D, 1, xg, f.gateA, 0, hrGate);
  k.gemm(false, true, A, f.rank, D, 1, xg, f.upA, 0, hrUp);
}

/**
 * Expert e's gate and up rows [n, F] += their deltas from its rows of hrGate, hrUp [n, r]. With
 * `up` null, `gate` is GPT-OSS's fused gate_up rows [n, 2F] (gate in the even columns, up in the
 * odd ones) and `tmp` holds n·F values (the rows' activation buffer, written only afterwards).
 */
export function expertLoraGateUp(
  k: Kernels,
  f: ExpertLoraValues,
  e: number,
  F: number,
  hrGate: FloatArray,
  hrUp: FloatArray,
  n: number,
  gate: FloatArray,
  up: FloatArray | null,
  tmp: FloatArray,
): void {
  const r = f.rank;
  if (up !== null) {
    k.gemm(false, true, n, F, r, f.scale, hrGate, expertBlock(f.gateB, e, F * r), 1, gate);
    k.gemm(false, true, n, F, r, f.scale, hrUp, expertBlock(f.upB, e, F * r), 1, up);
    return;
  }
  for (const [hr, B, parity] of [
    [hrGate, f.gateB, 0],
    [hrUp, f.upB, 1],
  ] as const) {
    k.gemm(false, true, n, F, r, f.scale, hr, expertBlock(B, e, F * r), 0, tmp);
    for (let i = 0; i < n; i++) {
      const o = i * 2 * F + parity;
      const t = i * F;
      for (let j = 0; j < F; j++) gate[o + 2 * j] += tmp[t + j];
    }
  }
}

/** Expert e's hrDown rows [n, r] = act·A₂[e]ᵀ for its activations act [n, F]. */
export function expertLoraDownInput(k: Kernels, f: ExpertLoraValues, e: number, F: number, act: FloatArray, n: number, hrDown: FloatArray): void {
  k.gemm(false, true, n, f.rank, F, 1, act, expertBlock(f.downA, e, f.rank * F), 0, hrDown);
}

/** y [A, D] += s·hrDown·B₂ᵀ over all grouped rows (B₂ is shared, so one product for every expert). */
export function expertLoraDownOutput(k: Kernels, f: ExpertLoraValues, hrDown: FloatArray, A: number, D: number, y: FloatArray): void {
  k.gemm(false, true, A, D, f.rank, f.scale, hrDown, f.downB, 1, y);
}

/** From dy [A, D] (the grouped rows' output gradients): dhrDown [A, r] = s·dy·B₂ and B₂'s gradient. */
export function expertLoraDownOutputBackward(
  k: Kernels,
  f: ExpertLoraValues,
  g: ExpertLoraGrads,
  dy: FloatArray,
  hrDown: FloatArray,
  A: number,
  D: number,
  dhrDown: FloatArray,
): void {
  k.gemm(false, false, A, f.rank, D, f.scale, dy, f.downB, 0, dhrDown);
  k.gemm(true, false, D, f.rank, A, f.scale, dy, hrDown, 1, g.downB);
}

/** Expert e: dact [n, F] += dhrDown·A₂[e], and A₂[e]'s gradient from its activations act [n, F]. */
export function expertLoraDownInputBackward(
  k: Kernels,
  f: ExpertLoraValues,
  g: ExpertLoraGrads,
  e: number,
  F: number,
  act: FloatArray,
  dhrDown: FloatArray,
  n: number,
  dact: FloatArray,
): void {
  const size = f.rank * F;
  k.gemm(false, false, n, F, f.rank, 1, dhrDown, expertBlock(f.downA, e, size), 1, dact);
  k.gemm(true, false, f.rank, F, n, 1, dhrDown, act, 1, expertBlock(g.downA, e, size));
}

/**
 * Expert e, from its gate and up gradient rows dGate, dUp [n, F]: B₁[e]'s and B₃[e]'s gradients and
 * dhrGate, dhrUp [n, r] (overwritten). With `dUp` null, `dGate` is GPT-OSS's interleaved gate_up
 * gradient [n, 2F] and `tmp` (n·F values) de-interleaves it.
 */
export function expertLoraGateUpBackward(
  k: Kernels,
  f: ExpertLoraValues,
  g: ExpertLoraGrads,
  e: number,
  F: number,
  hrGate: FloatArray,
  hrUp: FloatArray,
  dGate: FloatArray,
  dUp: FloatArray | null,
  n: number,
  tmp: FloatArray,
  dhrGate: FloatArray,
  dhrUp: FloatArray,
): void {
  const r = f.rank;
  for (const [hr, B, gB, dhr, parity] of [
    [hrGate, f.gateB, g.gateB, dhrGate, 0],
    [hrUp, f.upB, g.upB, dhrUp, 1],
  ] as const) {
    let d: FloatArray;
    if (dUp !== null) d = parity === 0 ? dGate : dUp;
    else {
      for (let i = 0; i < n; i++) {
        const o = i * 2 * F + parity;
        const t = i * F;
        for (let j = 0; j < F; j++) tmp[t + j] = dGate[o + 2 * j];
      }
      d = tmp;
    }
    k.gemm(true, false, F, r, n, f.scale, d, hr, 1, expertBlock(gB, e, F * r));
    k.gemm(false, false, n, r, F, f.scale, d, expertBlock(B, e, F * r), 0, dhr);
  }
}

/** dxg [A, D] += dhrGate·A₁ + dhrUp·A₃, and A₁'s and A₃'s gradients, over all grouped rows xg [A, D]. */
export function expertLoraInputsBackward(
  k: Kernels,
  f: ExpertLoraValues,
  g: ExpertLoraGrads,
  xg: FloatArray,
  dhrGate: FloatArray,
  dhrUp: FloatArray,
  A: number,
  D: number,
  dxg: FloatArray,
): void {
  const r = f.rank;
  k.gemm(false, false, A, D, r, 1, dhrGate, f.gateA, 1, dxg);
  k.gemm(false, false, A, D, r, 1, dhrUp, f.upA, 1, dxg);
  k.gemm(true, false, r, D, A, 1, dhrGate, xg, 1, g.gateA);
  k.gemm(true, false, r, D, A, 1, dhrUp, xg, 1, g.upA);
}
