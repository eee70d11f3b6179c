// Reward histograms for a transcript iteration: equal-width bins and a bar rendering.
export interface Histogram {
  edges: number[];
  counts: number[];
}

export function histogram(values: readonly number[], bins: number): Histogram {
  const finite = values.filter((v) => Number.isFinite(v));
  const k = Math.max(1, Math.floor(bins));
  if (finite.length === 0) return { edges: [], counts: [] };
  let lo = Math.min(...finite);
  let hi = Math.max(...finite);
  if (lo === hi) {
    lo -= 0.5;
    hi += 0.5;
  }
  const edges = Array.from({ length: k + 1 }, (_, i) => lo + ((hi - lo) * i) / k);
  const counts = new Array(k).fill(0);
  for (const v of finite) counts[Math.min(k - 1, Math.floor(((v - lo) / (hi - lo)) * k))]++;
  return { edges, counts };
}

/** One line per bin: `[lo, hi)  ████ n`, bars scaled to `barWidth`. */
export function renderHistogram(h: Histogram, barWidth: number, fmt: (v: number) => string = (v) => v.toFixed(2)): string[] {
  const max = Math.max(1, ...h.counts);
  const labels = h.counts.map((_, i) => `${fmt(h.edges[i])}..${fmt(h.edges[i + 1])}`);
  const lw = Math.max(0, ...labels.map((l) => l.length));
  return h.counts.map((c, i) => `${labels[i].padStart(lw)} ${"█".repeat(Math.round((c / max) * Math.max(1, barWidth)))} ${c}`);
}

/** The reward range of bin `i`: [lo, hi) — the last bin also holds its upper edge. */
export function binRange(h: Histogram, i: number): { min: number; below?: number; max?: number } {
  const lo = h.edges[i];
  const hi = h.edges[i + 1];
  return i === h.counts.length - 1 ? { min: lo, max: hi } : { min: lo, below: hi };
}
