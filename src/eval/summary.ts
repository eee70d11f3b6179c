// Text for people: the summary table printed after an eval, and a one-line progress bar.
import type { ProgressUpdate } from "./runner.ts";

/** The metrics shown first for every benchmark, in this order; pass@k columns follow. */
const HEADLINE = ["accuracy", "nll", "judge_score"];

export function headlineMetric(metrics: Record<string, number>): { key: string; value: number } | null {
  for (const key of HEADLINE) if (typeof metrics[key] === "number") return { key, value: metrics[key] };
  return null;
}

export function formatMetricValue(key: string, value: number): string {
  if (!Number.isFinite(value)) return "—";
  if (key === "num_examples" || key === "errors" || key === "num_tokens") return String(Math.round(value));
  if (key === "nll") return value.toFixed(4);
  // Shares: accuracy and its per-group (`accuracy/<subject>`) and per-kind (`…_accuracy`) variants.
  if (
    key === "accuracy" ||
    key.startsWith("accuracy/") ||
    key.endsWith("_accuracy") ||
    key.startsWith("pass@") ||
    key === "judge_score" ||
    key === "extracted_rate"
  ) {
    return `${(value * 100).toFixed(1)}%`;
  }
  return value.toFixed(3);
}

export interface SummaryRow {
  model: string;
  benchmark: string;
  metrics: Record<string, number>;
}

/** Benchmark | model | headline metric | pass@k… | examples | errors — aligned columns. */
export function formatSummaryTable(rows: readonly SummaryRow[]): string {
  const passKeys = [...new Set(rows.flatMap((r) => Object.keys(r.metrics).filter((k) => k.startsWith("pass@"))))].sort(
    (a, b) => Number(a.slice(5)) - Number(b.slice(5)),
  );
  const header = ["benchmark", "model", "metric", "score", ...passKeys, "examples", "errors"];
  const body = rows.map((r) => {
    const head = headlineMetric(r.metrics);
    return [
      r.benchmark,
      r.model,
      head?.key ?? "—",
      head === null ? "—" : formatMetricValue(head.key, head.value),
      ...passKeys.map((k) => (r.metrics[k] === undefined ? "—" : formatMetricValue(k, r.metrics[k]!))),
      formatMetricValue("num_examples", r.metrics["num_examples"] ?? Number.NaN),
      formatMetricValue("errors", r.metrics["errors"] ?? 0),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i <= 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...body.map(line)].join("\n");
}

/** `arithmetic [#########-----------]  90/200  acc 61.1%  (40 reused)  12.3/s` */
export function formatProgressLine(u: ProgressUpdate, ratePerSecond: number | null, width = 24): string {
  const frac = u.total > 0 ? u.done / u.total : 1;
  const filled = Math.round(frac * width);
  const bar = `${"#".repeat(filled)}${"-".repeat(width - filled)}`;
  const pad = String(u.total).length;
  const parts = [`${u.benchmark} [${bar}] ${String(u.done).padStart(pad)}/${u.total}`];
  if (u.done > 0) parts.push(u.benchmark.startsWith("nll") ? `nll ${u.score.toFixed(3)}` : `acc ${(u.score * 100).toFixed(1)}%`);
  if (u.reused > 0) parts.push(`(${u.reused} reused)`);
  if (u.errors > 0) parts.push(`${u.errors} errors`);
  if (ratePerSecond !== null && Number.isFinite(ratePerSecond)) parts.push(`${ratePerSecond.toFixed(1)}/s`);
  return parts.join("  ");
}
