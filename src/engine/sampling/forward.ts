// The sampler's forward pass over a KV cache (engine-numerics §7.4), with LoRA unmerged. One call
// takes any mix of tokens: a prompt being prefilled (several positions of one slot) and one new
// token for each of many decoding sequences (one position in each of many slots). All K/V of the
// call are written to the cache first, then every token attends to positions 0..p of its slot,
// which equals causal attention over each sequence.
import type { Kernels } from "../kernels/types.ts";
import type { ModelConfig } from "../model/config.ts";
import { ropeInvFreq } from "../model/rope.ts";
import { project, type InferenceWeights } from "./weights.ts";

/** Per layer K (after RoPE) and V as [slots, Hkv, maxLen, d], the layout attentionDecodeSlots reads. */
export class KvCache {
  readonly k: Float32Array[] = [];
  readonly v: Float32Array[] = [];
  private readonly perSlot: number;

  constructor(readonly config: ModelConfig, readonly slots: number, readonly maxLen: number) {
    this.perSlot = config.numKvHeads * maxLen * config.headDim;
    for (let l = 0; l < config.numLayers; l++) {
      this.k.push(new Float32Array(slots * this.perSlot));
      this.v.push(new Float32Array(slots * this.perSlot));
    }
  }

  /** Copies positions 0..length-1 of one slot into another (a prompt shared by several samples). */
  copySlot(from: number, to: number, length: number): void {
    const { numKvHeads: Hkv, headDim: d } = this.config;
    for (let l = 0; l < this.k.length; l++) {
      for (const arr of [this.k[l], this.v[l]]) {
        for (let g = 0; g < Hkv; g++) {
          const src = (from * Hkv + g) * this.maxLen * d;
          arr.copyWithin((to * Hkv + g) * this.maxLen * d, src, src + length * d);
        }
      }
    }
  }

  /** A cache with more slots and/or room, holding the first lengths[s] positions of each old slot. */
  grown(slots: number, maxLen: number, lengths: ArrayLike<number>): KvCache {
    const out = new KvCache(this.config, Math.max(slots, this.slots), Math.max(maxLen, this.maxLen));
    const { numKvHeads: Hkv, headDim: d } = this.config;
    for (let l = 0; l < this.k.length; l++) {
      for (const [src, dst] of [[this.k[l], out.k[l]], [this.v[l], out.v[l]]] as const) {
        for (let s = 0; s < this.slots; s++) {
          const len = lengths[s] ?? 0;
          if (len === 0) continue;
          for (let g = 0; g < Hkv; g++) {
            const a = (s * Hkv + g) * this.maxLen * d;
            dst.set(src.subarray(a, a + len * d), (s * Hkv + g) * out.maxLen * d);
          }
        }
      }
    }
    return out;
  }

  get bytes(): number {
    return 2 * this.k.length * this.slots * this.perSlot * 4;
  }
}

/** Everything a forward call needs besides the tokens. */
export interface InferenceModel {
  weights: InferenceWeights;
  kernels: Kernels;
  invFreq: Float32Array;
}

export function inferenceModel(weights: InferenceWeights, kernels: Kernels): InferenceModel {
  return { weights, kernels, invFreq: Float32Array.from(ropeInvFreq(weights.config)) };
}

function addBias(k: Kernels, y: Float32Array, bias: Float32Array | null, rows: number, out: number, ones: Float32Array): void {
  if (bias !== null) k.gemm(false, false, rows, out, 1, 1, ones, bias, 1, y);
}

/**
 * Runs tokens[i] at positions[i] of cache slot slots[i] through the decoder, writing their K/V to
 * the cache, and returns the final-normed hidden states of the rows in `rows` ([rows.length, D]).
 * Positions of one slot must continue what the cache holds; the caller (the scheduler) owns that.
 */
