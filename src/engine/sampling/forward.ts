// The sampler's forward pass over a KV cache (docs/numerics.md#kv-cache), with LoRA unmerged. One call
// takes any mix of tokens: a prompt being prefilled (several positions of one slot) and one new
// token for each of many decoding sequences (one position in each of many slots). All K/V of the
// call are written to the cache first, then every token attends to positions 0..p of its slot,
// which equals causal attention over each sequence. Linear-attention layers (Qwen3.5) keep a
// recurrent state per slot instead (their conv window and each value head's delta-rule state),
// advanced token by token in call order; a slot's state restarts at position 0.
import type { DecodeKernels, KvArray } from "../kernels/decodeTypes.ts";
import { HalfArray } from "../kernels/halfArray.ts";
import { widenExpert } from "../kernels/mxfp4.ts";
import type { Kernels } from "../kernels/types.ts";
import { applyOutputGate, splitQueryGate } from "../model/attention.ts";
import { attentionScale, layerIsLinear, layerUsesRope, layerWindow, type ModelConfig } from "../model/config.ts";
import { gatedNormForward, linearDims, recurrentTokens, type LinearDims } from "../model/deltanet.ts";
import { clampedSwigluForward, gatedForward } from "../model/gated.ts";
import { expertLoraDownInput, expertLoraDownOutput, expertLoraGateUp, expertLoraInputs } from "../model/expertLora.ts";
import { combineExperts, expertGateWidth, forEachBusyExpert, gatherRows, groupByExpert, routeTokens } from "../model/moe.ts";
import { scaleEmbeddings } from "../model/pass.ts";
import { applyRope, ropeInvFreq } from "../model/rope.ts";
import { project, type Projection, type InferenceLayer, type InferenceLinear, type InferenceMoe, type InferenceWeights } from "./weights.ts";

/** What the sampler's KV cache holds: float32, or IEEE f16 (half the memory; docs/embedded-engine.md#the-kv-cache). */
export type KvDtype = "f32" | "f16";

/**
 * What the sampling cache holds: COOKBOOK_KV_CACHE=f32 | f16 | auto; unset is auto, i.e. f16 with
 * the native kernels and float32 with the reference ones (whose attention would widen the whole f16
 * cache on every call). Only decoding reads this cache: prompts, prompt logprobs and
 * compute_logprobs run over a float32 cache whatever it says (scheduler.ts prefill), so the
 * logprobs other code trusts as references (DPO, KL penalties, teachers, export checks) do not
 * depend on it (docs/embedded-engine.md#the-kv-cache).
 */
export function kvCacheDtype(kernelsName: "native" | "reference", env: NodeJS.ProcessEnv = process.env): KvDtype {
  const v = env.COOKBOOK_KV_CACHE;
  if (v === "f32" || v === "f16") return v;
  if (v === "auto" || v === undefined || v === "") return kernelsName === "native" ? "f16" : "f32";
  throw new Error(`COOKBOOK_KV_CACHE=${JSON.stringify(v)} is not valid; expected "f32", "f16" or "auto" (the default)`);
}

/** Where a cache's arrays come from: the kernels' own pages when they offer them (decodeTypes.ts), else the heap. */
export type CacheMemory = Pick<DecodeKernels, "allocPages" | "releasePages">;

function kvArray(dtype: KvDtype, n: number, memory: CacheMemory | null): KvArray {
  const bytes = n * (dtype === "f32" ? 4 : 2);
  const pages = memory?.allocPages !== undefined && n > 0 ? memory.allocPages(bytes) : null;
  if (dtype === "f32") return pages === null ? new Float32Array(n) : new Float32Array(pages);
  return new HalfArray("f16", pages === null ? new Uint16Array(n) : new Uint16Array(pages));
}

/** The typed array under a KV cache array (copies move raw elements, whatever the dtype). */
const rawKv = (a: KvArray): Float32Array | Float64Array | Uint16Array => (a instanceof HalfArray ? a.bits : a);

/**
 * Per attention layer K (after RoPE) and V as [slots, Hkv, maxLen, d], the layout
 * attentionDecodeSlots reads; per linear-attention layer (empty K/V) the recurrent state of each
 * slot: its conv window [C, K−1] and its delta-rule state [Hv, dk, dv], float32 whatever the KV dtype.
 */
