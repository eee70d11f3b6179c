// Shared fixtures for the model tests: tiny configs, float64 models with non-trivial weights,
// batches, and a finite-difference gradient checker.
import assert from "node:assert/strict";
import { mulberry32 } from "../../../src/random/seeds.ts";
import { referenceKernels } from "../../../src/engine/kernels/reference.ts";
import type { ModelConfig } from "../../../src/engine/model/config.ts";
import { EngineModel, type SequenceInput, type TrainableSetup } from "../../../src/engine/model/model.ts";
import type { LossFnName } from "../../../src/tinker/types.ts";

/** Seeded uniform numbers in [0, 1) for test data. */
export const makeRng = mulberry32;

/** head_dim (4) * heads (4) != hidden (12) on purpose, and GQA with 2 query heads per KV head. */
export function tinyConfig(modelType: ModelConfig["modelType"], overrides: Partial<ModelConfig> = {}): ModelConfig {
  return {
    modelType,
    vocabSize: 23,
    hiddenSize: 12,
    intermediateSize: 20,
    numLayers: 2,
    numHeads: 4,
    numKvHeads: 2,
    headDim: 4,
    rmsNormEps: 1e-5,
    ropeTheta: 10000,
    ropeScaling: null,
    maxPositionEmbeddings: 64,
    tieWordEmbeddings: false,
    attentionBias: modelType === "qwen2",
    qkNorm: modelType === "qwen3" || modelType === "qwen3_moe" || modelType === "olmo2",
    ...(modelType === "olmo2" ? { qkNormScope: "projection" as const, normPlacement: "post" as const } : {}),
    ...(modelType === "gemma3_text" ? GEMMA3_TINY : {}),
    // SmolLM3: layer 1 has no rotary embedding and slides over 3 keys.
    // Phi-3: fused qkv_proj and gate_up_proj, every layer sliding over 3 keys.
    ...(modelType === "phi3" ? { fusedProjections: true, slidingLayers: [true, true], slidingWindow: 3 } : {}),
    // Qwen3-MoE: layer 0 routes each token to 2 of 3 experts (every expert gets tokens), layer 1 is dense.
    ...(modelType === "qwen3_moe"
      ? { moe: { numExperts: 3, topK: 2, normTopkProb: true, expertIntermediateSize: 6, sparseLayers: [true, false], routerAuxLossCoef: 0.001 } }
      : {}),
    ...(modelType === "gpt_oss" ? GPT_OSS_TINY : {}),
    ...(modelType === "smollm3" ? { ropeLayers: [true, false], slidingLayers: [false, true], slidingWindow: 3, tieWordEmbeddings: true } : {}),
    ...(modelType === "qwen3_5_text" ? QWEN35_TINY : {}),
    ...overrides,
  };
}

/**
 * Qwen3.5 in miniature: layer 0 is a Gated DeltaNet (one key head shared by two value heads, a
 * 3-tap conv), layer 1 gated full attention with q/k norms and RoPE on half of each head; (1 + w) norms.
 */
const QWEN35_TINY: Partial<ModelConfig> = {
  qkNorm: true,
  normOffset: true,
  attnOutputGate: true,
  rotaryDim: 2,
  linearAttention: { layers: [true, false], convKernel: 3, numKeyHeads: 1, numValueHeads: 2, keyHeadDim: 3, valueHeadDim: 2 },
};

/**
 * Gemma 3 in miniature: layer 0 slides over 2 keys with its own RoPE base, layer 1 is global;
 * (1 + w) sandwich norms, GELU-tanh MLP, scaled embeddings, query_pre_attn_scalar != head_dim.
 */
const GEMMA3_TINY: Partial<ModelConfig> = {
  qkNorm: true,
  normPlacement: "sandwich",
  normOffset: true,
  hiddenAct: "gelu_tanh",
  embedScale: Math.fround(Math.sqrt(12)),
  queryPreAttnScalar: 6,
  slidingLayers: [true, false],
  slidingWindow: 2,
  ropeThetaLocal: 100,
  tieWordEmbeddings: true,
};

/**
 * GPT-OSS in miniature: sinks, biases, layer 0 sliding over 3 keys, YaRN (head_dim 8 puts the
 * ramp across the frequencies), two of three fused experts per token, and a clamp at 0.5 instead
 * of 7 so that both clamps cut values of the test's small activations.
 */
const GPT_OSS_TINY: Partial<ModelConfig> = {
  headDim: 8,
  attentionBias: true,
  attentionSinks: true,
  slidingLayers: [true, false],
  slidingWindow: 3,
  ropeTheta: 1000,
  ropeScaling: {
    type: "yarn",
    factor: 4,
    betaFast: 8,
    betaSlow: 1,
    originalMaxPositionEmbeddings: 16,
    truncate: false,
    attentionFactor: 0.1 * Math.log(4) + 1,
  },
  moe: {
    numExperts: 3,
    topK: 2,
    normTopkProb: true,
    expertIntermediateSize: 6,
    sparseLayers: [true, true],
    routerAuxLossCoef: 0.001,
    gptOss: { swigluLimit: 0.5 },
  },
};

/**
 * llama3 rope scaling with head_dim 8 and theta 100: wavelengths 6.3, 19.9, 62.8, 199 against
 * bands at 8 and 32, so one frequency is kept, one smoothed and two divided by the factor.
 */
export const LLAMA3_SCALED: ModelConfig = tinyConfig("llama", {
  headDim: 8,
  ropeTheta: 100,
  ropeScaling: { type: "llama3", factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 32 },
});

