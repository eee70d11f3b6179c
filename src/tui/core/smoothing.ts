// Exponential moving average with debiasing (TensorBoard style): early points are not dragged
// toward zero, and weight 0 returns the input.
import type { Values } from "./bucket.ts";

export function ema(values: Values, weight: number): number[] {
  const w = Math.min(Math.max(weight, 0), 0.999);
  const out: number[] = new Array(values.length);
  let acc = 0;
  let norm = 0;
  for (let i = 0; i < values.length; i++) {
    acc = acc * w + (1 - w) * values[i];
    norm = norm * w + (1 - w);
    out[i] = acc / norm;
  }
  return out;
}
