// `time/<span>` metrics for one training step: a span seen once gives `time/name`; a repeated one
// gives `time/name:total|count|mean|max`; `time/total` covers the whole step.
import { performance } from "node:perf_hooks";

export class StepTimer {
  private readonly spans = new Map<string, number[]>();
  private readonly started = performance.now();

  /** Times `fn` (sync or async) under `name`, in seconds. */
  async span<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.record(name, (performance.now() - t0) / 1000);
    }
  }

  spanSync<T>(name: string, fn: () => T): T {
    const t0 = performance.now();
    try {
      return fn();
    } finally {
      this.record(name, (performance.now() - t0) / 1000);
    }
  }

  record(name: string, seconds: number): void {
    const list = this.spans.get(name);
    if (list) list.push(seconds);
    else this.spans.set(name, [seconds]);
  }

  metrics(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, durations] of this.spans) {
      if (durations.length === 1) {
        out[`time/${name}`] = durations[0];
        continue;
      }
      const total = durations.reduce((a, b) => a + b, 0);
      out[`time/${name}:total`] = total;
      out[`time/${name}:count`] = durations.length;
      out[`time/${name}:mean`] = total / durations.length;
      out[`time/${name}:max`] = Math.max(...durations);
    }
    out["time/total"] = (performance.now() - this.started) / 1000;
    return out;
  }
}
