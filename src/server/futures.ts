// The server's futures: every queued request gets a request_id whose outcome retrieve_future
// long-polls for (docs/protocol.md#polling-for-results). Finished outcomes are kept for a while, then forgotten (404): a
// result that was handed out goes after a short grace time (long enough for a client to repeat a
// poll whose answer it lost), one nobody asked for after the retention time. Results hold the
// tensors of whole batches, so keeping them for an hour kept the server's memory high.
import { randomBytes } from "node:crypto";
import { errorCategory } from "./errors.ts";

export type FutureOutcome = { ok: true; json: unknown; proto?: () => Uint8Array } | { ok: false; error: string; category: "user" | "server" };

interface Entry {
  outcome?: FutureOutcome;
  finishedAt?: number;
  deliveredAt?: number;
  waiters: Set<() => void>;
}

export interface FinishedValue {
  json: unknown;
  /** The protobuf form, for results that have one (forward_backward, sample). */
  proto?: () => Uint8Array;
}

export class FutureStore {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly retentionMs: number,
    private readonly deliveredRetentionMs = Math.min(retentionMs, 60_000),
  ) {}

  newId(): string {
    return `req-${randomBytes(8).toString("hex")}`;
  }

  /** Registers a pending future under `id`. */
  create(id: string = this.newId()): string {
    this.entries.set(id, { waiters: new Set() });
    return id;
  }

  /** Settles `id` with what `work` resolves to, or with its error as a user/server failure. */
  settleWith(id: string, work: Promise<FinishedValue>): void {
    work.then(
      (v) => this.finish(id, { ok: true, json: v.json, proto: v.proto }),
      (err: unknown) => this.fail(id, err),
    );
  }

  fail(id: string, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    this.finish(id, { ok: false, error: message, category: errorCategory(err) });
  }

  private finish(id: string, outcome: FutureOutcome): void {
    const e = this.entries.get(id);
    if (e === undefined || e.outcome !== undefined) return;
    e.outcome = outcome;
    e.finishedAt = Date.now();
    for (const w of e.waiters) w();
    e.waiters.clear();
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  /**
   * The outcome of `id`, waiting up to `waitMs` for it; undefined while still pending, null when
   * the id is unknown. `signal` ends the wait early (client gone, server closing).
   */
  async wait(id: string, waitMs: number, signal: AbortSignal): Promise<FutureOutcome | undefined | null> {
    const e = this.entries.get(id);
    if (e === undefined) return null;
    if (e.outcome !== undefined || waitMs <= 0) return this.deliver(e);
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        e.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      signal.addEventListener("abort", done);
      e.waiters.add(done);
    });
    return signal.aborted ? e.outcome : this.deliver(e);
  }

  private deliver(e: Entry): FutureOutcome | undefined {
    if (e.outcome !== undefined) e.deliveredAt ??= Date.now();
    return e.outcome;
  }

  /** Forgets outcomes handed out more than the grace time ago, and the others after the retention time. */
  sweep(now = Date.now()): void {
    for (const [id, e] of this.entries) {
      if (e.deliveredAt !== undefined && now - e.deliveredAt > this.deliveredRetentionMs) this.entries.delete(id);
      else if (e.finishedAt !== undefined && now - e.finishedAt > this.retentionMs) this.entries.delete(id);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** Wakes every long poll (they then answer "still pending"); used on shutdown. */
  wakeAll(): void {
    for (const e of this.entries.values()) {
      for (const w of e.waiters) w();
      e.waiters.clear();
    }
  }
}
