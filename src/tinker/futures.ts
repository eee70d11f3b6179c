// TinkerFuture helpers and the per-model ordering primitive shared by the engines (docs/protocol.md#futures-and-per-model-ordering, docs/protocol.md#pipelining).
import type { TinkerFuture } from "./clients.ts";
import { TimeoutError } from "./errors.ts";

/** A future over a promise. The promise is awaited once; result() may be called any number of times. */
export function futureFromPromise<T>(promise: Promise<T>): TinkerFuture<T> {
  // Nobody may ever call result(); keep an unobserved failure from crashing the process.
  promise.catch(() => undefined);
  return {
    result(timeoutMs?: number): Promise<T> {
      if (timeoutMs === undefined) return promise;
      return withTimeout(promise, timeoutMs);
    },
  };
}

export function resolvedFuture<T>(value: T): TinkerFuture<T> {
  return futureFromPromise(Promise.resolve(value));
}

export function rejectedFuture<T>(error: unknown): TinkerFuture<T> {
  return futureFromPromise(Promise.reject(error));
}

/** A future whose result is `fn(result of future)`, computed once. */
export function mapFuture<A, B>(future: TinkerFuture<A>, fn: (value: A) => B | Promise<B>): TinkerFuture<B> {
  return futureFromPromise(future.result().then(fn));
}

/** One future over several: resolves when all do, with `combine` of their results in order. */
export function combineFutures<A, B>(futures: TinkerFuture<A>[], combine: (values: A[]) => B): TinkerFuture<B> {
  return futureFromPromise(Promise.all(futures.map((f) => f.result())).then(combine));
}

/** Rejects with TimeoutError after `ms` without cancelling the underlying work. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    // Not unref'd: a caller awaiting a result with a deadline must get the TimeoutError even when
    // nothing else keeps the process alive; the timer is cleared as soon as the work settles.
    const timer = setTimeout(() => reject(new TimeoutError(`result not ready after ${ms} ms (the request keeps running)`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** Runs tasks one at a time in the order they were added; a failing task does not stop later ones. */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => T | Promise<T>): Promise<T> {
    const result = this.tail.then(() => task());
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves once everything added so far has settled. */
  drain(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}

/**
 * Per-model submission ordering: each submit() reserves the next seq_id(s) synchronously, at the
 * moment it is called, and runs `send` only after every earlier submission's `send` settled. So
 * requests reach the server (or the engine's queue) in seq_id order, while the results they return
 * (typically TinkerFutures) complete later on their own.
 */
export class OrderedSubmitter {
  private next: number;
  private readonly queue = new SerialQueue();

  constructor(firstSeqId = 1) {
    this.next = firstSeqId;
  }

  /** The seq_id the next submit() will get. */
  peekSeqId(): number {
    return this.next;
  }

  submit<T>(send: (seqId: number) => T | Promise<T>): Promise<T> {
    const seqId = this.next++;
    return this.queue.run(() => send(seqId));
  }

  /** Reserves `count` consecutive seq_ids for one logical call (e.g. the chunks of a forward_backward). */
  submitMany<T>(count: number, send: (seqIds: number[]) => T | Promise<T>): Promise<T> {
    const seqIds = Array.from({ length: count }, (_, i) => this.next + i);
    this.next += count;
    return this.queue.run(() => send(seqIds));
  }

  drain(): Promise<void> {
    return this.queue.drain();
  }
}
