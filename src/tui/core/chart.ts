// Chart strings: sanitised, bucketed to the width, fixed height, smoothed line over the raw
// min/max band, overlays aligned on a common x range, and an x-axis row with an optional cursor.
import asciichart from "asciichart";
import { type Values, bucketByX } from "./bucket.ts";
import { fmtDuration, fmtNum } from "./format.ts";
import { DIM_ANSI } from "./palette.ts";
import { ema } from "./smoothing.ts";
import type { XAxis } from "./series.ts";

export const LABEL_WIDTH = 9;
/** Columns asciichart uses before the first data column: the label, a space and the axis. */
export const CHART_OVERHEAD = LABEL_WIDTH + 2;
export const MIN_CHART_ROWS = 4;

export interface ChartLine {
  x: Values;
  y: Values;
  /** ANSI colour escape (see palette.ts). */
  color: string;
  /** The EMA of y when the caller keeps it (SeriesCache); computed here otherwise. */
  smoothed?: Values;
  /** Every x and y is known to be finite (metric columns hold only finite numbers): no check. */
  finite?: boolean;
}

export interface ChartOptions {
  /** Total columns the chart may use, labels included. */
  width: number;
  /** Total rows, x-axis row included (at least MIN_CHART_ROWS). */
  rows: number;
  /** EMA weight in [0, 1); 0 draws the raw series. */
  smoothing?: number;
  xAxis?: XAxis;
  /** An x value to mark under the chart (the step cursor). */
  cursorX?: number;
  color?: boolean;
}

export interface ChartResult {
  lines: string[];
  /** The x range drawn (for mapping a cursor back to a step). */
  x0: number;
  x1: number;
  /** Data columns drawn. */
  columns: number;
  /** The first line's smallest and largest y (from its buckets: no second pass over the points). */
  primaryRange?: { min: number; max: number };
}

const fmtLabel = (v: number): string => fmtNum(v).slice(0, LABEL_WIDTH).padStart(LABEL_WIDTH);

export function fmtX(v: number, axis: XAxis): string {
  return axis === "time" ? fmtDuration(v) : String(Math.round(v));
}

function finitePairs(line: ChartLine): { x: Values; y: Values; smoothed?: Values } {
  const n0 = Math.min(line.x.length, line.y.length);
  let clean = line.x.length === line.y.length;
  if (clean && line.finite === true) return { x: line.x, y: line.y, smoothed: line.smoothed };
  for (let i = 0; clean && i < n0; i++) if (!Number.isFinite(line.x[i]) || !Number.isFinite(line.y[i])) clean = false;
  // Cached series are already finite: no copy.
  if (clean) return { x: line.x, y: line.y, smoothed: line.smoothed };
  const x: number[] = [];
  const y: number[] = [];
  const n = Math.min(line.x.length, line.y.length);
  for (let i = 0; i < n; i++) {
    if (Number.isFinite(line.x[i]) && Number.isFinite(line.y[i])) {
      x.push(line.x[i]);
      y.push(line.y[i]);
    }
  }
  return { x, y };
}

/**
 * Renders lines (the first is the primary run: it gets the raw band and is drawn last, on top).
 * Always returns exactly `rows` lines; with no data the body says so.
 */
export function renderChart(input: readonly ChartLine[], options: ChartOptions): ChartResult {
  const rows = Math.max(MIN_CHART_ROWS, Math.floor(options.rows));
  const axis = options.xAxis ?? "step";
  const color = options.color ?? true;
  const plotWidth = Math.max(4, Math.floor(options.width) - CHART_OVERHEAD);
  const lines = input
    .map(finitePairs)
    .map((l, i) => ({ ...l, color: input[i].color, index: i }))
    .filter((l) => l.x.length > 0);
  if (lines.length === 0) {
    const empty = Array.from({ length: rows }, (_, i) => (i === Math.floor(rows / 2) ? "  (no data yet)" : ""));
    return { lines: empty, x0: 0, x1: 0, columns: 0 };
  }
  const x0 = Math.min(...lines.map((l) => l.x[0]));
  const x1 = Math.max(...lines.map((l) => l.x[l.x.length - 1]));
  // Always bucket over the full width: a short series is stretched (each value held until the
  // next) so charts keep their size as a run starts.
  const shared = x1 > x0 ? { min: x0, max: x1 } : undefined;
  const weight = options.smoothing ?? 0;
  const series: number[][] = [];
  const colors: (string | undefined)[] = [];
  const mains: { y: number[]; color: string }[] = [];
  let primaryRange: { min: number; max: number } | undefined;
  lines.forEach((l, idx) => {
    const raw = bucketByX(l.x, l.y, plotWidth, shared);
    if (l.index === 0) primaryRange = { min: Math.min(...raw.min), max: Math.max(...raw.max) };
    const main = weight > 0 ? bucketByX(l.x, l.smoothed ?? ema(l.y, weight), plotWidth, shared).last : raw.last;
    if (idx === 0) {
      // The raw band: min/max per bucket, or the raw line itself under a smoothed one.
      const banded = raw.count.some((c) => c > 1);
      if (banded) {
        series.push(raw.min, raw.max);
        colors.push(DIM_ANSI, DIM_ANSI);
      } else if (weight > 0) {
        series.push(raw.last);
        colors.push(DIM_ANSI);
      }
    }
    mains.push({ y: main, color: l.color });
  });
  // Overlays first, the primary run last so it is on top.
  for (let i = mains.length - 1; i >= 0; i--) {
    series.push(mains[i].y);
    colors.push(mains[i].color);
  }
  const all = series.flat();
  let lo = Math.min(...all);
  let hi = Math.max(...all);
  if (lo === hi) {
    lo -= Math.abs(lo) * 0.05 || 0.5;
    hi += Math.abs(hi) * 0.05 || 0.5;
  }
  const plotted = asciichart.plot(series, { height: rows - 2, min: lo, max: hi, format: fmtLabel, colors: color ? colors : undefined }).split("\n");
  const columns = Math.max(...series.map((s) => s.length));
  const body = plotted.slice(0, rows - 1).map(mergeColorRuns);
  while (body.length < rows - 1) body.push("");
  return { lines: [...body, xAxisRow(x0, x1, columns, axis, options.cursorX)], x0, x1, columns, primaryRange };
}

