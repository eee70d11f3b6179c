// The server's futures: every queued request gets a request_id whose outcome retrieve_future
// long-polls for (spec §4.5). Finished outcomes are kept for a while, then forgotten (404).
import { randomBytes } from "node:crypto";
import { errorCategory } from "./errors.ts";

export type FutureOutcome =
  | { ok: true; json: unknown; proto?: () => Uint8Array }
  | { ok: false; error: string; category: "user" | "server" };

interface Entry {
  outcome?: FutureOutcome;
  finishedAt?: number;
  waiters: Set<() => void>;
}

export interface FinishedValue {
  json: unknown;
  /** The protobuf form, for results that have one (forward_backward, sample). */
  proto?: () => Uint8Array;
}

export class FutureStore {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly retentionMs: number) {}

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
    if (e.outcome !== undefined || waitMs <= 0) return e.outcome;
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
    return e.outcome;
  }

  /** Forgets outcomes finished more than the retention time ago. */
  sweep(now = Date.now()): void {
    for (const [id, e] of this.entries) {
      if (e.finishedAt !== undefined && now - e.finishedAt > this.retentionMs) this.entries.delete(id);
    }
  }

  /** Wakes every long poll (they then answer "still pending"); used on shutdown. */
  wakeAll(): void {
    for (const e of this.entries.values()) {
      for (const w of e.waiters) w();
      e.waiters.clear();
    }
  }
}
