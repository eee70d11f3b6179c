// RoPE inverse frequencies (docs/numerics.md#rotary-embeddings, docs/numerics.md#llama3-rope-scaling), including llama3 and YaRN scaling. Values are
// rounded through fp32 as torch computes them, so float32 runs match HF at long positions; the
// float64 mode uses the same (rounded) constants, which does not matter for gradient checks.
import type { FloatArray, Kernels } from "../kernels/types.ts";
import type { ModelConfig, YarnRopeScaling } from "./config.ts";

const f = Math.fround;

/**
 * transformers' _compute_yarn_parameters: each frequency blends its interpolated (÷ factor) and
 * extrapolated values by a ramp over the dimensions between the correction range's ends (computed
 * in double precision as Python does; the tensors in fp32 as torch does).
 */
function yarnInvFreq(s: YarnRopeScaling, theta: number, d: number, out: Float64Array): void {
  const half = d / 2;
  const correctionDim = (rotations: number): number => (d * Math.log(s.originalMaxPositionEmbeddings / (rotations * 2 * Math.PI))) / (2 * Math.log(theta));
  let low = correctionDim(s.betaFast);
  let high = correctionDim(s.betaSlow);
  if (s.truncate) {
    low = Math.floor(low);
    high = Math.ceil(high);
  }
  low = Math.max(low, 0);
  high = Math.min(high, d - 1);
  if (low === high) high += 0.001;
  for (let i = 0; i < half; i++) {
    const posFreq = f(theta ** f((2 * i) / d));
    const extrapolation = f(1 / posFreq);
    const interpolation = f(1 / f(s.factor * posFreq));
    const ramp = Math.min(1, Math.max(0, f(f(i - f(low)) / f(high - low))));
    const extraFactor = f(1 - ramp);
    out[i] = f(f(interpolation * f(1 - extraFactor)) + f(extrapolation * extraFactor));
  }
}

/** `theta` overrides config.ropeTheta (Gemma's sliding layers); scaling applies either way. */
export function ropeInvFreq(config: ModelConfig, theta = config.ropeTheta): Float64Array {
  // Partial rotary (Qwen3.5): the frequencies span the rotated width only.
  const d = config.rotaryDim ?? config.headDim;
  const half = d / 2;
  const out = new Float64Array(half);
  for (let i = 0; i < half; i++) {
    const exponent = Math.fround((2 * i) / d);
    out[i] = Math.fround(1 / Math.fround(theta ** exponent));
  }
  const s = config.ropeScaling;
  if (s !== null && s.type === "yarn") yarnInvFreq(s, theta, d, out);
  else if (s !== null) {
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

/**
 * k.rope over the first `rotaryDim` dims of each head of x [tokens, nHeads·headDim] (all of them
 * when rotaryDim = headDim); the rest of each head passes through (Qwen3.5's partial rotary).
 */
export function applyRope(
  k: Kernels,
  x: FloatArray,
  positions: Int32Array,
  invFreq: FloatArray,
  tokens: number,
  nHeads: number,
  headDim: number,
  rotaryDim: number,
  inverse: boolean,
): void {
  if (rotaryDim === headDim) {
    k.rope(x, positions, invFreq, tokens, nHeads, headDim, inverse);
    return;
  }
  const rows = tokens * nHeads;
  const part = x instanceof Float64Array ? new Float64Array(rows * rotaryDim) : new Float32Array(rows * rotaryDim);
  for (let r = 0; r < rows; r++) part.set(x.subarray(r * headDim, r * headDim + rotaryDim), r * rotaryDim);
  k.rope(part, positions, invFreq, tokens, nHeads, rotaryDim, inverse);
  for (let r = 0; r < rows; r++) x.set(part.subarray(r * rotaryDim, (r + 1) * rotaryDim), r * headDim);
}
