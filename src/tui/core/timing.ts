// The time/* metrics of one step as a breakdown: single spans and `:total` aggregates, sorted.
import type { MetricRow } from "./series.ts";

export interface TimingEntry {
  name: string;
  seconds: number;
  /** For aggregated spans: how many times it ran and the longest. */
  count?: number;
  max?: number;
}

/**
 * `time/<span>` (single) or `time/<span>:total|count|mean|max` (aggregated), docs/cookbook-parity.md#supervised-metrics. `time/total`
 * is returned separately as the step's wall time.
 */
export function timingBreakdown(row: MetricRow): { total?: number; entries: TimingEntry[] } {
  const byName = new Map<string, TimingEntry>();
  let total: number | undefined;
  for (const [key, value] of Object.entries(row)) {
    if (!key.startsWith("time/") || typeof value !== "number" || !Number.isFinite(value)) continue;
    const rest = key.slice(5);
    if (rest === "total") {
      total = value;
      continue;
    }
    const colon = rest.lastIndexOf(":");
    const name = colon >= 0 ? rest.slice(0, colon) : rest;
    const part = colon >= 0 ? rest.slice(colon + 1) : "value";
    const entry = byName.get(name) ?? { name, seconds: Number.NaN };
    if (part === "value" || part === "total") entry.seconds = value;
    else if (part === "count") entry.count = value;
    else if (part === "max") entry.max = value;
    else if (part === "mean" && Number.isNaN(entry.seconds) && entry.count !== undefined) entry.seconds = value * entry.count;
    byName.set(name, entry);
  }
  // An aggregate with only mean and count left: total = mean × count.
  for (const [key, value] of Object.entries(row)) {
    if (!key.endsWith(":mean") || typeof value !== "number") continue;
    const e = byName.get(key.slice(5, -5));
    if (e && Number.isNaN(e.seconds)) e.seconds = value * (e.count ?? 1);
  }
  const entries = [...byName.values()].filter((e) => Number.isFinite(e.seconds)).sort((a, b) => b.seconds - a.seconds);
  return { total, entries };
}

/** `name  ██████ 1.23s 45%` lines, bars relative to the total (or the largest span). */
export function renderTimingBars(b: { total?: number; entries: TimingEntry[] }, width: number): string[] {
  const ref = b.total ?? Math.max(0, ...b.entries.map((e) => e.seconds));
  const nameW = Math.min(32, Math.max(4, ...b.entries.map((e) => e.name.length)));
  const barW = Math.max(4, width - nameW - 22);
  return b.entries.map((e) => {
    const frac = ref > 0 ? Math.min(1, e.seconds / ref) : 0;
    const bar = "█".repeat(Math.round(frac * barW)).padEnd(barW);
    const extra = e.count !== undefined ? ` ×${e.count}` : "";
    const name = e.name.length > nameW ? `${e.name.slice(0, nameW - 1)}…` : e.name.padEnd(nameW);
    return `${name} ${bar} ${e.seconds.toFixed(3)}s ${Math.round(frac * 100)}%${extra}`;
  });
}
