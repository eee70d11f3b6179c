// Time as a dependency: every sleep, backoff and periodic timer of the HTTP client goes through a
// Clock so tests can run the retry rules without waiting.

export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
  /** Calls `fn` every `ms` without keeping the process alive; returns a cancel function. */
  every(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) =>
    new Promise((resolve) => {
      setTimeout(resolve, ms);
    }),
  every(ms, fn) {
    const timer = setInterval(fn, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};