function xAxisRow(x0: number, x1: number, columns: number, axis: XAxis, cursorX: number | undefined): string {
  const cells = Array.from({ length: columns }, () => " ");
  if (cursorX !== undefined && columns > 0) {
    const col = x1 > x0 ? Math.round(((cursorX - x0) / (x1 - x0)) * (columns - 1)) : 0;
    if (col >= 0 && col < columns) cells[col] = "▲";
  }
  const left = fmtX(x0, axis);
  const right = fmtX(x1, axis);
  const row = cells.join("");
  // Labels go where the cursor is not.
  const withLeft = left.length < columns && !row.slice(0, left.length + 1).includes("▲") ? left + row.slice(left.length) : row;
  const withRight =
    right.length + left.length + 2 <= columns && !withLeft.slice(columns - right.length).includes("▲")
      ? withLeft.slice(0, columns - right.length) + right
      : withLeft;
  return " ".repeat(CHART_OVERHEAD) + withRight;
}

/**
 * asciichart wraps every cell in its own colour and reset; neighbouring cells of one colour are
 * merged so the terminal (and Ink's measuring) handles a few escapes per line, not hundreds.
 */
export function mergeColorRuns(line: string): string {
  let out = "";
  let open: string | undefined;
  let pendingReset = false;
  for (const m of line.matchAll(/(\x1b\[[0-9;]*m)|([^\x1b]+)/g)) {
    const text = m[2];
    if (text !== undefined) {
      // Spaces look the same in any foreground colour: keep the colour open across them.
      if (pendingReset && text.trim() !== "") {
        out += "\x1b[0m";
        open = undefined;
        pendingReset = false;
      }
      out += text;
      continue;
    }
    const code = m[1];
    if (code === "\x1b[0m") {
      if (open !== undefined) pendingReset = true;
      continue;
    }
    pendingReset = false;
    if (code !== open) {
      out += code;
      open = code;
    }
  }
  return open !== undefined ? `${out}\x1b[0m` : out;
}

/** Maps a data column of a rendered chart back to an x value. */
export function columnToX(chart: ChartResult, col: number): number {
  if (chart.columns <= 1) return chart.x0;
  return chart.x0 + ((chart.x1 - chart.x0) * Math.min(Math.max(col, 0), chart.columns - 1)) / (chart.columns - 1);
}

const SPARKS = "▁▂▃▄▅▆▇█";

/** A one-line sparkline of the last value per bucket, `width` characters at most. */
export function sparkline(values: readonly number[], width: number): string {
  const ys = values.filter((v) => Number.isFinite(v));
  if (ys.length === 0 || width <= 0) return "";
  const xs = ys.map((_, i) => i);
  const b = bucketByX(xs, ys, width);
  const lo = Math.min(...b.last);
  const hi = Math.max(...b.last);
  return b.last.map((v) => SPARKS[hi > lo ? Math.round(((v - lo) / (hi - lo)) * (SPARKS.length - 1)) : 3]).join("");
}

/**
 * A plain-ASCII line with the same terminal width as `line`, or undefined when that cannot be
 * promised. Ink measures every text node on every frame with string-width, which is slow on box
 * drawing characters and escapes but instant on printable ASCII; the chart component lets Ink
 * measure this stand-in and swaps the real line in when writing (ui/components/ChartText.tsx).
 * Only the narrow symbols charts use (box drawing, blocks, geometric shapes) are replaced.
 */
export function asciiStandIn(line: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  const plain = line.replace(/\x1b\[[0-9;]*m/g, "").replace(/[\u2500-\u25ff]/g, "x");
  return /^[\x20-\x7e]*$/.test(plain) ? plain : undefined;
}
