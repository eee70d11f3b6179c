// Metric series from metrics.jsonl records: which keys a run kind cares about, x by step or by
// elapsed time, and the list of numeric keys for the metric picker. Pure, no React.
import type { MetricColumns, TrainingKind } from "../../runs/index.ts";
import type { Values } from "./bucket.ts";
import { ema } from "./smoothing.ts";

export type XAxis = "step" | "time";

/** One record of metrics.jsonl as the dashboard holds it. */
export type MetricRow = Record<string, unknown>;

export interface Series {
  key: string;
  x: Values;
  y: Values;
  /** Every x and y is finite (see ChartLine.finite). */
  finite?: boolean;
}

/** The charts a dashboard opens with, per kind of training (docs/cookbook-parity.md#supervised-metrics and docs/cookbook-parity.md#rl-metric-names). */
export const DEFAULT_CHARTS: Record<TrainingKind | "other", readonly string[]> = {
  // test/pm_accuracy: a preference model is an SL run; test/win_rate: RLHF's RL stage;
  // env/all/called_tool: the share of episodes that call a tool (tool_use).
  sl: ["train_mean_nll", "test/nll", "learning_rate", "test/pm_accuracy"],
  rl: ["env/all/reward/total", "env/all/called_tool", "optim/kl_sample_train_v1", "optim/entropy", "env/all/ac_tokens_per_turn", "test/win_rate"],
  dpo: ["dpo_loss", "accuracy", "margin", "chosen_reward", "rejected_reward", "test/accuracy"],
  other: ["loss", "train_mean_nll", "learning_rate"],
};

/** Keys holding a step's duration in seconds, first present wins: they make the time axis. */
const STEP_DURATION_KEYS = ["time/total", "time/step"] as const;

/**
 * Elapsed seconds at the end of each row: the running sum of the step durations the run logged.
 * Rows without a duration add nothing, so the axis degrades to flat rather than lying.
 */
export function elapsedSeconds(rows: readonly MetricRow[]): number[] {
  const key = STEP_DURATION_KEYS.find((k) => rows.some((r) => typeof r[k] === "number"));
  return runningDuration(rows.map((r) => (key === undefined ? undefined : r[key])));
}

/** The running sum of each row's duration; rows without a positive finite one add nothing. */
function runningDuration(durations: ArrayLike<unknown>): number[] {
  const out: number[] = new Array(durations.length);
  let t = 0;
  for (let i = 0; i < durations.length; i++) {
    const d = durations[i];
    if (typeof d === "number" && Number.isFinite(d) && d > 0) t += d;
    out[i] = t;
  }
  return out;
}

/** The (x, y) points of one metric; rows where it is missing or not a finite number are skipped. */
export function buildSeries(rows: readonly MetricRow[], key: string, xAxis: XAxis = "step", elapsed?: readonly number[]): Series {
  const x: number[] = [];
  const y: number[] = [];
  const times = xAxis === "time" ? (elapsed ?? elapsedSeconds(rows)) : undefined;
  for (let i = 0; i < rows.length; i++) {
    const v = rows[i][key];
    if (typeof v !== "number" || !Number.isFinite(v)) continue;
    const step = rows[i].step;
    x.push(times ? times[i] : typeof step === "number" ? step : i);
    y.push(v);
  }
  return { key, x, y };
}

/** Every key with at least one numeric value (except `step`), sorted, for the metric picker. */
export function numericKeys(rows: readonly MetricRow[], known: Set<string> = new Set()): string[] {
  for (const r of rows) {
    for (const k in r) if (k !== "step" && typeof r[k] === "number") known.add(k);
  }
  return [...known].sort();
}

/**
 * Distillation runs log `teacher_kl` (and `teacher_kl/dataset_<i>` per dataset): their dashboard
 * opens with it, then each dataset's series when there are several, before the kind's charts.
 */
function distillationCharts(keys: readonly string[]): string[] {
  if (!keys.includes("teacher_kl")) return [];
  const perDataset = keys.filter((k) => k.startsWith("teacher_kl/dataset_"));
  return ["teacher_kl", ...(perDataset.length > 1 ? perDataset : [])];
}

/**
 * A mixture's per-source series after the kind's own charts: SL's `source/<name>/train_mean_nll`,
 * RL's `env/<source>/reward/total` (every tag but `all` when there are several).
 */
function mixtureCharts(keys: readonly string[]): string[] {
  const sl = keys.filter((k) => /^source\/[^/]+\/train_mean_nll$/.test(k));
  const rl = keys.filter((k) => /^env\/[^/]+\/reward\/total$/.test(k) && k !== "env/all/reward/total");
  return [...sl, ...(rl.length > 1 ? rl : [])];
}

/** The default charts of a kind that the run actually logged; falls back to the first keys. */
export function chartsFor(kind: TrainingKind | undefined, keys: readonly string[]): string[] {
  const wanted = DEFAULT_CHARTS[kind ?? "other"];
  const present = [...distillationCharts(keys), ...wanted.filter((k) => keys.includes(k)), ...mixtureCharts(keys)];
  if (present.length > 0) return present;
  const fallback = DEFAULT_CHARTS.other.filter((k) => keys.includes(k));
  return fallback.length > 0 ? fallback : keys.filter((k) => !k.startsWith("time/")).slice(0, 2);
}

/** Case-insensitive filter: plain words must all appear; a leading `!` excludes. */
export function filterKeys(keys: readonly string[], query: string): string[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  return keys.filter((k) => {
    const lk = k.toLowerCase();
    return words.every((w) => (w.startsWith("!") ? !lk.includes(w.slice(1)) : lk.includes(w)));
  });
}

