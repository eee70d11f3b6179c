// RoPE inverse frequencies (docs/numerics.md#rotary-embeddings, docs/numerics.md#llama3-rope-scaling), including llama3 scaling. Values are
// rounded through fp32 as torch computes them, so float32 runs match HF at long positions; the
// float64 mode uses the same (rounded) constants, which does not matter for gradient checks.
import type { ModelConfig } from "./config.ts";

/** `theta` overrides config.ropeTheta (Gemma's sliding layers); scaling applies either way. */
export function ropeInvFreq(config: ModelConfig, theta = config.ropeTheta): Float64Array {
  const d = config.headDim;
  const half = d / 2;
  const out = new Float64Array(half);
  for (let i = 0; i < half; i++) {
    const exponent = Math.fround((2 * i) / d);
    out[i] = Math.fround(1 / Math.fround(theta ** exponent));
  }
  const s = config.ropeScaling;
  if (s !== null) {
    const lowWavelen = s.originalMaxPositionEmbeddings / s.lowFreqFactor;
    const highWavelen = s.originalMaxPositionEmbeddings / s.highFreqFactor;
    for (let i = 0; i < half; i++) {
      const inv = out[i];
      const wavelen = (2 * Math.PI) / inv;
      let scaled: number;
      if (wavelen < highWavelen) scaled = inv;
      else if (wavelen > lowWavelen) scaled = inv / s.factor;
      else {
        const smooth = (s.originalMaxPositionEmbeddings / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
        scaled = (1 - smooth) * (inv / s.factor) + smooth * inv;
      }
      out[i] = Math.fround(scaled);
    }
  }
  return out;
}
