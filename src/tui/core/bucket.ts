// Resampling a series to a chart's width. asciichart draws one column per value, so a 100k-point
// series must be reduced; buckets keep min and max so spikes survive, and `last` is the line.
/** A series' numbers: arrays, or a metric column's Float64Array as it was read (not copied). */
export type Values = readonly number[] | Float64Array;

export interface Buckets {
  /** x at the start of each bucket. */
  x: number[];
  last: number[];
  min: number[];
  max: number[];
  /** How many source points fell in each bucket (0: carried over from the previous bucket). */
  count: number[];
}

/**
 * Splits [xMin, xMax] into `width` equal buckets by x (so time axes with uneven steps are honest).
 * Empty buckets repeat the previous bucket's last value, because the chart cannot draw gaps.
 * With no more points than width, each point keeps its own column.
 */
export function bucketByX(x: Values, y: Values, width: number, range?: { min: number; max: number }): Buckets {
  const n = Math.min(x.length, y.length);
  const cols = Math.max(1, Math.floor(width));
  if (n === 0) return { x: [], last: [], min: [], max: [], count: [] };
  if (n <= cols && range === undefined) {
    const ys = Array.from(y.slice(0, n));
    return { x: Array.from(x.slice(0, n)), last: ys, min: [...ys], max: [...ys], count: new Array(n).fill(1) };
  }
  const x0 = range?.min ?? x[0];
  const x1 = range?.max ?? x[n - 1];
  const span = x1 - x0;
  const out: Buckets = { x: [], last: [], min: [], max: [], count: [] };
  for (let b = 0; b < cols; b++) out.x.push(span > 0 ? x0 + (span * b) / cols : x0);
  // Typed arrays in locals: this loop visits every point of a 100k-row run, often before V8 has
  // optimised anything (a `watch --once` process lives a few hundred milliseconds).
  const last = new Float64Array(cols).fill(Number.NaN);
  const min = new Float64Array(cols).fill(Infinity);
  const max = new Float64Array(cols).fill(-Infinity);
  const count = new Int32Array(cols);
  for (let i = 0; i < n; i++) {
    const b = span > 0 ? Math.min(cols - 1, Math.max(0, Math.floor(((x[i] - x0) / span) * cols))) : 0;
    const v = y[i];
    last[b] = v;
    if (v < min[b]) min[b] = v;
    if (v > max[b]) max[b] = v;
    count[b]++;
  }
  out.last = Array.from(last);
  out.min = Array.from(min);
  out.max = Array.from(max);
  out.count = Array.from(count);
  // Carry values into empty buckets; leading empties take the first real value.
  const firstFilled = out.count.findIndex((c) => c > 0);
  let prev = firstFilled >= 0 ? out.last[firstFilled] : 0;
  for (let b = 0; b < cols; b++) {
    if (out.count[b] === 0) {
      out.last[b] = prev;
      out.min[b] = prev;
      out.max[b] = prev;
    } else prev = out.last[b];
  }
  if (span <= 0) {
    // Everything at one x: a single column is the truth.
    return { x: out.x.slice(0, 1), last: out.last.slice(0, 1), min: out.min.slice(0, 1), max: out.max.slice(0, 1), count: out.count.slice(0, 1) };
  }
  return out;
}