/** Progress in [0, 1] from the last row (`progress` for SL, `progress/done_frac` for RL). */
export function progressOf(rows: readonly MetricRow[]): number | undefined {
  return latestProgress(rows.length, (i, k) => rows[i][k]);
}

function latestProgress(length: number, valueAt: (row: number, key: string) => unknown): number | undefined {
  for (let i = length - 1; i >= Math.max(0, length - 5); i--) {
    for (const k of ["progress", "progress/done_frac"]) {
      const v = valueAt(i, k);
      if (typeof v === "number" && Number.isFinite(v)) return Math.min(1, Math.max(0, v));
    }
  }
  return undefined;
}

/** Where a chart gets a run's series: rows with an incremental cache, or metric columns. */
export interface SeriesSource {
  series(key: string, axis: XAxis): Series;
  smoothed(key: string, axis: XAxis, weight: number): number[];
}

/**
 * Series straight from metric columns (`cookbook watch --once` on metrics.columns): no row objects,
 * the same points, x values and EMA as the row path.
 */
export class ColumnSeries implements SeriesSource {
  private elapsedCache: number[] | undefined;
  private readonly seriesCache = new Map<string, Series>();

  constructor(readonly metrics: MetricColumns) {}

  /** Every key with at least one numeric value (except `step`), sorted. */
  keys(): string[] {
    return this.metrics.keys.filter((k) => k !== "step").sort();
  }

  /** Elapsed seconds at the end of each row, as elapsedSeconds computes them from rows. */
  elapsed(): number[] {
    if (this.elapsedCache === undefined) {
      const c = this.durations();
      const perRow = new Float64Array(this.metrics.length);
      if (c !== undefined) for (let j = 0; j < c.rows.length; j++) perRow[c.rows[j]] = c.values[j];
      this.elapsedCache = runningDuration(perRow);
    }
    return this.elapsedCache;
  }

  /** The last of elapsed(), without a number per row. */
  totalElapsed(): number {
    if (this.elapsedCache !== undefined) return this.elapsedCache[this.elapsedCache.length - 1] ?? 0;
    const values = this.durations()?.values ?? [];
    let t = 0;
    for (let j = 0; j < values.length; j++) if (values[j] > 0) t += values[j];
    return t;
  }

  private durations(): { rows: Int32Array; values: Float64Array } | undefined {
    const key = STEP_DURATION_KEYS.find((k) => this.metrics.keys.includes(k));
    return key === undefined ? undefined : this.metrics.column(key);
  }

  progress(): number | undefined {
    return latestProgress(this.metrics.length, (i, k) => this.metrics.valueAt(i, k));
  }

  series(key: string, axis: XAxis): Series {
    const id = `${axis}\0${key}`;
    const cached = this.seriesCache.get(id);
    if (cached !== undefined) return cached;
    const c = this.metrics.column(key);
    const length = this.metrics.length;
    let out: Series;
    if (c === undefined) out = { key, x: [], y: [], finite: true };
    else if (axis === "step" && c.values.length === length && this.metrics.column("step")?.values.length === length) {
      // The key and step in every row: the columns are the series as they are.
      out = { key, x: this.metrics.step, y: c.values, finite: true };
    } else {
      const n = c.rows.length;
      const times = axis === "time" ? this.elapsed() : undefined;
      const step = this.metrics.step;
      const x = new Float64Array(n);
      for (let j = 0; j < n; j++) {
        const row = c.rows[j];
        x[j] = times ? times[row] : Number.isNaN(step[row]) ? row : step[row];
      }
      out = { key, x, y: c.values, finite: true };
    }
    this.seriesCache.set(id, out);
    return out;
  }

  smoothed(key: string, axis: XAxis, weight: number): number[] {
    return ema(this.series(key, axis).y, weight);
  }
}

/**
 * Series per (key, axis) extended incrementally as rows are appended, with their EMA, so a
 * redraw of a 100k-row run only bucketizes instead of rebuilding everything.
 */
export class SeriesCache implements SeriesSource {
  private readonly cache = new Map<string, { x: number[]; y: number[]; upto: number; ema?: { w: number; acc: number; norm: number; values: number[] } }>();

  constructor(
    private readonly rows: readonly MetricRow[],
    private readonly elapsed: readonly number[],
  ) {}

  series(key: string, axis: XAxis): Series {
    const id = `${axis}\0${key}`;
    let e = this.cache.get(id);
    if (!e) {
      e = { x: [], y: [], upto: 0 };
      this.cache.set(id, e);
    }
    const rows = this.rows;
    for (let i = e.upto; i < rows.length; i++) {
      const v = rows[i][key];
      if (typeof v !== "number" || !Number.isFinite(v)) continue;
      const step = rows[i].step;
      e.x.push(axis === "time" ? this.elapsed[i] : typeof step === "number" ? step : i);
      e.y.push(v);
    }
    e.upto = rows.length;
    return { key, x: e.x, y: e.y };
  }

  /** The series' EMA (same weight as smoothing.ema), extended incrementally. */
  smoothed(key: string, axis: XAxis, weight: number): number[] {
    const s = this.series(key, axis);
    const e = this.cache.get(`${axis}\0${key}`)!;
    const w = Math.min(Math.max(weight, 0), 0.999);
    if (!e.ema || e.ema.w !== w) e.ema = { w, acc: 0, norm: 0, values: [] };
    const m = e.ema;
    for (let i = m.values.length; i < s.y.length; i++) {
      m.acc = m.acc * w + (1 - w) * s.y[i];
      m.norm = m.norm * w + (1 - w);
      m.values.push(m.acc / m.norm);
    }
    return m.values;
  }
}
