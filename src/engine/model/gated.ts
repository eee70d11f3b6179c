// The gated activation of an MLP or expert, act(gate) · up, with the family's activation:
// SiLU (SwiGLU, absent hiddenAct) or Gemma's GELU-tanh.
import type { FloatArray, Kernels } from "../kernels/types.ts";
import type { ModelConfig } from "./config.ts";

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
