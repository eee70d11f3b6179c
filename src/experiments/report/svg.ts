// Inline SVG charts for the experiment report: overlaid line charts (one line per run) and
// horizontal bar charts (one bar per model). Plain strings, no scripts and no network, so the
// report opens anywhere and prints as it shows.
import { escapeHtml } from "../../log/transcripts/html.ts";

/** Around `count` round tick values covering [lo, hi] (steps of 1, 2 or 5 × 10^k). */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/** Short tick text: 0.0123, 1.5, 12000 → 1.2e4. */
export function tickLabel(v: number): string {
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e4 || a < 1e-3) return v.toExponential(1).replace("e+", "e");
  return String(Number(v.toPrecision(3)));
}

export interface Series {
  label: string;
  colour: string;
  points: readonly (readonly [number, number])[];
}

const FONT = 'font-family="system-ui, sans-serif" font-size="11" fill="#444"';

/** Keeps at most `max` points, evenly, always the last. */
function thin<T>(points: readonly T[], max: number): readonly T[] {
  if (points.length <= max) return points;
  const stride = Math.ceil(points.length / max);
  const out = points.filter((_, i) => i % stride === 0);
  if (out[out.length - 1] !== points[points.length - 1]) out.push(points[points.length - 1]!);
  return out;
}

export function lineChartSvg(title: string, series: readonly Series[], options: { width?: number; height?: number; xLabel?: string } = {}): string {
  const width = options.width ?? 520;
  const height = options.height ?? 240;
  const m = { left: 56, right: 14, top: 26, bottom: 32 };
  const all = series.flatMap((s) => s.points);
  const head = `<svg xmlns="http://www.w3.org/2000/svg" class="chart line-chart" data-metric="${escapeHtml(title)}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img"><title>${escapeHtml(title)}</title><text x="${m.left}" y="16" ${FONT} font-size="13" font-weight="600" fill="#222">${escapeHtml(title)}</text>`;
  if (all.length === 0) return `${head}<text x="${width / 2}" y="${height / 2}" text-anchor="middle" ${FONT}>no data</text></svg>`;
  const xs = all.map((p) => p[0]);
  const ys = all.map((p) => p[1]);
  let [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  if (x1 === x0) x1 = x0 + 1;
  let [y0, y1] = [Math.min(...ys), Math.max(...ys)];
  const pad = y1 > y0 ? (y1 - y0) * 0.06 : Math.max(Math.abs(y0) * 0.1, 1);
  y0 -= pad;
  y1 += pad;
  const px = (x: number) => m.left + ((x - x0) / (x1 - x0)) * (width - m.left - m.right);
  const py = (y: number) => height - m.bottom - ((y - y0) / (y1 - y0)) * (height - m.top - m.bottom);
  const parts: string[] = [head];
  for (const t of niceTicks(y0, y1, 5)) {
    parts.push(`<line x1="${m.left}" x2="${width - m.right}" y1="${py(t).toFixed(1)}" y2="${py(t).toFixed(1)}" stroke="#e6e6e6"/>`);
    parts.push(`<text x="${m.left - 6}" y="${(py(t) + 4).toFixed(1)}" text-anchor="end" ${FONT}>${tickLabel(t)}</text>`);
  }
  for (const t of niceTicks(x0, x1, 6).filter((t) => Number.isInteger(t) || x1 - x0 < 6)) {
    parts.push(`<text x="${px(t).toFixed(1)}" y="${height - m.bottom + 16}" text-anchor="middle" ${FONT}>${tickLabel(t)}</text>`);
  }
  parts.push(
    `<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${height - m.bottom}" stroke="#999"/><line x1="${m.left}" x2="${width - m.right}" y1="${height - m.bottom}" y2="${height - m.bottom}" stroke="#999"/>`,
  );
  parts.push(`<text x="${width - m.right}" y="${height - 4}" text-anchor="end" ${FONT}>${escapeHtml(options.xLabel ?? "step")}</text>`);
  for (const s of series) {
    const pts = thin(s.points, 400);
    if (pts.length === 0) continue;
    const d = pts.map((p, i) => `${i === 0 ? "M" : "L"}${px(p[0]).toFixed(1)} ${py(p[1]).toFixed(1)}`).join("");
    parts.push(
      `<path class="series" data-run="${escapeHtml(s.label)}" d="${d}" fill="none" stroke="${s.colour}" stroke-width="1.8" stroke-linejoin="round"><title>${escapeHtml(s.label)}</title></path>`,
    );
    if (pts.length === 1) parts.push(`<circle cx="${px(pts[0]![0]).toFixed(1)}" cy="${py(pts[0]![1]).toFixed(1)}" r="3" fill="${s.colour}"/>`);
  }
  parts.push("</svg>");
  return parts.join("");
}

export interface Bar {
  label: string;
  value: number | null;
  colour: string;
  best: boolean;
  /** Text shown at the end of the bar. */
  text: string;
}

/** One horizontal bar per model; the best is outlined and starred. */
export function barChartSvg(title: string, bars: readonly Bar[], options: { width?: number; note?: string } = {}): string {
  const width = options.width ?? 520;
  const rowH = 22;
  const m = { left: 200, right: 70, top: 30, bottom: 10 };
  const height = m.top + m.bottom + rowH * Math.max(1, bars.length);
  const values = bars.map((b) => b.value).filter((v): v is number => v !== null);
  const lo = Math.min(0, ...values);
  const hi = Math.max(0, ...values);
  const span = hi > lo ? hi - lo : 1;
  const px = (v: number) => m.left + ((v - lo) / span) * (width - m.left - m.right);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart bar-chart" data-test-set="${escapeHtml(title)}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img"><title>${escapeHtml(title)}</title>`,
    `<text x="8" y="16" ${FONT} font-size="13" font-weight="600" fill="#222">${escapeHtml(title)}</text>`,
  ];
  if (options.note !== undefined) parts.push(`<text x="${width - 8}" y="16" text-anchor="end" ${FONT}>${escapeHtml(options.note)}</text>`);
  bars.forEach((b, i) => {
    const y = m.top + i * rowH;
    const label = b.label.length > 30 ? `${b.label.slice(0, 29)}…` : b.label;
    parts.push(`<text x="${m.left - 6}" y="${y + 15}" text-anchor="end" ${FONT}>${escapeHtml(label)}<title>${escapeHtml(b.label)}</title></text>`);
    if (b.value === null) {
      parts.push(`<text x="${m.left + 4}" y="${y + 15}" ${FONT}>—</text>`);
      return;
    }
    const x = px(Math.min(0, b.value));
    const w = Math.max(1, Math.abs(px(b.value) - px(0)));
    parts.push(
      `<rect class="bar${b.best ? " best" : ""}" data-model="${escapeHtml(b.label)}" x="${x.toFixed(1)}" y="${y + 3}" width="${w.toFixed(1)}" height="${rowH - 6}" fill="${b.colour}"${b.best ? ' stroke="#111" stroke-width="2"' : ""}/>`,
    );
    parts.push(
      `<text x="${(x + w + 5).toFixed(1)}" y="${y + 15}" ${FONT}${b.best ? ' font-weight="700" fill="#111"' : ""}>${escapeHtml(b.text)}${b.best ? " ★" : ""}</text>`,
    );
  });
  parts.push("</svg>");
  return parts.join("");
}
