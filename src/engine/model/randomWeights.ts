// Random HF-named weights for a config: for tests, benchmarks and training from scratch.
// Linear weights, embeddings and biases ~ N(0, std²) (HF's initializer_range default 0.02);
// norm weights start at one, as in HF.
import { expectedTensorShapes, shapeSize, type ModelConfig } from "./config.ts";
import { RandomStream } from "./rng.ts";

export interface RandomWeightsOptions {
  /** Standard deviation of weights, embeddings and biases (default 0.02). */
  std?: number;
}

export function randomWeights(config: ModelConfig, seed: number, options: RandomWeightsOptions = {}): Map<string, Float32Array> {
  const std = options.std ?? 0.02;
  const out = new Map<string, Float32Array>();
  for (const [name, shape] of expectedTensorShapes(config)) {
    const data = new Float32Array(shapeSize(shape));
    if (name.endsWith("norm.weight")) data.fill(1);
    else new RandomStream(seed, name).fillNormal(data, std);
    out.set(name, data);
  }
  return out;
}
