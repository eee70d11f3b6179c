// The decode scheduler of the compute worker. Every sampler has one KV cache whose slots hold the
// sequences being generated. The prompts of the requests that arrive together are prefilled
// together, in forward calls of up to PREFILL_TOKENS tokens (each prompt once, into its first
// sample's slot, which the request's other samples read the prompt from: their own slots hold
// only what they generate, so a prompt's K/V are cached once); then each scheduler tick runs ONE batched
// forward over the newest token of every unfinished sequence of that sampler, whichever request
// it belongs to. Requests that arrive while others decode join at the next tick. Ticks yield to
// the event loop (setImmediate), so training requests and new sample requests are taken in
// between. A decode step allocates nothing that grows with the model: its inputs, activations,
// logits and draws live in buffers reused until the sampler goes idle.
//
// Sampling draws depend only on (sequence seed, step) (see rng.ts), so a sequence's tokens do
// not depend on which other sequences shared its batch; the floating-point results of a batched
// product can differ from a single-row one in the last bits, which flips a token only on a
// near-exact tie.
import { rawLogprob, topLogprobs, type ChooseParams } from "./choose.ts";
import { TokenDrawer } from "./draw.ts";
import { forwardHidden, headLogits, KvCache, releaseScratch, SCRATCH_ROWS, type InferenceModel, type KvDtype, type SharedPrefix } from "./forward.ts";
import type { ModelLimits, ResolvedSampleRequest } from "./request.ts";
import { sampleSeed, uniformAt } from "./rng.ts";
import { StopStringMatcher, type TokenDecoder } from "./stop.ts";

export interface SampledSequenceResult {
  stop_reason: "stop" | "length";
  tokens: number[];
  logprobs: number[];
}

export interface SampleResult {
  sequences: SampledSequenceResult[];
  prompt_logprobs?: (number | null)[];
  topk_prompt_logprobs?: ([number, number][] | null)[];
}

/** What the scheduler needs from a sampler the session holds. */
export interface SamplerHandle {
  readonly id: string;
  readonly limits: ModelLimits;
  /** The weights it decodes with (built on first use). */
  model(): InferenceModel;
  /** The tokenizer for stop strings. */
  decoder(): Promise<TokenDecoder>;
}

/** Sequences decoded together in one forward, per sampler (more wait for the next free slot). */
export const MAX_BATCH = SCRATCH_ROWS;
/** Prompt rows whose logits are materialised at once for prompt logprobs. */
const LOGIT_CHUNK = 64;
/** Prompt tokens per prefill forward: bounds its activations (a longer prompt takes several calls). */
export const PREFILL_TOKENS = 512;
/**
 * compute_logprobs requests admitted together hold at most this many cache positions (slots ×
 * the longest prompt), always at least one request: their slots live only for the prefill.
 */
const LOGPROBS_POSITIONS = 4096;

interface Sequence {
  readonly request: RequestState;
  readonly slot: number;
  /** The slot its attention reads positions 0..prefixLen-1 from (its request's first slot), and how many. */
  readonly prefixSlot: number;
  readonly prefixLen: number;
  readonly seed: number;
  readonly tokens: number[];
  readonly logprobs: number[];
  matcher: StopStringMatcher | null;
  stopReason: "stop" | "length" | null;
}

interface RequestState {
  readonly req: ResolvedSampleRequest;
  /** A compute_logprobs request: prefilled with the others for its prompt logprobs, no samples. */
  readonly logprobsOnly?: boolean;
  readonly resolve: (r: SampleResult) => void;
  readonly reject: (e: Error) => void;
  decoder: TokenDecoder | null;
  sequences: Sequence[];
  promptLogprobs?: (number | null)[];
  topk?: ([number, number][] | null)[];
}

/** A request being prefilled: its cache slots and, once its prompt has run, its last logits row. */
interface Prefill {
  readonly r: RequestState;
  readonly slots: number[];
  readonly wantPrompt: boolean;
  last: Float32Array | null;
}

