// Reading the human side of a run directory: the tail of logs.log (incrementally, bounded), a
// metrics.jsonl follower, and the last values of a metric for sparklines without reading it all.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { MetricsRecord } from "../log/metrics.ts";
import { JsonlTailReader, LogTailReader, readTailText } from "../log/tail.ts";

export { LogTailReader } from "../log/tail.ts";

export const LOG_FILE = "logs.log";
export const STDOUT_FILE = "stdout.log";

/** The last `n` lines of a run's logs.log (falling back to stdout.log). */
export function readLogTail(logDir: string, n = 20): string[] {
  for (const f of [LOG_FILE, STDOUT_FILE]) {
    const r = new LogTailReader(join(logDir, f), n);
    if (r.read()) return r.lines;
  }
  return [];
}

/** Follows a run's metrics.jsonl. */
export type MetricsTailReader = JsonlTailReader<MetricsRecord>;

/** A tailer over a run's metrics.jsonl. */
export function metricsTailReader(logDir: string): MetricsTailReader {
  return new JsonlTailReader<MetricsRecord>(join(logDir, "metrics.jsonl"));
}

/** The last values of `key` in metrics.jsonl, reading only the file's tail (for sparklines). */
export function readMetricTail(logDir: string, key: string, maxBytes = 64 * 1024): number[] {
  const { text } = readTailText(join(logDir, "metrics.jsonl"), maxBytes);
  const out: number[] = [];
  for (const line of text.split("\n")) {
    if (!line.includes(`"${key}"`)) continue;
    try {
      const v = (JSON.parse(line) as Record<string, unknown>)[key];
      if (typeof v === "number" && Number.isFinite(v)) out.push(v);
    } catch {
      // a torn line
    }
  }
  return out;
}

/** config.json of a run directory as an object, or undefined when missing or unreadable. */
export function readRunConfig(logDir: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(readFileSync(join(logDir, "config.json"), "utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
