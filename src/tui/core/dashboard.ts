// The dashboard's charts as text, pure: used by the Ink screen and by `cookbook watch --once`.
import type { TrainingKind } from "../../runs/index.ts";
import { type ChartLine, renderChart } from "./chart.ts";
import { fmtNum } from "./format.ts";
import { runColorAnsi } from "./palette.ts";
import { type MetricRow, type SeriesSource, type XAxis, buildSeries } from "./series.ts";

export interface ChartRun {
  name: string;
  rows: readonly MetricRow[];
  elapsed: readonly number[];
  /** Incremental series for live runs, or columns for a snapshot; without it series are built from rows. */
  cache?: SeriesSource;
}

export interface ChartSpec {
  key: string;
  width: number;
  /** Rows including the title row. */
  rows: number;
  smoothing: number;
  xAxis: XAxis;
  cursorX?: number;
  color: boolean;
}

export const EMA_WEIGHT = 0.9;

/** The EMA weights the dashboard steps through (Tinker Chef's range, 0.6–0.99). */
export const EMA_WEIGHTS: readonly number[] = [0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.97, 0.99];

/** The next weight up (+1) or down (-1) from `weight`, clamped to the ends of EMA_WEIGHTS. */
export function stepEmaWeight(weight: number, direction: 1 | -1): number {
  let nearest = 0;
  EMA_WEIGHTS.forEach((w, i) => {
    if (Math.abs(w - weight) < Math.abs(EMA_WEIGHTS[nearest] - weight)) nearest = i;
  });
  return EMA_WEIGHTS[Math.min(EMA_WEIGHTS.length - 1, Math.max(0, nearest + direction))];
}

/** Title row + chart rows for one metric over the primary run and its overlays. */
export function chartBlock(runs: readonly ChartRun[], spec: ChartSpec): string[] {
  const lines: ChartLine[] = runs.map((r, i) => {
    const s = r.cache ? r.cache.series(spec.key, spec.xAxis) : buildSeries(r.rows, spec.key, spec.xAxis, r.elapsed);
    const line: ChartLine = { x: s.x, y: s.y, color: runColorAnsi(i), finite: s.finite };
    if (r.cache && spec.smoothing > 0) line.smoothed = r.cache.smoothed(spec.key, spec.xAxis, spec.smoothing);
    return line;
  });
  const chart = renderChart(lines, {
    width: spec.width,
    rows: spec.rows - 1,
    smoothing: spec.smoothing,
    xAxis: spec.xAxis,
    cursorX: spec.cursorX,
    color: spec.color,
  });
  const primary = lines[0];
  const last = primary && primary.y.length > 0 ? primary.y[primary.y.length - 1] : undefined;
  const range = chart.primaryRange;
  const stats =
    last === undefined || range === undefined ? "no data" : `last ${fmtNum(last)}  min ${fmtNum(range.min)}  max ${fmtNum(range.max)}  n ${primary.y.length}`;
  const title = `${spec.key}  ${stats}${spec.smoothing > 0 ? "  (EMA)" : ""}`;
  return [title.slice(0, spec.width), ...chart.lines];
}

export interface GridLayout {
  columns: number;
  chartRows: number;
  shown: number;
}

/** How many charts fit and how tall each is, in a grid of 1 or 2 columns. */
export function gridLayout(count: number, width: number, rows: number, minChartRows = 6): GridLayout {
  if (count === 0 || rows < 5) return { columns: 1, chartRows: Math.max(0, rows), shown: 0 };
  // A small terminal still gets one (short) chart.
  if (rows < minChartRows) return { columns: 1, chartRows: rows, shown: 1 };
  const columns = width >= 140 && count > 1 ? 2 : 1;
  const maxRowsOfCharts = Math.max(1, Math.floor(rows / minChartRows));
  const gridRows = Math.min(Math.ceil(count / columns), maxRowsOfCharts);
  const shown = Math.min(count, gridRows * columns);
  return { columns, chartRows: Math.floor(rows / gridRows), shown };
}

export function kindLabel(kind: TrainingKind | undefined): string {
  return kind === "sl" ? "supervised" : kind === "rl" ? "RL" : kind === "dpo" ? "DPO" : "run";
}