/** The inputs, logits and draws of a decode step, kept while the sampler decodes. */
class StepBuffers {
  readonly tokens = new Int32Array(MAX_BATCH);
  readonly positions = new Int32Array(MAX_BATCH);
  readonly slots = new Int32Array(MAX_BATCH);
  readonly prefix: SharedPrefix = { slots: new Int32Array(MAX_BATCH), lens: new Int32Array(MAX_BATCH) };
  readonly drawer = new TokenDrawer(MAX_BATCH);
  private logits = new Float32Array(0);

  constructor(private readonly vocab: number) {}

  /** Rows rounded up to a power of two: a batch that grows reallocates a few times, not at every size, and never holds twice its rows. */
  logitsFor(rows: number): Float32Array {
    if (this.logits.length < rows * this.vocab) this.logits = new Float32Array(Math.min(MAX_BATCH, nextPow2(rows)) * this.vocab);
    return this.logits;
  }
}

interface SamplerState {
  readonly handle: SamplerHandle;
  pending: RequestState[];
  active: Sequence[];
  cache: KvCache | null;
  /** Positions held by each cache slot. */
  slotLen: Int32Array;
  free: number[];
  buffers: StepBuffers | null;
}

function nextPow2(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

export class DecodeScheduler {
  private readonly states = new Map<string, SamplerState>();
  private readonly prefillTokens: number;

  /** `prefillTokens` (default PREFILL_TOKENS): tests make it small to split prompts across calls. */
  constructor(options: { prefillTokens?: number } = {}) {
    this.prefillTokens = options.prefillTokens ?? PREFILL_TOKENS;
  }

  private scheduled = false;
  /**
   * Decode steps and tokens run so far, the largest decode cache held in bytes, and the decode rows
   * that read their prompt from another sample's slot (diagnostics and tests).
   */
  readonly stats = { steps: 0, tokens: 0, maxBatch: 0, cacheBytes: 0, sharedPromptRows: 0 };

  /** Queues a request; the promise settles when all of its samples finished. */
  submit(handle: SamplerHandle, req: ResolvedSampleRequest): Promise<SampleResult> {
    return new Promise<SampleResult>((resolve, reject) => {
      const r: RequestState = { req, resolve, reject, decoder: null, sequences: [] };
      const enqueue = (): void => this.enqueue(handle, r);
      if (req.stopStrings.length === 0) {
        enqueue();
        return;
      }
      handle.decoder().then(
        (d) => {
          r.decoder = d;
          enqueue();
        },
        (err: unknown) => reject(err instanceof Error ? err : new Error(String(err))),
      );
    });
  }

  /**
   * compute_logprobs: the logprob of every prompt token given the ones before it (first entry
   * null). Requests that arrive together are packed into the same prefill forward calls as each
   * other and as the prompts of sample requests (docs/embedded-engine.md#sampling).
   */
  submitLogprobs(handle: SamplerHandle, prompt: Int32Array): Promise<(number | null)[]> {
    const req: ResolvedSampleRequest = {
      prompt,
      numSamples: 0,
      maxTokens: 0,
      temperature: 1,
      topK: -1,
      topP: 1,
      seed: 0,
      stopTokens: new Set(),
      stopStrings: [],
      promptLogprobs: true,
      topkPromptLogprobs: 0,
    };
    return new Promise<SampleResult>((resolve, reject) =>
      this.enqueue(handle, { req, resolve, reject, decoder: null, sequences: [], logprobsOnly: true }),
    ).then((r) => r.prompt_logprobs as (number | null)[]);
  }

  private enqueue(handle: SamplerHandle, r: RequestState): void {
    let st = this.states.get(handle.id);
    if (st === undefined) {
      st = { handle, pending: [], active: [], cache: null, slotLen: new Int32Array(0), free: [], buffers: null };
      this.states.set(handle.id, st);
    }
    st.pending.push(r);
    this.schedule();
  }

  /** True while any request is queued or decoding. */
  get busy(): boolean {
    return this.states.size > 0;
  }

  /** Fails the requests of a sampler that is going away. */
  drop(samplerId: string, reason: Error): void {
    const st = this.states.get(samplerId);
    if (st === undefined) return;
    const reqs = new Set<RequestState>([...st.pending, ...st.active.map((s) => s.request)]);
    for (const r of reqs) r.reject(reason);
    st.cache?.release();
    this.states.delete(samplerId);
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.tick());
  }

  private tick(): void {
    this.scheduled = false;
    for (const st of [...this.states.values()]) {
      try {
        this.admit(st);
        if (st.active.length > 0) this.step(st);
      } catch (err) {
        // Something no request validation caught (out of memory, a kernel error): fail what was
        // running on this sampler rather than the whole worker.
        const e = err instanceof Error ? err : new Error(String(err));
        const reqs = new Set<RequestState>([...st.active.map((s) => s.request)]);
        for (const r of reqs) r.reject(e);
        st.active = [];
        st.cache?.release();
        st.cache = null;
      }
      if (st.pending.length === 0 && st.active.length === 0) this.states.delete(st.handle.id);
    }
    if (this.states.size > 0) this.schedule();
  }

  /** Makes room in the cache for `slots` more sequences of up to `len` positions. */
  private reserve(st: SamplerState, slots: number, len: number): number[] {
    const inUse = (st.cache?.slots ?? 0) - st.free.length;
    const needSlots = inUse + slots;
    const needLen = Math.min(nextPow2(Math.max(len, 64)), Math.max(len, st.handle.limits.contextLength));
    const model = st.handle.model();
    if (st.cache === null || needSlots > st.cache.slots || len > st.cache.maxLen) {
      const newSlots = Math.max(nextPow2(needSlots), st.cache?.slots ?? 0);
      const newLen = Math.max(needLen, st.cache?.maxLen ?? 0);
      const old = st.cache;
      st.cache = old === null ? new KvCache(model.weights.config, newSlots, newLen, model.kvDtype, model.kernels) : old.grown(newSlots, newLen, st.slotLen);
      old?.release();
      this.stats.cacheBytes = Math.max(this.stats.cacheBytes, st.cache.bytes);
      const lens = new Int32Array(newSlots);
      lens.set(st.slotLen);
      st.slotLen = lens;
      for (let s = old?.slots ?? 0; s < newSlots; s++) st.free.push(s);
    }
    st.free.sort((a, b) => a - b);
    return st.free.splice(0, slots);
  }

  private admit(st: SamplerState): void {
    const group: Prefill[] = [];
    let samples = st.active.length;
    // compute_logprobs requests of this group: how many, and their longest prompt.
    let scored = 0;
    let scoredLen = 0;
    while (st.pending.length > 0) {
      const r = st.pending[0];
      // A compute_logprobs request takes one slot for its prefill.
      const slotsWanted = r.logprobsOnly === true ? 1 : r.req.numSamples;
      if (samples > 0 && samples + slotsWanted > MAX_BATCH) break;
      if (r.logprobsOnly === true && scored > 0 && (scored + 1) * Math.max(scoredLen, r.req.prompt.length) > LOGPROBS_POSITIONS) break;
      st.pending.shift();
      try {
        // A compute_logprobs request over a 16-bit decode cache runs in the prefill's own float32
        // cache only (see prefill).
        const ownCache = r.logprobsOnly === true && st.handle.model().kvDtype !== "f32";
        const slots = ownCache ? [] : this.reserve(st, slotsWanted, r.req.prompt.length + r.req.maxTokens);
        group.push({ r, slots, wantPrompt: r.req.promptLogprobs || r.req.topkPromptLogprobs > 0, last: null });
        samples += slotsWanted;
        if (r.logprobsOnly === true) {
          scored++;
          scoredLen = Math.max(scoredLen, r.req.prompt.length);
        }
      } catch (err) {
        r.reject(err instanceof Error ? err : new Error(String(err)));
      }
    }
    if (group.length === 0) return;
    try {
      this.prefill(st, group);
    } catch (err) {
      for (const g of group) {
        for (const s of g.slots) this.release(st, s);
        g.r.reject(err instanceof Error ? err : new Error(String(err)));
      }
    }
  }

  /**
   * Runs the prompts of `group` through the model, packed into forward calls of up to
   * PREFILL_TOKENS tokens (a prompt that does not fit continues in the next call, attending to what
   * the earlier calls cached), then draws every sample's first token. Prompts always run over a
   * float32 cache: the decode cache itself when it is float32, else a cache of their own that lives
   * for this prefill, from which each sample request's prompt is then stored into its decode slot
   * (rounded to f16). So prompt logprobs, compute_logprobs and each sample's first token are the
   * float32 cache's whatever the sampling cache holds (docs/embedded-engine.md#the-kv-cache).
   */
  private prefill(st: SamplerState, group: Prefill[]): void {
    const model = st.handle.model();
    const { vocabSize: V, hiddenSize: D } = model.weights.config;
    const calls = this.prefillCalls(group);
    const separate = model.kvDtype !== "f32";
    // Where each prompt runs: its first decode slot, or a slot of the prefill cache that is
    // taken at its first call and given back after its last (so the cache holds only the prompts
    // that overlap in time, not the whole group).
    const at = new Map<Prefill, number>();
    let into: KvCache;
    if (!separate) {
      into = st.cache as KvCache;
      for (const g of group) at.set(g, g.slots[0]);
    } else {
      const free: number[] = [];
      let slots = 0;
      for (const segs of calls) {
        for (const { g, from } of segs) if (from === 0) at.set(g, free.pop() ?? slots++);
        for (const { g, to } of segs) if (to === g.r.req.prompt.length) free.push(at.get(g) as number);
      }
      into = new KvCache(model.weights.config, slots, Math.max(...group.map((g) => g.r.req.prompt.length)), "f32", model.kernels);
    }
    // The prefill's own cache goes back at once, also when a forward call fails.
    try {
      for (const segs of calls) {
        const n = segs.reduce((a, s) => a + s.to - s.from, 0);
        const tokens = new Int32Array(n);
        const positions = new Int32Array(n);
        const slots = new Int32Array(n);
        // Rows whose logits are needed: every prompt row when prompt logprobs are asked, else each
        // prompt's last row. `owner[i]` is the segment of picked row i.
        const picked: number[] = [];
        const owner: number[] = [];
        let o = 0;
        segs.forEach(({ g, from: a, to: b }, si) => {
          const T = g.r.req.prompt.length;
          tokens.set(g.r.req.prompt.subarray(a, b), o);
          for (let t = a; t < b; t++) {
            positions[o + t - a] = t;
            slots[o + t - a] = at.get(g) as number;
            if (g.wantPrompt || t === T - 1) {
              picked.push(o + t - a);
              owner.push(si);
            }
          }
          o += b - a;
        });
        const hidden = forwardHidden(model, into, tokens, positions, slots, Int32Array.from(picked));
        for (const { g, to } of segs) {
          if (!separate) st.slotLen[g.slots[0]] = to;
          else if (to === g.r.req.prompt.length && g.r.logprobsOnly !== true) {
            (st.cache as KvCache).importSlot(model.kernels, into, at.get(g) as number, g.slots[0], to);
            st.slotLen[g.slots[0]] = to;
          }
        }
        for (let a = 0; a < picked.length; a += LOGIT_CHUNK) {
          const rows = Math.min(LOGIT_CHUNK, picked.length - a);
          const logits = headLogits(model, hidden.subarray(a * D, (a + rows) * D), rows);
          for (let i = 0; i < rows; i++) {
            const seg = segs[owner[a + i]];
            const t = positions[picked[a + i]];
            this.promptRow(seg.g, t, logits.subarray(i * V, (i + 1) * V));
          }
        }
      }
    } finally {
      if (separate) into.release();
    }
    for (const g of group) {
      if (g.r.logprobsOnly === true) {
        if (!separate) this.release(st, g.slots[0]);
        g.r.resolve({ sequences: [], prompt_logprobs: g.r.promptLogprobs });
      } else {
        this.start(st, g);
      }
    }
    this.finishDone(st);
  }

  /** The group's prompts cut into forward calls of up to prefillTokens tokens, in order. */
  private prefillCalls(group: Prefill[]): { g: Prefill; from: number; to: number }[][] {
    const calls: { g: Prefill; from: number; to: number }[][] = [];
    let gi = 0;
    let from = 0;
    while (gi < group.length) {
      const segs: { g: Prefill; from: number; to: number }[] = [];
      let n = 0;
      while (gi < group.length && n < this.prefillTokens) {
        const g = group[gi];
        const T = g.r.req.prompt.length;
        const to = Math.min(T, from + this.prefillTokens - n);
        segs.push({ g, from, to });
        n += to - from;
        if (to === T) {
          gi++;
          from = 0;
        } else {
          from = to;
        }
      }
      calls.push(segs);
    }
    return calls;
  }

  /** Takes the logits row at prompt position t: a prompt logprob, or the first token's row. */
  private promptRow(g: Prefill, t: number, z: Float32Array): void {
    const { req } = g.r;
    const T = req.prompt.length;
    if (g.wantPrompt) {
      if (t === 0) {
        if (req.promptLogprobs) g.r.promptLogprobs = [null];
        if (req.topkPromptLogprobs > 0) g.r.topk = [null];
      }
      if (t + 1 < T) {
        g.r.promptLogprobs?.push(rawLogprob(z, req.prompt[t + 1]));
        g.r.topk?.push(topLogprobs(z, req.topkPromptLogprobs));
      }
    }
    if (t === T - 1) g.last = Float32Array.from(z);
  }

  /**
   * Points the other samples of a prefilled prompt at its slot and draws each sample's first token.
   * They read the prompt's K/V from slots[0] (which stays theirs until the whole request is done)
   * and keep their own slots for what they generate; only a recurrent state is copied.
   */
  private start(st: SamplerState, g: Prefill): void {
    const { r, slots } = g;
    const { req } = r;
    const T = req.prompt.length;
    const cache = st.cache as KvCache;
    for (let i = 1; i < slots.length; i++) {
      cache.copyRecurrentSlot(slots[0], slots[i]);
      st.slotLen[slots[i]] = T;
    }
    const params: ChooseParams = { temperature: req.temperature, topK: req.topK, topP: req.topP };
    r.sequences = slots.map((slot, i) => ({
      request: r,
      slot,
      prefixSlot: slots[0],
      prefixLen: i === 0 ? 0 : T,
      seed: sampleSeed(req.seed, i),
      tokens: [],
      logprobs: [],
      matcher: r.decoder !== null ? new StopStringMatcher(req.stopStrings, r.decoder) : null,
      stopReason: null,
    }));
    const drawer = this.buffers(st).drawer;
    const last = g.last as Float32Array;
    for (const s of r.sequences) {
      drawer.set(0, params, uniformAt(s.seed, 0));
      drawer.run(st.handle.model().kernels, last, last.length, 1);
      this.accept(s, drawer.tokens[0], drawer.logprobs[0]);
    }
    st.active.push(...r.sequences);
  }

  private buffers(st: SamplerState): StepBuffers {
    if (st.buffers === null) st.buffers = new StepBuffers(st.handle.model().weights.config.vocabSize);
    return st.buffers;
  }

  private accept(s: Sequence, token: number, logprob: number): void {
    const req = s.request.req;
    s.tokens.push(token);
    s.logprobs.push(logprob);
    if (req.stopTokens.has(token)) s.stopReason = "stop";
    else if (s.matcher?.matches(s.tokens)) s.stopReason = "stop";
    else if (s.tokens.length >= req.maxTokens) s.stopReason = "length";
  }

  private step(st: SamplerState): void {
    // A sample that stopped waits for its request's other samples without being decoded further:
    // its tokens end at its stop, and it costs no more rows.
    const seqs = st.active.filter((s) => s.stopReason === null);
    const n = seqs.length;
    if (n === 0) {
      this.finishDone(st);
      return;
    }
    const model = st.handle.model();
    const cache = st.cache as KvCache;
    const V = model.weights.config.vocabSize;
    const b = this.buffers(st);
    const { tokens, positions, slots, prefix, drawer } = b;
    // One forward per MAX_BATCH sequences (a single request may ask for more samples than that).
    for (let c0 = 0; c0 < n; c0 += MAX_BATCH) {
      const m = Math.min(MAX_BATCH, n - c0);
      let shared = false;
      for (let i = 0; i < m; i++) {
        const s = seqs[c0 + i];
        tokens[i] = s.tokens[s.tokens.length - 1];
        positions[i] = st.slotLen[s.slot];
        slots[i] = s.slot;
        prefix.slots[i] = s.prefixSlot;
        prefix.lens[i] = s.prefixLen;
        if (s.prefixLen > 0) {
          shared = true;
          this.stats.sharedPromptRows++;
        }
        drawer.set(i, s.request.req, uniformAt(s.seed, s.tokens.length));
      }
      const rows = { slots: prefix.slots.subarray(0, m), lens: prefix.lens.subarray(0, m) };
      const hidden = forwardHidden(model, cache, tokens.subarray(0, m), positions.subarray(0, m), slots.subarray(0, m), null, shared ? rows : null);
      const logits = headLogits(model, hidden, m, b.logitsFor(m));
      drawer.run(model.kernels, logits, V, m);
      for (let i = 0; i < m; i++) {
        st.slotLen[seqs[c0 + i].slot]++;
        this.accept(seqs[c0 + i], drawer.tokens[i], drawer.logprobs[i]);
      }
    }
    this.stats.steps++;
    this.stats.tokens += n;
    this.stats.maxBatch = Math.max(this.stats.maxBatch, n);
    this.finishDone(st);
  }

  private release(st: SamplerState, slot: number): void {
    st.slotLen[slot] = 0;
    if (!st.free.includes(slot)) st.free.push(slot);
  }

  /** Replies to requests whose samples all stopped and frees their slots. */
  private finishDone(st: SamplerState): void {
    const finished = new Set<RequestState>();
    for (const s of st.active) if (s.stopReason !== null && s.request.sequences.every((x) => x.stopReason !== null)) finished.add(s.request);
    st.active = st.active.filter((s) => !finished.has(s.request));
    for (const r of finished) {
      for (const s of r.sequences) this.release(st, s.slot);
      const out: SampleResult = {
        sequences: r.sequences.map((s) => ({ stop_reason: s.stopReason as "stop" | "length", tokens: s.tokens, logprobs: s.logprobs })),
      };
      if (r.promptLogprobs !== undefined) out.prompt_logprobs = r.promptLogprobs;
      if (r.topk !== undefined) out.topk_prompt_logprobs = r.topk;
      r.resolve(out);
    }
    if (st.active.length === 0 && st.pending.length === 0) {
      // Idle: give the cache's and the buffers' memory back (a new request allocates fresh ones).
      st.cache?.release();
      st.cache = null;
      st.slotLen = new Int32Array(0);
      st.free = [];
      st.buffers = null;
      releaseScratch(st.handle.model());
    }
  }
}

