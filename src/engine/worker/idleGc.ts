// Large typed arrays (weights, adapters, optimizer moments, KV caches) are freed only when V8 runs a
// full collection, and a worker that goes idle after a session ends never triggers one: the memory
// of released models and samplers then stays resident until the next burst of work. After a release
// we ask for one full collection once the worker has been quiet for a moment.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

type CollectGarbage = () => void;

function exposeGc(): CollectGarbage | undefined {
  const existing = (globalThis as { gc?: CollectGarbage }).gc;
  if (typeof existing === "function") return existing;
  try {
    setFlagsFromString("--expose-gc");
    const gc: unknown = runInNewContext("gc");
    return typeof gc === "function" ? (gc as CollectGarbage) : undefined;
  } catch {
    return undefined;
  }
}

export class IdleCollector {
  private timer: NodeJS.Timeout | undefined;
  private readonly gc: CollectGarbage | undefined;

  constructor(
    private readonly quietMs = 500,
    gc: CollectGarbage | undefined = exposeGc(),
  ) {
    this.gc = gc;
  }

  /** Something big was released: collect once no further release or request arrives for quietMs. */
  released(): void {
    if (this.gc === undefined) return;
    this.postpone();
  }

  /** A request arrived: a pending collection waits until the worker is quiet again. */
  busy(): void {
    if (this.timer !== undefined) this.postpone();
  }

  private postpone(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.gc?.();
    }, this.quietMs);
    // A pending collection must not keep an otherwise finished worker alive.
    this.timer.unref();
  }

  get pending(): boolean {
    return this.timer !== undefined;
  }
}
