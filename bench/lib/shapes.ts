// Model shapes the speed benchmarks use: the real architectures' dimensions (config.json of each
// model on the Hub), so a random-weight model costs what the real one costs.
import type { ModelConfig } from "../../src/engine/model/config.ts";

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

export function benchShape(name: string): ModelConfig {
  if (!(name in BENCH_SHAPES)) {
    throw new Error(`unknown shape "${name}"; expected one of ${Object.keys(BENCH_SHAPES).join(", ")}`);
  }
  return BENCH_SHAPES[name as BenchShapeName];
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
