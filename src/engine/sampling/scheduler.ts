// The decode scheduler of the compute worker. Every sampler has one KV cache whose slots hold the
// sequences being generated. A request's prompt is prefilled once into one slot and copied to the
// slots of its other samples; then each scheduler tick runs ONE batched forward over the newest
// token of every unfinished sequence of that sampler, whichever request it belongs to. Requests
// that arrive while others decode join at the next tick. Ticks yield to the event loop
// (setImmediate), so training requests and new sample requests are taken in between.
//
// Sampling draws depend only on (sequence seed, step) (see rng.ts), so a sequence's tokens do
// not depend on which other sequences shared its batch; the floating-point results of a batched
// product can differ from a single-row one in the last bits, which flips a token only on a
// near-exact tie.
import { chooseToken, rawLogprob, topLogprobs, type ChooseParams } from "./choose.ts";
import { forwardHidden, headLogits, KvCache, type InferenceModel } from "./forward.ts";
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
export const MAX_BATCH = 64;
/** Prompt rows whose logits are materialised at once for prompt logprobs. */
const LOGIT_CHUNK = 64;

interface Sequence {
  readonly request: RequestState;
  readonly slot: number;
  readonly seed: number;
  readonly tokens: number[];
  readonly logprobs: number[];
  matcher: StopStringMatcher | null;
  stopReason: "stop" | "length" | null;
}

interface RequestState {
  readonly req: ResolvedSampleRequest;
  readonly resolve: (r: SampleResult) => void;
  readonly reject: (e: Error) => void;
  decoder: TokenDecoder | null;
  sequences: Sequence[];
  promptLogprobs?: (number | null)[];
  topk?: ([number, number][] | null)[];
}

interface SamplerState {
  readonly handle: SamplerHandle;
  pending: RequestState[];
  active: Sequence[];
  cache: KvCache | null;
  /** Positions held by each cache slot. */
  slotLen: Int32Array;
  free: number[];
}

