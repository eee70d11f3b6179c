// Caps concurrent sample requests at the server's sample_max_concurrent_requests.
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