/** Random weights large enough that every nonlinearity matters, and norms away from one. */
export function tinyWeights(config: ModelConfig, seed = 1): Map<string, Float32Array> {
  const w = EngineModel.randomWeights(config, seed, { std: 0.35 });
  const rng = makeRng(seed + 100);
  for (const [name, data] of w) {
    if (name.endsWith("norm.weight")) for (let i = 0; i < data.length; i++) data[i] = 1 + 0.4 * (rng() - 0.5);
  }
  return w;
}

export const LORA_ALL: Extract<TrainableSetup, { mode: "lora" }> = { mode: "lora", rank: 2, seed: 7, trainAttn: true, trainMlp: true, trainUnembed: true };
export const FULL: TrainableSetup = { mode: "full", seed: 7 };

export function makeModel64(config: ModelConfig, setup: TrainableSetup, seed = 1): EngineModel {
  return EngineModel.create(config, tinyWeights(config, seed), setup, referenceKernels, { dtype: "float64" });
}

/** Gives every LoRA B a random value so A gets gradient too. */
export function randomizeTrainable(model: EngineModel, seed: number, scale = 0.02): void {
  const rng = makeRng(seed);
  const t = model.trainableTensors();
  for (const [name, data] of t) {
    if (name.includes("lora_B")) for (let i = 0; i < data.length; i++) data[i] = (rng() * 2 - 1) * scale;
  }
  model.loadTrainableTensors(t);
}

/** Two datums (5 and 3 tokens) with every loss input any built-in loss may need. */
export function tinyBatch(config: ModelConfig, seed = 3, lengths: number[] = [5, 3]): SequenceInput[] {
  const rng = makeRng(seed);
  const V = config.vocabSize;
  return lengths.map((n) => {
    const tokens = Int32Array.from({ length: n }, () => Math.floor(rng() * V));
    const targets = Int32Array.from({ length: n }, () => Math.floor(rng() * V));
    return {
      inputTokens: tokens,
      lossInputs: {
        target_tokens: targets,
        weights: Float32Array.from({ length: n }, () => 0.5 + rng()),
        advantages: Float32Array.from({ length: n }, () => rng() * 2 - 1),
        logprobs: Float32Array.from({ length: n }, () => -3 - rng()),
      },
    };
  });
}

/** Keeps only the loss inputs a loss accepts. */
export function inputsFor(batch: SequenceInput[], loss: LossFnName, keepWeights = false): SequenceInput[] {
  const keys = loss === "cross_entropy" ? ["target_tokens", "weights"] : ["target_tokens", "logprobs", "advantages", ...(keepWeights ? ["weights"] : [])];
  return batch.map((d) => ({
    inputTokens: d.inputTokens,
    lossInputs: Object.fromEntries(keys.map((k) => [k, d.lossInputs[k]])),
  }));
}

export interface GradCheckOptions {
  loss: LossFnName;
  lossConfig?: Record<string, number>;
  /** Only tensors whose name passes this filter. */
  filter?: (name: string) => boolean;
  /** Entries checked one by one per tensor (in addition to one random direction). */
  entries?: number;
  h?: number;
  rtol?: number;
}

/**
 * Compares the model's accumulated gradients with central finite differences of loss:sum, per
 * tensor: along one random direction and for a few single entries. Returns the tensors checked.
 */
export function gradCheck(model: EngineModel, batch: SequenceInput[], opts: GradCheckOptions): string[] {
  const { loss, lossConfig } = opts;
  const h = opts.h ?? 1e-6;
  // Truncation error is O(h²) and rounding error O(1e-16·|loss|/h); real bugs are O(1) relative.
  const rtol = opts.rtol ?? 1e-5;
  const atol = 1e-8;
  const entries = opts.entries ?? 2;
  const f = (): number => model.forwardBackward(batch, loss, lossConfig, false).lossSum;
  model.zeroGrad();
  model.forwardBackward(batch, loss, lossConfig, true);
  const rng = makeRng(99);
  const checked: string[] = [];
  for (const t of model.parameters()) {
    if (opts.filter && !opts.filter(t.name)) continue;
    const grad = t.grad;
    assert.ok(grad !== null, `${t.name} has no gradient buffer`);
    const data = t.data;
    const dir = Float64Array.from({ length: data.length }, () => rng() * 2 - 1);
    let analytic = 0;
    for (let i = 0; i < data.length; i++) analytic += grad[i] * dir[i];
    const orig = Float64Array.from(data);
    for (let i = 0; i < data.length; i++) data[i] = orig[i] + h * dir[i];
    const fp = f();
    for (let i = 0; i < data.length; i++) data[i] = orig[i] - h * dir[i];
    const fm = f();
    data.set(orig);
    const numeric = (fp - fm) / (2 * h);
    assert.ok(Math.abs(numeric) > 1e-7, `${t.name}: the loss does not depend on this tensor (numeric derivative ${numeric}); the check would be vacuous`);
    const scale = Math.max(Math.abs(numeric), Math.abs(analytic));
    assert.ok(
      Math.abs(numeric - analytic) <= rtol * scale + atol,
      `${t.name}: directional derivative analytic ${analytic} vs numeric ${numeric} (rel diff ${Math.abs(numeric - analytic) / scale})`,
    );
    for (let e = 0; e < Math.min(entries, data.length); e++) {
      const i = Math.floor(rng() * data.length);
      data[i] = orig[i] + h;
      const p = f();
      data[i] = orig[i] - h;
      const m = f();
      data[i] = orig[i];
      const num = (p - m) / (2 * h);
      const sc = Math.max(Math.abs(num), Math.abs(grad[i]));
      assert.ok(Math.abs(num - grad[i]) <= rtol * sc + atol, `${t.name}[${i}]: analytic ${grad[i]} vs numeric ${num}`);
    }
    checked.push(t.name);
  }
  return checked;
}
