// A FIFO between async producers and consumers; `put` waits while a bounded queue is full.
export class AsyncQueue<T> {
  private readonly items: T[] = [];
  private readonly getters: ((item: T) => void)[] = [];
  private readonly putters: (() => void)[] = [];
  private closed = false;

  constructor(readonly capacity = Infinity) {}

  get size(): number {
    return this.items.length;
  }

  /** Waits for room; once the queue is closed the item is dropped instead. */
  async put(item: T): Promise<void> {
    while (!this.closed && this.getters.length === 0 && this.items.length >= this.capacity) {
      await new Promise<void>((resolve) => this.putters.push(resolve));
    }
    if (!this.closed) this.putNowait(item);
  }

  /** Releases every blocked `put` (their items are dropped) and refuses later ones; `get` keeps working. */
  close(): void {
    this.closed = true;
    for (const wake of this.putters.splice(0)) wake();
  }

  /** Ignores the capacity: for producers that must never block (results, sentinels). */
  putNowait(item: T): void {
    const getter = this.getters.shift();
    if (getter !== undefined) getter(item);
    else this.items.push(item);
  }

  async get(): Promise<T> {
    if (this.items.length > 0) {
      const item = this.items.shift() as T;
      this.putters.shift()?.();
      return item;
    }
    return new Promise<T>((resolve) => this.getters.push(resolve));
  }
}
