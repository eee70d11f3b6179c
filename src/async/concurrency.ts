// Bounded concurrency, shared by every layer that fans out: sampling requests under a server's
// limit, sandboxed test runs, teacher calls and benchmark examples.

/** Lets at most `limit()` tasks run at once (read at each start, so a server's limit can change). */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: () => number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit()) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await task();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

/** Maps `items` through `fn` with at most `limit` calls in flight; results keep the input order. */
export async function mapWithConcurrency<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`concurrency limit must be a positive integer, got ${limit}`);
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
