// Incremental decoding over a KV cache (docs/numerics.md#kv-cache), for the sampler. The cache keeps,
// per layer, K (after RoPE) and V as [slots, Hkv, maxTokens, d], the layout of the kernels'
// attentionDecode. A call may prefill several tokens of a slot at once: all of the call's K/V are
// written first, then each token attends to its slot's positions 0..p, which equals causal
// attention over the sequence. The LoRA path is the same as in training. Linear-attention layers
// (Qwen3.5) keep each slot's recurrent state instead (deltanet.ts's recurrentTokens).
import type { FloatArray } from "../kernels/types.ts";
import { allocActivations } from "./activations.ts";
import { attentionOutputForward, qkvForward } from "./attention.ts";
import { layerIsLinear } from "./config.ts";
import { layerContext } from "./context.ts";
import { linearAttentionBlockDecode, linearDims } from "./deltanet.ts";
import { linearForward } from "./linear.ts";
import { mlpBlockForward } from "./mlp.ts";
import { batchContext, scaleEmbeddings, type PassInputs } from "./pass.ts";
import { allocFloat } from "./tensor.ts";

export interface KvCache {
  readonly maxTokens: number;
  readonly slots: number;
  readonly k: FloatArray[];
  readonly v: FloatArray[];
  /** Linear-attention layers: per slot the conv window and delta-rule state, [slots, per] (empty elsewhere). */
  readonly conv: FloatArray[];
  readonly delta: FloatArray[];
  /** Tokens held per slot. */
  readonly lengths: Int32Array;
}

export function createKvCache(m: PassInputs, maxTokens: number, slots: number): KvCache {
  if (!Number.isInteger(maxTokens) || maxTokens < 1) throw new Error(`createKvCache: maxTokens must be a positive integer, got ${maxTokens}`);
  if (maxTokens > m.config.maxPositionEmbeddings) {
    throw new Error(`createKvCache: maxTokens ${maxTokens} exceeds the model's max_position_embeddings (${m.config.maxPositionEmbeddings})`);
  }
  if (!Number.isInteger(slots) || slots < 1) throw new Error(`createKvCache: batch must be a positive integer, got ${slots}`);
  const size = slots * m.config.numKvHeads * maxTokens * m.config.headDim;
  const k: FloatArray[] = [];
  const v: FloatArray[] = [];
  const conv: FloatArray[] = [];
  const delta: FloatArray[] = [];
  const lin = m.config.linearAttention;
  const d = lin !== undefined ? linearDims(lin) : null;
  for (let l = 0; l < m.config.numLayers; l++) {
    const linear = d !== null && layerIsLinear(m.config, l);
    k.push(allocFloat(m.dtype, linear ? 0 : size));
    v.push(allocFloat(m.dtype, linear ? 0 : size));
    conv.push(allocFloat(m.dtype, linear && d !== null ? slots * d.C * (d.K - 1) : 0));
    delta.push(allocFloat(m.dtype, linear && d !== null ? slots * d.Hv * d.dk * d.dv : 0));
  }
  return { maxTokens, slots, k, v, conv, delta, lengths: new Int32Array(slots) };
}

/** Copies the first `length` positions of one slot into another (e.g. a prompt for several samples). */
export function copyKvSlot(cache: KvCache, from: number, to: number, length: number): void {
  if (length > cache.lengths[from]) throw new Error(`copyKvSlot: slot ${from} holds ${cache.lengths[from]} tokens, cannot copy ${length}`);
  for (let l = 0; l < cache.k.length; l++) {
    // A recurrent state holds all of its slot's tokens: it is copied whole.
    for (const arr of [cache.k[l], cache.v[l], cache.conv[l], cache.delta[l]]) {
      const per = arr.length / cache.slots;
      arr.copyWithin(to * per, from * per, (from + 1) * per);
    }
  }
  cache.lengths[to] = length;
}

function validate(m: PassInputs, cache: KvCache, tokens: Int32Array, positions: Int32Array, slots: Int32Array, logitRows: Int32Array): void {
  const n = tokens.length;
  if (positions.length !== n || slots.length !== n) {
    throw new Error(`forwardIncremental: tokens (${n}), positions (${positions.length}) and cacheSlots (${slots.length}) must have the same length`);
  }
  const next = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const tok = tokens[i];
    if (tok < 0 || tok >= m.config.vocabSize)
      throw new Error(`forwardIncremental: tokens[${i}] = ${tok} is outside the vocabulary (size ${m.config.vocabSize})`);
    const s = slots[i];
    if (s < 0 || s >= cache.slots) throw new Error(`forwardIncremental: cacheSlots[${i}] = ${s} is outside 0..${cache.slots - 1}`);
    const p = positions[i];
    if (p < 0 || p >= cache.maxTokens) throw new Error(`forwardIncremental: positions[${i}] = ${p} is outside the cache (0..${cache.maxTokens - 1})`);
    const expected = next.get(s);
    if (expected === undefined ? p > cache.lengths[s] : p !== expected) {
      throw new Error(
        `forwardIncremental: positions[${i}] = ${p} for slot ${s} leaves a gap or reorders (expected ${expected ?? `at most ${cache.lengths[s]}`})`,
      );
    }
    next.set(s, p + 1);
  }
  for (let i = 0; i < logitRows.length; i++) {
    if (logitRows[i] < 0 || logitRows[i] >= n) throw new Error(`forwardIncremental: logitRows[${i}] = ${logitRows[i]} is not a token index (0..${n - 1})`);
  }
}

