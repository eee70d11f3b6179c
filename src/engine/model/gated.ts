// The gated activation of an MLP or expert, act(gate) · up, with the family's activation:
// SiLU (SwiGLU, absent hiddenAct) or Gemma's GELU-tanh.
import type { FloatArray, Kernels } from "../kernels/types.ts";
import { GPT_OSS_GLU_ALPHA, type ModelConfig } from "./config.ts";

export function gatedForward(config: ModelConfig, k: Kernels, gate: FloatArray, up: FloatArray, out: FloatArray, n: number): void {
  if (config.hiddenAct === "gelu_tanh") k.gegluForward(gate, up, out, n);
  else k.swigluForward(gate, up, out, n);
}

/** dgate, dup (overwritten) from dout. */
export function gatedBackward(
  config: ModelConfig,
  k: Kernels,
  dout: FloatArray,
  gate: FloatArray,
  up: FloatArray,
  dgate: FloatArray,
  dup: FloatArray,
  n: number,
): void {
  if (config.hiddenAct === "gelu_tanh") k.gegluBackward(dout, gate, up, dgate, dup, n);
  else k.swigluBackward(dout, gate, up, dgate, dup, n);
}

/**
 * GPT-OSS's expert activation over n outputs (docs/numerics.md#gpt-oss): gateUp holds n
 * (gate, up) pairs side by side, out[j] = (clamp(up, −L, L) + 1)·g·σ(1.702·g) with g = min(gate, L).
 */
export function clampedSwigluForward(limit: number, gateUp: FloatArray, out: FloatArray, n: number): void {
  for (let j = 0; j < n; j++) {
    const g = Math.min(gateUp[2 * j], limit);
    const u = Math.min(Math.max(gateUp[2 * j + 1], -limit), limit);
    out[j] = (u + 1) * (g / (1 + Math.exp(-GPT_OSS_GLU_ALPHA * g)));
  }
}

/** dGateUp (overwritten, pairs as in the forward) from dout; a clamped input passes no gradient (torch's clamp). */
export function clampedSwigluBackward(limit: number, dout: FloatArray, gateUp: FloatArray, dGateUp: FloatArray, n: number): void {
  for (let j = 0; j < n; j++) {
    const gRaw = gateUp[2 * j];
    const uRaw = gateUp[2 * j + 1];
    const g = Math.min(gRaw, limit);
    const u = Math.min(Math.max(uRaw, -limit), limit);
    const s = 1 / (1 + Math.exp(-GPT_OSS_GLU_ALPHA * g));
    const glu = g * s;
    dGateUp[2 * j] = gRaw <= limit ? dout[j] * (u + 1) * (s + GPT_OSS_GLU_ALPHA * g * s * (1 - s)) : 0;
    dGateUp[2 * j + 1] = uRaw >= -limit && uRaw <= limit ? dout[j] * glu : 0;
  }
}
