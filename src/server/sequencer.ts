// Per-model request ordering (docs/protocol.md#identifiers-ordering-and-tinker-paths, docs/protocol.md#pipelining): a model's requests run in seq_id order whatever
// order they arrive in; a later seq_id is held until the earlier ones arrive. (model, seq_id) is an
// idempotency key: a repeat with the same payload gets the original request_id, a different
// payload is a 409. A seq_id that never arrives (its request was refused before the seq_id could be
// read: bad JSON, a body over the size limit) would hold the later ones forever, so after a grace
// time the held requests fail with an error naming the gap and the model moves on past it.
import { HttpError } from "./http.ts";

/** How far ahead of the next expected seq_id a request may be (bounds what a client can park here). */
export const MAX_SEQ_AHEAD = 4096;
/** How many past seq_ids keep their payload digest for duplicate detection. */
const REMEMBERED = 4096;
/** Default wait for a missing seq_id; longer than any upload of the first chunk of a parallel post. */
export const DEFAULT_GAP_TIMEOUT_MS = 120_000;

interface Held {
  run: () => Promise<unknown>;
  fail: (err: Error) => void;
}

export class ModelSequencer {
  private nextSeq = 1;
  private maxSeen = 0;
  private readonly seen = new Map<number, { digest: string; requestId: string }>();
  private readonly held = new Map<number, Held>();
  private chain: Promise<unknown> = Promise.resolve();
  private closedReason: string | undefined;
  private gapTimer: NodeJS.Timeout | undefined;
  /** seq_ids given up on (gap skipped), so a late arrival gets a clear answer. */
  private readonly skipped = new Set<number>();

  constructor(
    private readonly what: string,
    private readonly gapTimeoutMs = DEFAULT_GAP_TIMEOUT_MS,
  ) {}

  /**
   * Accepts a request: returns its request id and whether it is new. `seqId` undefined means
   * "next in arrival order" (clients that send none).
   */
  accept(seqId: number | undefined, digest: string, newId: () => string): { seqId: number; requestId: string; isNew: boolean } {
    if (this.closedReason !== undefined) throw new HttpError(404, `${this.what}: ${this.closedReason}`);
    const seq = seqId ?? this.maxSeen + 1;
    if (!Number.isSafeInteger(seq) || seq < 1) throw new HttpError(400, `${this.what}: seq_id ${seqId} is invalid; expected an integer ≥ 1`);
    const prior = this.seen.get(seq);
    if (prior !== undefined) {
      if (prior.digest === digest) return { seqId: seq, requestId: prior.requestId, isNew: false };
      throw new HttpError(409, `Training request sequence number was reused: ${this.what} already has a different request with seq_id ${seq}`);
    }
    if (this.skipped.has(seq)) {
      throw new HttpError(
        409,
        `${this.what}: seq_id ${seq} arrived after the server gave up waiting for it (${this.gapTimeoutMs / 1000} s); the requests after it failed and the model has moved on — resend from a new training client`,
      );
    }
    if (seq < this.nextSeq) {
      throw new HttpError(409, `Training request sequence number was reused: ${this.what} already ran seq_id ${seq} (next expected ${this.nextSeq})`);
    }
    if (seq >= this.nextSeq + MAX_SEQ_AHEAD) {
      throw new HttpError(400, `${this.what}: seq_id ${seq} is more than ${MAX_SEQ_AHEAD} ahead of the next expected seq_id ${this.nextSeq}`);
    }
    const requestId = newId();
    this.seen.set(seq, { digest, requestId });
    this.maxSeen = Math.max(this.maxSeen, seq);
    if (this.seen.size > 2 * REMEMBERED) {
      for (const old of [...this.seen.keys()]) if (old <= this.maxSeen - REMEMBERED) this.seen.delete(old);
    }
    return { seqId: seq, requestId, isNew: true };
  }

  /**
   * Runs `run` once every earlier seq_id has been submitted: `run` does the submission step (its
   * promise resolves when the engine has queued the work), so submissions reach the engine one at a
   * time in seq_id order. `fail` is called instead if the model goes away first.
   */
  schedule(seqId: number, run: () => Promise<unknown>, fail: (err: Error) => void): void {
    this.held.set(seqId, { run, fail });
    let advanced = false;
    for (;;) {
      const next = this.held.get(this.nextSeq);
      if (next === undefined) break;
      this.held.delete(this.nextSeq);
      this.nextSeq++;
      advanced = true;
      this.chain = this.chain.then(next.run).catch(() => undefined);
    }
    // The grace time runs from the last progress: restart it whenever the queue moved.
    if (advanced || this.held.size === 0) this.clearGapTimer();
    if (this.held.size > 0 && this.gapTimer === undefined) {
      this.gapTimer = setTimeout(() => this.skipGap(), this.gapTimeoutMs);
      this.gapTimer.unref();
    }
  }

  /** Fails everything held behind the missing seq_id(s) and continues after the highest held one. */
  private skipGap(): void {
    this.gapTimer = undefined;
    if (this.held.size === 0) return;
    const waiting = [...this.held.keys()].sort((a, b) => a - b);
    const last = waiting[waiting.length - 1]!;
    const missing: number[] = [];
    for (let k = this.nextSeq; k < last; k++) if (!this.held.has(k)) missing.push(k);
    const shown = missing.length > 20 ? `${missing.slice(0, 20).join(", ")}, … (${missing.length} in all)` : missing.join(", ");
    const err = new HttpError(
      400,
      `${this.what}: seq_id ${shown} never arrived within ${this.gapTimeoutMs / 1000} s, so seq_id ${waiting.join(", ")} waiting behind it did not run. ` +
        "A request refused before its seq_id could be read (bad JSON, a body over the size limit) leaves such a gap; check the earlier error, then continue from a new training client (or load the last checkpoint).",
    );
    for (const k of waiting) this.held.get(k)!.fail(err);
    this.held.clear();
    for (const k of missing) this.skipped.add(k);
    if (this.skipped.size > REMEMBERED) for (const k of [...this.skipped].slice(0, this.skipped.size - REMEMBERED)) this.skipped.delete(k);
    this.nextSeq = last + 1;
  }

  private clearGapTimer(): void {
    if (this.gapTimer !== undefined) clearTimeout(this.gapTimer);
    this.gapTimer = undefined;
  }

  /** Runs `task` after everything submitted so far (no seq_id of its own, e.g. unload). */
  after<T>(task: () => Promise<T>): Promise<T> {
    const p = this.chain.then(task);
    this.chain = p.catch(() => undefined);
    return p;
  }

  /** Seq_ids waiting for an earlier one. */
  get heldCount(): number {
    return this.held.size;
  }

  /** Refuses further requests and fails the held ones. */
  close(reason: string): void {
    this.closedReason = reason;
    this.clearGapTimer();
    for (const h of this.held.values()) h.fail(new HttpError(404, `${this.what}: ${reason}`));
    this.held.clear();
  }
}