function nextPow2(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

export class DecodeScheduler {
  private readonly states = new Map<string, SamplerState>();
  private scheduled = false;
  /** Decode steps and tokens run so far (diagnostics and tests). */
  readonly stats = { steps: 0, tokens: 0, maxBatch: 0 };

  /** Queues a request; the promise settles when all of its samples finished. */
  submit(handle: SamplerHandle, req: ResolvedSampleRequest): Promise<SampleResult> {
    return new Promise<SampleResult>((resolve, reject) => {
      const r: RequestState = { req, resolve, reject, decoder: null, sequences: [] };
      const enqueue = (): void => {
        let st = this.states.get(handle.id);
        if (st === undefined) {
          st = { handle, pending: [], active: [], cache: null, slotLen: new Int32Array(0), free: [] };
          this.states.set(handle.id, st);
        }
        st.pending.push(r);
        this.schedule();
      };
      if (req.stopStrings.length === 0) {
        enqueue();
        return;
      }
      handle.decoder().then((d) => {
        r.decoder = d;
        enqueue();
      }, (err: unknown) => reject(err instanceof Error ? err : new Error(String(err))));
    });
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
      st.cache = old === null ? new KvCache(model.weights.config, newSlots, newLen) : old.grown(newSlots, newLen, st.slotLen);
      const lens = new Int32Array(newSlots);
      lens.set(st.slotLen);
      st.slotLen = lens;
      for (let s = old?.slots ?? 0; s < newSlots; s++) st.free.push(s);
    }
    st.free.sort((a, b) => a - b);
    return st.free.splice(0, slots);
  }

  private admit(st: SamplerState): void {
    while (st.pending.length > 0) {
      const r = st.pending[0];
      if (st.active.length > 0 && st.active.length + r.req.numSamples > MAX_BATCH) return;
      st.pending.shift();
      try {
        this.prefill(st, r);
      } catch (err) {
        r.reject(err instanceof Error ? err : new Error(String(err)));
      }
    }
  }

  private prefill(st: SamplerState, r: RequestState): void {
    const { req } = r;
    const T = req.prompt.length;
    const slots = this.reserve(st, req.numSamples, T + req.maxTokens);
    try {
      this.prefillInto(st, r, slots);
    } catch (err) {
      for (const s of slots) this.release(st, s);
      throw err;
    }
  }

  private prefillInto(st: SamplerState, r: RequestState, slots: number[]): void {
    const { req } = r;
    const T = req.prompt.length;
    const model = st.handle.model();
    const cache = st.cache as KvCache;
    const V = model.weights.config.vocabSize;
    const s0 = slots[0];
    const wantPrompt = req.promptLogprobs || req.topkPromptLogprobs > 0;
    const rows = wantPrompt ? Int32Array.from({ length: T }, (_, i) => i) : Int32Array.of(T - 1);
    const hidden = forwardHidden(model, cache, req.prompt, Int32Array.from({ length: T }, (_, i) => i), new Int32Array(T).fill(s0), rows);
    st.slotLen[s0] = T;
    const D = model.weights.config.hiddenSize;
    let last: Float32Array;
    if (wantPrompt) {
      const lp: (number | null)[] = [null];
      const topk: ([number, number][] | null)[] = [null];
      last = new Float32Array(V);
      for (let a = 0; a < T; a += LOGIT_CHUNK) {
        const n = Math.min(LOGIT_CHUNK, T - a);
        const logits = headLogits(model, hidden.subarray(a * D, (a + n) * D), n);
        for (let i = 0; i < n; i++) {
          const t = a + i;
          const z = logits.subarray(i * V, (i + 1) * V);
          if (t + 1 < T) {
            lp.push(rawLogprob(z, req.prompt[t + 1]));
            if (req.topkPromptLogprobs > 0) topk.push(topLogprobs(z, req.topkPromptLogprobs));
          } else {
            last.set(z);
          }
        }
      }
      if (req.promptLogprobs) r.promptLogprobs = lp;
      if (req.topkPromptLogprobs > 0) r.topk = topk;
    } else {
      last = headLogits(model, hidden, 1);
    }
    for (let i = 1; i < slots.length; i++) {
      cache.copySlot(s0, slots[i], T);
      st.slotLen[slots[i]] = T;
    }
    const params: ChooseParams = { temperature: req.temperature, topK: req.topK, topP: req.topP };
    r.sequences = slots.map((slot, i) => ({
      request: r, slot, seed: sampleSeed(req.seed, i), tokens: [], logprobs: [],
      matcher: r.decoder !== null ? new StopStringMatcher(req.stopStrings, r.decoder) : null, stopReason: null,
    }));
    for (const s of r.sequences) this.accept(s, chooseToken(last, params, uniformAt(s.seed, 0)));
    st.active.push(...r.sequences);
    this.finishDone(st);
  }

  private accept(s: Sequence, chosen: { token: number; logprob: number }): void {
    const req = s.request.req;
    s.tokens.push(chosen.token);
    s.logprobs.push(chosen.logprob);
    if (req.stopTokens.has(chosen.token)) s.stopReason = "stop";
    else if (s.matcher !== null && s.matcher.matches(s.tokens)) s.stopReason = "stop";
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
    const tokens = new Int32Array(n);
    const positions = new Int32Array(n);
    const slots = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const s = seqs[i];
      tokens[i] = s.tokens[s.tokens.length - 1];
      positions[i] = st.slotLen[s.slot];
      slots[i] = s.slot;
    }
    const all = Int32Array.from({ length: n }, (_, i) => i);
    const hidden = forwardHidden(model, cache, tokens, positions, slots, all);
    const logits = headLogits(model, hidden, n);
    const V = model.weights.config.vocabSize;
    for (let i = 0; i < n; i++) {
      const s = seqs[i];
      st.slotLen[s.slot]++;
      const req = s.request.req;
      const params: ChooseParams = { temperature: req.temperature, topK: req.topK, topP: req.topP };
      this.accept(s, chooseToken(logits.subarray(i * V, (i + 1) * V), params, uniformAt(s.seed, s.tokens.length)));
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
    if (finished.size === 0) return;
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
      // Idle: give the cache's memory back (a new request allocates a fresh one).
      st.cache = null;
      st.slotLen = new Int32Array(0);
      st.free = [];
    }
  }
}

/**
 * Logprobs of every prompt token given the ones before it (first entry null), with its own
 * one-slot cache, outside the decode batches.
 */
export function computePromptLogprobs(model: InferenceModel, prompt: Int32Array): (number | null)[] {
  const T = prompt.length;
  const { vocabSize: V, hiddenSize: D } = model.weights.config;
  const cache = new KvCache(model.weights.config, 1, T);
  const rows = Int32Array.from({ length: Math.max(T - 1, 0) }, (_, i) => i);
  const hidden = forwardHidden(model, cache, prompt, Int32Array.from({ length: T }, (_, i) => i), new Int32Array(T), rows);
  const out: (number | null)[] = [null];
  for (let a = 0; a < T - 1; a += LOGIT_CHUNK) {
    const n = Math.min(LOGIT_CHUNK, T - 1 - a);
    const logits = headLogits(model, hidden.subarray(a * D, (a + n) * D), n);
    for (let i = 0; i < n; i++) out.push(rawLogprob(logits.subarray(i * V, (i + 1) * V), prompt[a + i + 1]));
  }
  return out;
}