export class KvCache {
  readonly k: KvArray[] = [];
  readonly v: KvArray[] = [];
  /** Per layer: conv windows [slots, C·(K−1)] and delta-rule states [slots, Hv·dk·dv] (empty for attention layers). */
  readonly convState: Float32Array[] = [];
  readonly deltaState: Float32Array[] = [];
  private readonly perSlot: number;
  private readonly convPerSlot: number;
  private readonly deltaPerSlot: number;

  /**
   * `memory`: the kernels, whose page allocator (when they have one) puts each array on pages of its
   * own, so a slot's never-written positions cost nothing and release() frees the memory at once.
   */
  constructor(
    readonly config: ModelConfig,
    readonly slots: number,
    readonly maxLen: number,
    readonly dtype: KvDtype = "f32",
    private readonly memory: CacheMemory | null = null,
  ) {
    this.perSlot = config.numKvHeads * maxLen * config.headDim;
    const lin = config.linearAttention;
    const d = lin !== undefined ? linearDims(lin) : null;
    this.convPerSlot = d === null ? 0 : d.C * (d.K - 1);
    this.deltaPerSlot = d === null ? 0 : d.Hv * d.dk * d.dv;
    for (let l = 0; l < config.numLayers; l++) {
      const linear = layerIsLinear(config, l);
      this.k.push(kvArray(dtype, linear ? 0 : slots * this.perSlot, memory));
      this.v.push(kvArray(dtype, linear ? 0 : slots * this.perSlot, memory));
      this.convState.push(new Float32Array(linear ? slots * this.convPerSlot : 0));
      this.deltaState.push(new Float32Array(linear ? slots * this.deltaPerSlot : 0));
    }
  }

  /** Slot s's conv window and delta-rule state in layer l (views). */
  recurrent(l: number, s: number): { conv: Float32Array; delta: Float32Array } {
    return {
      conv: this.convState[l].subarray(s * this.convPerSlot, (s + 1) * this.convPerSlot),
      delta: this.deltaState[l].subarray(s * this.deltaPerSlot, (s + 1) * this.deltaPerSlot),
    };
  }

  /** Copies each linear-attention layer's state of slot `from` to slot `to` of `dst`. */
  private copyRecurrent(dst: KvCache, from: number, to: number): void {
    for (let l = 0; l < this.convState.length; l++) {
      if (this.convState[l].length === 0 && this.deltaState[l].length === 0) continue;
      const a = this.recurrent(l, from);
      const b = dst.recurrent(l, to);
      b.conv.set(a.conv);
      b.delta.set(a.delta);
    }
  }

  /**
   * Copies the linear-attention layers' recurrent state of one slot into another: what a sample
   * sharing another slot's prompt needs of its own (attention layers read the prompt's K/V from
   * the shared slot through SharedPrefix).
   */
  copyRecurrentSlot(from: number, to: number): void {
    this.copyRecurrent(this, from, to);
  }

  /**
   * Copies positions 0..length-1 of one slot into another (a prompt shared by several samples).
   * A recurrent state holds its slot's whole sequence, so `length` must be all of it there.
   */
  copySlot(from: number, to: number, length: number): void {
    const { numKvHeads: Hkv, headDim: d } = this.config;
    this.copyRecurrent(this, from, to);
    for (let l = 0; l < this.k.length; l++) {
      for (const arr of [rawKv(this.k[l]), rawKv(this.v[l])]) {
        for (let g = 0; g < Hkv; g++) {
          const src = (from * Hkv + g) * this.maxLen * d;
          arr.copyWithin((to * Hkv + g) * this.maxLen * d, src, src + length * d);
        }
      }
    }
  }

  /**
   * Stores positions 0..length-1 of slot `from` of a float32 cache `src` into slot `to` of this one
   * through kvStore (rounded to nearest even when this cache is f16, copied when float32): a prompt
   * prefilled over float32 moving into the sampling cache.
   */
  importSlot(kernels: DecodeKernels, src: KvCache, from: number, to: number, length: number): void {
    if (src.dtype !== "f32") throw new TypeError(`importSlot: the source cache holds ${src.dtype}, not float32`);
    const { numKvHeads: Hkv, headDim: d } = this.config;
    src.copyRecurrent(this, from, to);
    const positions = Int32Array.from({ length }, (_, i) => i);
    const slots = new Int32Array(length);
    for (let l = 0; l < this.k.length; l++) {
      if (this.k[l].length === 0) continue;
      const sk = src.k[l] as Float32Array;
      const sv = src.v[l] as Float32Array;
      // One head's positions are contiguous in both caches: store them as the rows of a
      // one-head cache whose slots are this cache's (slot, head) pairs.
      for (let g = 0; g < Hkv; g++) {
        const a = (from * Hkv + g) * src.maxLen * d;
        slots.fill(to * Hkv + g);
        kernels.kvStore(sk.subarray(a, a + length * d), sv.subarray(a, a + length * d), this.k[l], this.v[l], slots, positions, length, 1, d, this.maxLen);
      }
    }
  }

