// `time/<span>` metrics for one training step: a span seen once gives `time/name`; a repeated one
// gives `time/name:total|count|mean|max`; `time/total` covers the whole step. Each span also keeps
// when it started, so the run's trace (src/log/trace.ts) can lay the steps out on a timeline.
import { performance } from "node:perf_hooks";

/** One timed span: wall-clock start in epoch microseconds and its duration in microseconds. */
export interface TimedSpan {
  name: string;
  startUs: number;
  durationUs: number;
}

/** Epoch microseconds of a `performance.now()` reading. */
function epochUs(now: number): number {
  return Math.round((performance.timeOrigin + now) * 1000);
}

export class StepTimer {
  private readonly spans = new Map<string, number[]>();
  private readonly timed: TimedSpan[] = [];
  private readonly started = performance.now();

  /** Times `fn` (sync or async) under `name`, in seconds. */
  async span<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.finish(name, t0);
    }
  }

  spanSync<T>(name: string, fn: () => T): T {
    const t0 = performance.now();
    try {
      return fn();
    } finally {
      this.finish(name, t0);
    }
  }

  private finish(name: string, t0: number): void {
    const t1 = performance.now();
    this.timed.push({ name, startUs: epochUs(t0), durationUs: Math.round((t1 - t0) * 1000) });
    this.record(name, (t1 - t0) / 1000);
  }

  /** A duration measured elsewhere: counted in the metrics, absent from the trace (no start). */
  record(name: string, seconds: number): void {
    const list = this.spans.get(name);
    if (list) list.push(seconds);
    else this.spans.set(name, [seconds]);
  }

  /** The spans timed so far, with the whole step (from construction until now) first, named `step`. */
  timeline(): TimedSpan[] {
    const start = epochUs(this.started);
    return [{ name: "step", startUs: start, durationUs: epochUs(performance.now()) - start }, ...this.timed];
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