/**
 * Runs `tokens` (token i at positions[i] of cache slot cacheSlots[i]) through the model, appending
 * their K/V to the cache, and returns logits [logitRows.length, V] (all rows by default).
 */
export function forwardIncremental(
  m: PassInputs,
  cache: KvCache,
  tokens: Int32Array,
  positions: Int32Array,
  slots: Int32Array,
  logitRows?: Int32Array,
): FloatArray {
  const n = tokens.length;
  const rowsWanted = logitRows ?? Int32Array.from({ length: n }, (_, i) => i);
  validate(m, cache, tokens, positions, slots, rowsWanted);
  const { k, config, params, dtype } = m;
  const { hiddenSize: D, vocabSize: V, numHeads: H, numKvHeads: Hkv, headDim: d, numLayers: L } = config;
  if (n === 0) return allocFloat(dtype, 0);
  const seqStarts = Int32Array.from([0, n]);
  const c0 = batchContext(m, n, positions, seqStarts);
  const acts = allocActivations(dtype, config, params, seqStarts, false);
  const sc = acts.scratch;
  const qw = H * d;
  const kw = Hkv * d;
  const maxT = cache.maxTokens;
  const slotSize = Hkv * maxT * d;
  const lens = new Int32Array(1);
  k.embeddingForward(params.embed.data, tokens, acts.residual[0], n, D);
  scaleEmbeddings(config, acts.residual[0], n * D);
  for (let l = 0; l < L; l++) {
    const p = params.layers[l];
    const la = acts.layers[l];
    const x = acts.residual[l];
    const c = layerContext(c0, m, l);
    if (p.linear !== null) {
      const conv = cache.conv[l];
      const delta = cache.delta[l];
      const cw = conv.length / cache.slots;
      const dw = delta.length / cache.slots;
      linearAttentionBlockDecode(c, p, la, x, sc, (i) => ({
        conv: conv.subarray(slots[i] * cw, (slots[i] + 1) * cw),
        delta: delta.subarray(slots[i] * dw, (slots[i] + 1) * dw),
      }));
      mlpBlockForward(c, p, la, acts.residual[l + 1], sc);
      continue;
    }
    qkvForward(c, p, la, x, sc);
    const kc = cache.k[l];
    const vc = cache.v[l];
    for (let i = 0; i < n; i++) {
      for (let g = 0; g < Hkv; g++) {
        const dst = (slots[i] * Hkv + g) * maxT * d + positions[i] * d;
        kc.set(la.k.subarray(i * kw + g * d, i * kw + (g + 1) * d), dst);
        vc.set(la.v.subarray(i * kw + g * d, i * kw + (g + 1) * d), dst);
      }
    }
    for (let i = 0; i < n; i++) {
      const base = slots[i] * slotSize;
      lens[0] = positions[i] + 1;
      k.attentionDecode(
        la.q.subarray(i * qw, (i + 1) * qw),
        kc.subarray(base, base + slotSize),
        vc.subarray(base, base + slotSize),
        sc.attn.subarray(i * qw, (i + 1) * qw),
        lens,
        1,
        H,
        Hkv,
        d,
        maxT,
        c.attnScale,
        c.window,
        p.sinks?.data ?? null,
      );
    }
    attentionOutputForward(c, p, la, x, sc.attn, sc);
    mlpBlockForward(c, p, la, acts.residual[l + 1], sc);
  }
  for (let i = 0; i < n; i++) cache.lengths[slots[i]] = positions[i] + 1;

  const rows = rowsWanted.length;
  const picked = allocFloat(dtype, rows * D);
  const last = acts.residual[L];
  for (let r = 0; r < rows; r++) picked.set(last.subarray(rowsWanted[r] * D, (rowsWanted[r] + 1) * D), r * D);
  const normed = allocFloat(dtype, rows * D);
  k.rmsnormForward(picked, c0.normWeight(params.finalNorm), normed, allocFloat(dtype, rows), rows, D, config.rmsNormEps);
  const logits = allocFloat(dtype, rows * V);
  const hr = params.head.lora !== null ? allocFloat(dtype, rows * params.head.lora.rank) : null;
  const ones = allocFloat(dtype, rows).fill(1);
  if (rows > 0) linearForward(k, params.head, normed, rows, logits, hr, ones);
  return logits;
}