export function forwardHidden(m: InferenceModel, cache: KvCache, tokens: Int32Array, positions: Int32Array, slots: Int32Array, rows: Int32Array): Float32Array {
  const { weights: w, kernels: k } = m;
  const c = w.config;
  const { hiddenSize: D, intermediateSize: F, numHeads: H, numKvHeads: Hkv, headDim: d, rmsNormEps: eps } = c;
  const n = tokens.length;
  const qw = H * d;
  const kw = Hkv * d;
  const maxLen = cache.maxLen;
  const x = new Float32Array(n * D);
  const xn = new Float32Array(n * D);
  const tmp = new Float32Array(n * D);
  const rstd = new Float32Array(n * Math.max(H, 1));
  const q = new Float32Array(n * qw);
  const kk = new Float32Array(n * kw);
  const vv = new Float32Array(n * kw);
  const attn = new Float32Array(n * qw);
  const gate = new Float32Array(n * F);
  const up = new Float32Array(n * F);
  const ones = new Float32Array(n).fill(1);
  const qRaw = c.qkNorm ? new Float32Array(n * qw) : null;
  const kRaw = c.qkNorm ? new Float32Array(n * kw) : null;
  const loraScratch = new Float32Array(n * w.maxRank);
  const lens = new Int32Array(n);
  for (let i = 0; i < n; i++) lens[i] = positions[i] + 1;
  const scale = 1 / Math.sqrt(d);

  k.embeddingForward(w.embed, tokens, x, n, D);
  for (let l = 0; l < c.numLayers; l++) {
    const p = w.layers[l];
    k.rmsnormForward(x, p.inputNorm, xn, rstd, n, D, eps);
    project(k, p.q, xn, n, qw, D, qRaw ?? q, loraScratch);
    addBias(k, qRaw ?? q, p.qBias, n, qw, ones);
    project(k, p.k, xn, n, kw, D, kRaw ?? kk, loraScratch);
    addBias(k, kRaw ?? kk, p.kBias, n, kw, ones);
    project(k, p.v, xn, n, kw, D, vv, loraScratch);
    addBias(k, vv, p.vBias, n, kw, ones);
    if (qRaw !== null && kRaw !== null && p.qNorm !== null && p.kNorm !== null) {
      k.rmsnormForward(qRaw, p.qNorm, q, rstd, n * H, d, eps);
      k.rmsnormForward(kRaw, p.kNorm, kk, rstd, n * Hkv, d, eps);
    }
    k.rope(q, positions, m.invFreq, n, H, d, false);
    k.rope(kk, positions, m.invFreq, n, Hkv, d, false);
    const kc = cache.k[l];
    const vc = cache.v[l];
    for (let i = 0; i < n; i++) {
      for (let g = 0; g < Hkv; g++) {
        const dst = ((slots[i] * Hkv + g) * maxLen + positions[i]) * d;
        const src = i * kw + g * d;
        kc.set(kk.subarray(src, src + d), dst);
        vc.set(vv.subarray(src, src + d), dst);
      }
    }
    k.attentionDecodeSlots(q, kc, vc, attn, slots, lens, n, H, Hkv, d, maxLen, scale);
    project(k, p.o, attn, n, D, qw, tmp, loraScratch);
    addBias(k, tmp, p.oBias, n, D, ones);
    k.add(x, tmp, x, n * D);
    k.rmsnormForward(x, p.postNorm, xn, rstd, n, D, eps);
    project(k, p.gate, xn, n, F, D, gate, loraScratch);
    project(k, p.up, xn, n, F, D, up, loraScratch);
    k.swigluForward(gate, up, gate, n * F);
    project(k, p.down, gate, n, D, F, tmp, loraScratch);
    k.add(x, tmp, x, n * D);
  }
  const r = rows.length;
  const picked = new Float32Array(r * D);
  for (let i = 0; i < r; i++) picked.set(x.subarray(rows[i] * D, (rows[i] + 1) * D), i * D);
  const out = new Float32Array(r * D);
  k.rmsnormForward(picked, w.finalNorm, out, new Float32Array(Math.max(r, 1)), r, D, eps);
  return out;
}

/** logits [rows, V] of final-normed hidden states [rows, D]. */
export function headLogits(m: InferenceModel, hidden: Float32Array, rows: number, out?: Float32Array): Float32Array {
  const { hiddenSize: D, vocabSize: V } = m.weights.config;
  const logits = out ?? new Float32Array(rows * V);
  if (rows > 0) project(m.kernels, m.weights.head, hidden, rows, V, D, logits, new Float32Array(rows * m.weights.maxRank));
  return logits;
}