  /**
   * Gives the K/V arrays' memory back now (with a page allocator; a no-op otherwise), not when the
   * garbage collector gets to them: for a cache that is done with. It reads as zeros afterwards.
   */
  release(): void {
    const free = this.memory?.releasePages;
    if (free === undefined) return;
    for (let l = 0; l < this.k.length; l++) {
      free(rawKv(this.k[l]));
      free(rawKv(this.v[l]));
    }
  }

  /** A cache with more slots and/or room, holding the first lengths[s] positions of each old slot. */
  grown(slots: number, maxLen: number, lengths: ArrayLike<number>): KvCache {
    const out = new KvCache(this.config, Math.max(slots, this.slots), Math.max(maxLen, this.maxLen), this.dtype, this.memory);
    const { numKvHeads: Hkv, headDim: d } = this.config;
    for (let s = 0; s < this.slots; s++) if ((lengths[s] ?? 0) > 0) this.copyRecurrent(out, s, s);
    for (let l = 0; l < this.k.length; l++) {
      // Linear-attention layers hold no K/V.
      if (this.k[l].length === 0) continue;
      for (const [src, dst] of [
        [rawKv(this.k[l]), rawKv(out.k[l])],
        [rawKv(this.v[l]), rawKv(out.v[l])],
      ] as const) {
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
    let n = 0;
    for (let l = 0; l < this.k.length; l++) n += (this.k[l].length + this.v[l].length) * (this.dtype === "f32" ? 4 : 2);
    for (let l = 0; l < this.convState.length; l++) n += this.convState[l].byteLength + this.deltaState[l].byteLength;
    return n;
  }
}

/** Per token of a decode call: the slot holding its shared prompt and that prompt's length (0: none). */
export interface SharedPrefix {
  slots: Int32Array;
  lens: Int32Array;
}

/** Everything a forward call needs besides the tokens. */
export interface InferenceModel {
  weights: InferenceWeights;
  kernels: Kernels;
  invFreq: Float32Array;
  /** Sliding-window layers' frequencies when their RoPE base differs (Gemma), else null. */
  invFreqLocal: Float32Array | null;
  /** Buffers of decode-sized calls, reused from step to step (dropped by releaseScratch). */
  scratch: ForwardScratch | null;
  /** What the scheduler's KV caches for this model hold. */
  kvDtype: KvDtype;
}

/** `kvDtype` defaults to kvCacheDtype(kernels.name) (COOKBOOK_KV_CACHE). */
export function inferenceModel(weights: InferenceWeights, kernels: Kernels, kvDtype: KvDtype = kvCacheDtype(kernels.name)): InferenceModel {
  const c = weights.config;
  const local = c.ropeThetaLocal !== undefined && c.ropeThetaLocal !== c.ropeTheta ? Float32Array.from(ropeInvFreq(c, c.ropeThetaLocal)) : null;
  return { weights, kernels, invFreq: Float32Array.from(ropeInvFreq(c)), invFreqLocal: local, scratch: null, kvDtype };
}

/** Calls with at most this many tokens (decode steps) reuse the model's buffers; longer ones allocate. */
export const SCRATCH_ROWS = 64;

/** The activations of one forward call, for up to `rows` tokens. */
export class ForwardScratch {
  readonly x: Float32Array;
  readonly xn: Float32Array;
  readonly tmp: Float32Array;
  readonly rstd: Float32Array;
  readonly q: Float32Array;
  readonly k: Float32Array;
  readonly v: Float32Array;
  readonly attn: Float32Array;
  readonly gate: Float32Array;
  readonly up: Float32Array;
  readonly ones: Float32Array;
  readonly qRaw: Float32Array | null;
  readonly kRaw: Float32Array | null;
  readonly lora: Float32Array;
  readonly lens: Int32Array;
  readonly out: Float32Array;
  readonly moe: InferenceMoeScratch | null;
  /** Gated attention (Qwen3.5): q_proj's full output [n, H·2d] and the gate [n, H·d]. */
  readonly qFull: Float32Array | null;
  readonly qGate: Float32Array | null;
  readonly linear: InferenceLinearScratch | null;

  constructor(
    c: ModelConfig,
    maxRank: number,
    readonly rows: number,
  ) {
    const { hiddenSize: D, intermediateSize: F, numHeads: H, numKvHeads: Hkv, headDim: d } = c;
    const n = rows;
    this.x = new Float32Array(n * D);
    this.xn = new Float32Array(n * D);
    this.tmp = new Float32Array(n * D);
    this.rstd = new Float32Array(n * Math.max(H, 1));
    this.q = new Float32Array(n * H * d);
    this.k = new Float32Array(n * Hkv * d);
    this.v = new Float32Array(n * Hkv * d);
    this.attn = new Float32Array(n * H * d);
    this.gate = new Float32Array(n * F);
    this.up = new Float32Array(n * F);
    this.ones = new Float32Array(n).fill(1);
    this.qRaw = c.qkNorm ? new Float32Array(n * H * d) : null;
    this.kRaw = c.qkNorm ? new Float32Array(n * Hkv * d) : null;
    this.lora = new Float32Array(n * maxRank);
    this.lens = new Int32Array(n);
    this.out = new Float32Array(n * D);
    this.moe = c.moe?.sparseLayers.includes(true) ? new InferenceMoeScratch(c, n, maxRank) : null;
    const gated = c.attnOutputGate === true;
    this.qFull = gated ? new Float32Array(n * 2 * H * d) : null;
    this.qGate = gated ? new Float32Array(n * H * d) : null;
    this.linear = c.linearAttention?.layers.includes(true) ? new InferenceLinearScratch(linearDims(c.linearAttention), n) : null;
  }
}

/** A linear-attention layer's buffers for `rows` tokens. */
class InferenceLinearScratch {
  readonly mixed: Float32Array;
  readonly act: Float32Array;
  readonly qn: Float32Array;
  readonly kn: Float32Array;
  readonly z: Float32Array;
  readonly b: Float32Array;
  readonly a: Float32Array;
  readonly beta: Float32Array;
  readonly g: Float32Array;
  readonly o: Float32Array;
  readonly normed: Float32Array;
  readonly rstd: Float32Array;
  readonly y: Float32Array;
  readonly kv: Float32Array;

  constructor(
    readonly dims: LinearDims,
    rows: number,
  ) {
    const { C, Kd, Vd, Hv, dv } = dims;
    this.mixed = new Float32Array(rows * C);
    this.act = new Float32Array(rows * C);
    this.qn = new Float32Array(rows * Kd);
    this.kn = new Float32Array(rows * Kd);
    this.z = new Float32Array(rows * Vd);
    this.b = new Float32Array(rows * Hv);
    this.a = new Float32Array(rows * Hv);
    this.beta = new Float32Array(rows * Hv);
    this.g = new Float32Array(rows * Hv);
    this.o = new Float32Array(rows * Vd);
    this.normed = new Float32Array(rows * Vd);
    this.rstd = new Float32Array(rows * Hv);
    this.y = new Float32Array(rows * Vd);
    this.kv = new Float32Array(dv);
  }
}

/**
 * out [n, D] = the Gated DeltaNet on xin [n, D], token by token in call order, each reading and
 * advancing its slot's recurrent state (model/deltanet.ts's steps, as in training).
 */
function linearForward(
  m: InferenceModel,
  p: InferenceLinear,
  l: number,
  cache: KvCache,
  xin: Float32Array,
  n: number,
  positions: Int32Array,
  slots: Int32Array,
  out: Float32Array,
  sc: ForwardScratch,
): void {
  const c = m.weights.config;
  const k = m.kernels;
  const ls = sc.linear;
  if (ls === null) throw new Error("linear-attention layer without its buffers");
  const { C, Vd, Hv, dv } = ls.dims;
  const D = c.hiddenSize;
  project(k, p.inProjQkv, xin, n, C, D, ls.mixed, sc.lora);
  project(k, p.inProjZ, xin, n, Vd, D, ls.z, sc.lora);
  project(k, p.inProjB, xin, n, Hv, D, ls.b, sc.lora);
  project(k, p.inProjA, xin, n, Hv, D, ls.a, sc.lora);
  recurrentTokens(ls.dims, p.conv, p.aLog, p.dtBias, ls, n, positions, (i) => cache.recurrent(l, slots[i]), ls.kv);
  gatedNormForward(k, c.rmsNormEps, p.norm, ls.o, ls.z, ls.normed, ls.rstd, ls.y, n * Hv, dv);
  project(k, p.outProj, ls.y, n, D, Vd, out, sc.lora);
}

/** A mixture-of-experts block's buffers for `rows` tokens (A = rows·k assignments). */
class InferenceMoeScratch {
  readonly logits: Float32Array;
  readonly probs: Float32Array;
  readonly chosen: Int32Array;
  readonly weights: Float32Array;
  readonly order: Int32Array;
  readonly offsets: Int32Array;
  readonly xg: Float32Array;
  readonly gate: Float32Array;
  readonly up: Float32Array;
  readonly y: Float32Array;
  /** The shared-outer expert adapter: x·Aᵀ of each grouped row for gate, up and down, [A, rank]. */
  readonly hrGate: Float32Array;
  readonly hrUp: Float32Array;
  readonly hrDown: Float32Array;

  constructor(c: ModelConfig, rows: number, rank: number) {
    const moe = c.moe;
    if (moe === undefined) throw new Error("InferenceMoeScratch: the config has no experts");
    const A = rows * moe.topK;
    const Fe = moe.expertIntermediateSize;
    this.logits = new Float32Array(rows * moe.numExperts);
    this.probs = new Float32Array(rows * moe.numExperts);
    this.chosen = new Int32Array(A);
    this.weights = new Float32Array(A);
    this.order = new Int32Array(A);
    this.offsets = new Int32Array(moe.numExperts + 1);
    this.xg = new Float32Array(A * c.hiddenSize);
    this.gate = new Float32Array(A * expertGateWidth(moe));
    // up, then the activation (GPT-OSS: the activation of the fused gate_up in gate).
    this.up = new Float32Array(A * Fe);
    this.y = new Float32Array(A * c.hiddenSize);
    this.hrGate = new Float32Array(A * rank);
    this.hrUp = new Float32Array(this.hrGate.length);
    this.hrDown = new Float32Array(this.hrGate.length);
  }
}

/** out [n, D] = the sparse block on xin [n, D], routed as in training (model/moe.ts). */
function moeForward(m: InferenceModel, p: InferenceMoe, xin: Float32Array, n: number, out: Float32Array, sc: ForwardScratch): void {
  const c = m.weights.config;
  const k = m.kernels;
  const moe = c.moe;
  const ms = sc.moe;
  if (moe === undefined || ms === null) throw new Error("mixture-of-experts layer without its buffers");
  const D = c.hiddenSize;
  const { numExperts: E, topK: K, expertIntermediateSize: Fe } = moe;
  const A = n * K;
  project(k, { weight: p.router, lora: null }, xin, n, E, D, ms.logits, sc.lora);
  addBias(k, ms.logits, p.routerBias, n, E, sc.ones);
  routeTokens(moe, ms.logits, n, ms.probs, ms.chosen, ms.weights);
  groupByExpert(ms.chosen, A, E, ms.order, ms.offsets);
  gatherRows(xin, ms.order, A, K, D, ms.xg);
  const lora = p.lora;
  const r = lora?.rank ?? 0;
  if (lora !== null) expertLoraInputs(k, lora, ms.xg, A, D, ms.hrGate, ms.hrUp);
  forEachBusyExpert(ms.offsets, E, (e, r0, rows) => {
    const ex = p.experts[e];
    widenExpert(k, ex.quantized);
    const x = ms.xg.subarray(r0 * D, (r0 + rows) * D);
    const G = expertGateWidth(moe);
    const gate = ms.gate.subarray(r0 * G, (r0 + rows) * G);
    const act = ms.up.subarray(r0 * Fe, (r0 + rows) * Fe);
    project(k, ex.gate, x, rows, G, D, gate, sc.lora);
    addBias(k, gate, ex.gateBias, rows, G, sc.ones);
    // act's rows hold the up projection, or (GPT-OSS) until the activation the de-interleaved delta.
    if (ex.up !== null) project(k, ex.up, x, rows, Fe, D, act, sc.lora);
    if (lora !== null)
      expertLoraGateUp(
        k,
        lora,
        e,
        Fe,
        ms.hrGate.subarray(r0 * r, (r0 + rows) * r),
        ms.hrUp.subarray(r0 * r, (r0 + rows) * r),
        rows,
        gate,
        ex.up === null ? null : act,
        act,
      );
    if (ex.up === null) clampedSwigluForward(moe.gptOss?.swigluLimit ?? 0, gate, act, rows * Fe);
    else gatedForward(c, k, gate, act, act, rows * Fe);
    const y = ms.y.subarray(r0 * D, (r0 + rows) * D);
    project(k, ex.down, act, rows, D, Fe, y, sc.lora);
    addBias(k, y, ex.downBias, rows, D, sc.ones);
    if (lora !== null) expertLoraDownInput(k, lora, e, Fe, act, rows, ms.hrDown.subarray(r0 * r, (r0 + rows) * r));
  });
  if (lora !== null) expertLoraDownOutput(k, lora, ms.hrDown, A, D, ms.y);
  combineExperts(ms.y, ms.weights, ms.order, A, K, D, out, n);
}

function scratchFor(m: InferenceModel, n: number): ForwardScratch {
  const w = m.weights;
  if (n > SCRATCH_ROWS) return new ForwardScratch(w.config, w.maxRank, n);
  if (m.scratch === null) m.scratch = new ForwardScratch(w.config, w.maxRank, SCRATCH_ROWS);
  return m.scratch;
}

/** Frees the reused buffers (an idle sampler keeps only its weights). */
export function releaseScratch(m: InferenceModel): void {
  m.scratch = null;
}

function attentionProjections(p: InferenceLayer): { q: Projection; k: Projection; v: Projection; o: Projection } {
  if (p.q === null || p.k === null || p.v === null || p.o === null) throw new Error("an attention layer without q/k/v/o projections");
  return { q: p.q, k: p.k, v: p.v, o: p.o };
}

function addBias(k: Kernels, y: Float32Array, bias: Float32Array | null, rows: number, out: number, ones: Float32Array): void {
  if (bias !== null) k.gemm(false, false, rows, out, 1, 1, ones, bias, 1, y);
}

/**
 * Runs tokens[i] at positions[i] of cache slot slots[i] through the decoder, writing their K/V to
 * the cache, and returns the final-normed hidden states of the rows in `rows` ([rows.length, D];
 * null = every token, in order). Positions of one slot must continue what the cache holds; the
 * caller (the scheduler) owns that. For decode-sized calls the result is a view of the model's
 * reused buffers, valid until its next call. `prefix` (decode calls): token i's attention reads
 * positions below prefix.lens[i] from slot prefix.slots[i], a prompt its request's samples share.
 */
export function forwardHidden(
  m: InferenceModel,
  cache: KvCache,
  tokens: Int32Array,
  positions: Int32Array,
  slots: Int32Array,
  rows: Int32Array | null,
  prefix: SharedPrefix | null = null,
): Float32Array {
  const { weights: w, kernels: k } = m;
  const c = w.config;
  const { hiddenSize: D, intermediateSize: F, numHeads: H, numKvHeads: Hkv, headDim: d, rmsNormEps: eps } = c;
  const n = tokens.length;
  const qw = H * d;
  const kw = Hkv * d;
  const maxLen = cache.maxLen;
  const sc = scratchFor(m, n);
  const { x, xn, tmp, rstd, q, k: kk, v: vv, attn, gate, up, ones, qRaw, kRaw, lora, lens } = sc;
  for (let i = 0; i < n; i++) lens[i] = positions[i] + 1;
  const scale = attentionScale(c);
  const rotary = c.rotaryDim ?? d;

  // Post-norm families (olmo2) have no input norms: the projections read x itself.
  const qkProjection = c.qkNormScope === "projection";
  k.embeddingForward(w.embed, tokens, x, n, D);
  scaleEmbeddings(c, x, n * D);
  for (let l = 0; l < c.numLayers; l++) {
    const p = w.layers[l];
    const window = layerWindow(c, l);
    const invFreq = c.slidingLayers?.[l] === true && m.invFreqLocal !== null ? m.invFreqLocal : m.invFreq;
    let xin = x;
    if (p.inputNorm !== null) {
      k.rmsnormForward(x, p.inputNorm, xn, rstd, n, D, eps);
      xin = xn;
    }
    if (p.linear !== null) {
      linearForward(m, p.linear, l, cache, xin, n, positions, slots, tmp, sc);
    } else {
      const { q: pq, k: pk, v: pv, o: po } = attentionProjections(p);
      if (sc.qFull !== null && sc.qGate !== null) {
        project(k, pq, xin, n, 2 * qw, D, sc.qFull, lora);
        splitQueryGate(sc.qFull, qRaw ?? q, sc.qGate, n, H, d);
      } else {
        project(k, pq, xin, n, qw, D, qRaw ?? q, lora);
      }
      addBias(k, qRaw ?? q, p.qBias, n, qw, ones);
      project(k, pk, xin, n, kw, D, kRaw ?? kk, lora);
      addBias(k, kRaw ?? kk, p.kBias, n, kw, ones);
      project(k, pv, xin, n, kw, D, vv, lora);
      addBias(k, vv, p.vBias, n, kw, ones);
      if (qRaw !== null && kRaw !== null && p.qNorm !== null && p.kNorm !== null) {
        k.rmsnormForward(qRaw, p.qNorm, q, rstd, qkProjection ? n : n * H, qkProjection ? qw : d, eps);
        k.rmsnormForward(kRaw, p.kNorm, kk, rstd, qkProjection ? n : n * Hkv, qkProjection ? kw : d, eps);
      }
      if (layerUsesRope(c, l)) {
        applyRope(k, q, positions, invFreq, n, H, d, rotary, false);
        applyRope(k, kk, positions, invFreq, n, Hkv, d, rotary, false);
      }
      k.kvStore(kk, vv, cache.k[l], cache.v[l], slots, positions, n, Hkv, d, maxLen);
      k.attentionDecodeSlots(q, cache.k[l], cache.v[l], attn, slots, lens, n, H, Hkv, d, maxLen, scale, window, p.sinks, prefix?.slots, prefix?.lens);
      if (sc.qGate !== null) applyOutputGate(attn, sc.qGate, attn, n * qw);
      project(k, po, attn, n, D, qw, tmp, lora);
      addBias(k, tmp, p.oBias, n, D, ones);
    }
    if (p.attnOutNorm !== null) k.rmsnormForward(tmp, p.attnOutNorm, tmp, rstd, n, D, eps);
    k.add(x, tmp, x, n * D);
    xin = x;
    if (p.postNorm !== null) {
      k.rmsnormForward(x, p.postNorm, xn, rstd, n, D, eps);
      xin = xn;
    }
    if (p.moe !== null) moeForward(m, p.moe, xin, n, tmp, sc);
    else if (p.gate !== null && p.up !== null && p.down !== null) {
      project(k, p.gate, xin, n, F, D, gate, lora);
      project(k, p.up, xin, n, F, D, up, lora);
      gatedForward(c, k, gate, up, gate, n * F);
      project(k, p.down, gate, n, D, F, tmp, lora);
    } else throw new Error(`layer ${l}: neither a dense MLP nor experts`);
    if (p.mlpOutNorm !== null) k.rmsnormForward(tmp, p.mlpOutNorm, tmp, rstd, n, D, eps);
    k.add(x, tmp, x, n * D);
  }
  let src = x;
  let r = n;
  if (rows !== null) {
    r = rows.length;
    for (let i = 0; i < r; i++) xn.set(x.subarray(rows[i] * D, (rows[i] + 1) * D), i * D);
    src = xn;
  }
  k.rmsnormForward(src, w.finalNorm, sc.out, rstd, r, D, eps);
  return sc.out.subarray(0, r * D);
}

/** logits [rows, V] of final-normed hidden states [rows, D], into `out` when given. */
export function headLogits(m: InferenceModel, hidden: Float32Array, rows: number, out?: Float32Array): Float32Array {
  const { hiddenSize: D, vocabSize: V } = m.weights.config;
  const logits = out ?? new Float32Array(rows * V);
  const lora = m.scratch !== null && rows <= m.scratch.rows ? m.scratch.lora : new Float32Array(rows * m.weights.maxRank);
  if (rows > 0) project(m.kernels, m.weights.head, hidden, rows, V, D, logits, lora);
  return logits;
}
