// Drawing the next token of many rows of logits at once: the native kernel (sampleRows) for rows
// without top-k/top-p truncation, which is what RL sampling uses, and choose.ts for the rest or
// when the kernels have no sampleRows (the reference kernels, whose semantics choose.ts defines).
// The buffers are reused from step to step.
import type { Kernels } from "../kernels/types.ts";
import { chooseToken, type ChooseParams } from "./choose.ts";

export class TokenDrawer {
  private readonly temps: Float32Array;
  private readonly uniforms: Float64Array;
  private readonly params: (ChooseParams | null)[];
  readonly tokens: Int32Array;
  readonly logprobs: Float64Array;

  constructor(readonly capacity: number) {
    this.temps = new Float32Array(capacity);
    this.uniforms = new Float64Array(capacity);
    this.params = new Array<ChooseParams | null>(capacity).fill(null);
    this.tokens = new Int32Array(capacity);
    this.logprobs = new Float64Array(capacity);
  }

  /** Row i will be drawn with these parameters and the uniform number u. */
  set(i: number, params: ChooseParams, u: number): void {
    this.params[i] = params;
    this.temps[i] = params.temperature;
    this.uniforms[i] = u;
  }

  /** Draws rows 0..n-1 of logits [n, V] into tokens / logprobs. */
  run(k: Kernels, logits: Float32Array, V: number, n: number): void {
    let plain = 0;
    for (let i = 0; i < n; i++) if (!truncates(this.params[i] as ChooseParams, V)) plain++;
    const native = k.sampleRows !== undefined && plain > 0;
    if (native) k.sampleRows?.(logits, n, V, this.temps, this.uniforms, this.tokens, this.logprobs);
    if (native && plain === n) return;
    for (let i = 0; i < n; i++) {
      const p = this.params[i] as ChooseParams;
      if (native && !truncates(p, V)) continue;
      const c = chooseToken(logits.subarray(i * V, (i + 1) * V), p, this.uniforms[i]);
      this.tokens[i] = c.token;
      this.logprobs[i] = c.logprob;
    }
  }
}

function truncates(p: ChooseParams, V: number): boolean {
  return (p.topK >= 1 && p.topK < V) || p.topP < 1;
}