/**
 * Logprobs of every prompt token given the ones before it (first entry null), with its own
 * one-slot cache, outside the decode batches: float32 like every scoring of given tokens, whatever
 * the sampling cache holds, unless `kvDtype` says (tests measuring what f16 would cost).
 */
export function computePromptLogprobs(model: InferenceModel, prompt: Int32Array, kvDtype: KvDtype = "f32"): (number | null)[] {
  const T = prompt.length;
  const { vocabSize: V, hiddenSize: D } = model.weights.config;
  const cache = new KvCache(model.weights.config, 1, T, kvDtype);
  const hadScratch = model.scratch !== null;
  const rows = Int32Array.from({ length: Math.max(T - 1, 0) }, (_, i) => i);
  const hidden = forwardHidden(
    model,
    cache,
    prompt,
    Int32Array.from({ length: T }, (_, i) => i),
    new Int32Array(T),
    rows,
  );
  const out: (number | null)[] = [null];
  for (let a = 0; a < T - 1; a += LOGIT_CHUNK) {
    const n = Math.min(LOGIT_CHUNK, T - 1 - a);
    const logits = headLogits(model, hidden.subarray(a * D, (a + n) * D), n);
    for (let i = 0; i < n; i++) out.push(rawLogprob(logits.subarray(i * V, (i + 1) * V), prompt[a + i + 1]));
  }
  // A sampler that is not decoding keeps no buffers.
  if (!hadScratch) releaseScratch(model);
  return out;
}
