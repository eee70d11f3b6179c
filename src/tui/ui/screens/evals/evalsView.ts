// What the Evals screen shows, as plain strings (pure, so frame content is testable without
// Ink): the results table, the side-by-side comparison, the examples list and an example.
import type { EvalRunView } from "../../../../eval/reader.ts";
import type { BenchmarkComparison } from "../../../../eval/reader.ts";
import type { TrajectoryRecord } from "../../../../eval/store.ts";
import { formatMetricValue, headlineMetric } from "../../../../eval/summary.ts";
import { isTinkerPath, parseTinkerPath } from "../../../../tinker/paths.ts";
import type { ExampleFilter } from "./evalsState.ts";

export interface ResultRow {
  runId: string;
  benchmark: string;
  model: string;
  /** "accuracy 38.0%", or progress "112/200" while running. */
  score: string;
  extra: string;
  status: string;
  createdAt: string;
}

function fit(text: string, width: number): string {
  if (width <= 0) return "";
  if (text.length <= width) return text.padEnd(width);
  return width <= 1 ? text.slice(0, width) : `${text.slice(0, width - 1)}…`;
}

/** Short model label: a tinker path without its kind segment (`<id>/sampler_weights/final` → `<id>/final`). */
export function shortModel(model: string): string {
  if (!isTinkerPath(model)) return model;
  try {
    const p = parseTinkerPath(model);
    return `${p.modelId}/${p.name}`;
  } catch {
    return model;
  }
}

/** One row per (eval run, benchmark), newest run first. */
export function resultRows(runs: readonly EvalRunView[]): ResultRow[] {
  const rows: ResultRow[] = [];
  for (const run of runs) {
    const benches = [...new Set([...Object.keys(run.results), ...Object.keys(run.progress)])].sort();
    for (const benchmark of benches) {
      const metrics = run.results[benchmark];
      const head = metrics === undefined ? null : headlineMetric(metrics);
      const passKs = metrics === undefined ? [] : Object.keys(metrics).filter((k) => k.startsWith("pass@") && k !== "pass@1");
      rows.push({
        runId: run.runId,
        benchmark,
        model: shortModel(run.model),
        score: head !== null ? `${head.key} ${formatMetricValue(head.key, head.value)}` : `${run.progress[benchmark] ?? 0} done`,
        extra: [
          metrics !== undefined ? `n=${metrics["num_examples"] ?? 0}` : "",
          ...passKs.map((k) => `${k} ${formatMetricValue(k, metrics![k]!)}`),
          metrics !== undefined && (metrics["errors"] ?? 0) > 0 ? `${metrics["errors"]} errors` : "",
        ]
          .filter((x) => x !== "")
          .join("  "),
        status: metrics !== undefined ? "done" : run.status,
        createdAt: run.createdAt,
      });
    }
  }
  return rows;
}

export function resultTableLines(rows: readonly ResultRow[], width: number): { header: string; lines: string[] } {
  const benchW = 18;
  const scoreW = 18;
  const statusW = 9;
  const whenW = 17;
  const modelW = Math.max(12, Math.min(44, width - benchW - scoreW - statusW - whenW - 24));
  const extraW = Math.max(0, width - benchW - scoreW - statusW - whenW - modelW - 5);
  const line = (c: string[]) =>
    `${fit(c[0]!, statusW)} ${fit(c[1]!, benchW)} ${fit(c[2]!, modelW)} ${fit(c[3]!, scoreW)} ${fit(c[4]!, whenW)} ${fit(c[5]!, extraW)}`.trimEnd();
  return {
    header: line(["status", "benchmark", "model", "score", "when", "details"]),
    lines: rows.map((r) => line([r.status, r.benchmark, r.model, r.score, r.createdAt.replace("T", " ").slice(0, 16), r.extra])),
  };
}

/** Per benchmark: a title line then one line per model with a bar of its score. */
export function compareLines(comparisons: readonly BenchmarkComparison[], width: number): string[] {
  const out: string[] = [];
  for (const c of comparisons) {
    out.push(`${c.benchmark}`);
    const modelW = Math.max(12, Math.min(44, Math.floor(width * 0.4)));
    const barW = Math.max(5, width - modelW - 22);
    const max = Math.max(...c.entries.map((e) => e.value), 1e-9);
    for (const e of c.entries) {
      const frac = e.metric === "nll" ? e.value / max : Math.max(0, Math.min(1, e.value));
      const bar = "█".repeat(Math.round(frac * barW)).padEnd(barW, "·");
      out.push(`  ${fit(shortModel(e.model), modelW)} ${fit(formatMetricValue(e.metric, e.value), 8)} ${bar} n=${e.numExamples}`);
    }
  }
  return out;
}

export function exampleCorrectness(r: TrajectoryRecord): number | null {
  if (r.error !== undefined) return null;
  if (r.samples.length === 0) return r.nll_weight !== undefined ? null : 0;
  return r.samples.filter((s) => s.correct).length / r.samples.length;
}

export function filterExamples(records: readonly TrajectoryRecord[], filter: ExampleFilter): TrajectoryRecord[] {
  if (filter === "all") return [...records];
  if (filter === "errors") return records.filter((r) => r.error !== undefined);
  return records.filter((r) => {
    const c = exampleCorrectness(r);
    if (c === null) return false;
    return filter === "right" ? c > 0 : c < 1;
  });
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p: { text?: string; thinking?: string }) => p.text ?? "").join("");
  return JSON.stringify(content);
}

/** The column titles above exampleLine's rows, aligned with them. */
export const EXAMPLE_HEADER = `${"#".padStart(4)} ok ${"reference".padEnd(14)} ${"extracted".padEnd(14)} │ question`;

/** `  12 ✓  ref 17  got 17  │ What is 8 + 9?` */
export function exampleLine(r: TrajectoryRecord, width: number): string {
  const c = exampleCorrectness(r);
  const mark = r.error !== undefined ? "!" : r.nll_weight !== undefined ? "·" : c === 1 ? "✓" : c === 0 ? "✗" : "~";
  const lastUser = [...r.prompt].reverse().find((m) => m.role === "user");
  const got =
    r.error !== undefined
      ? "error"
      : r.nll_weight !== undefined
        ? `nll ${(r.nll_sum! / Math.max(1, r.nll_weight)).toFixed(3)}`
        : (r.samples[0]?.extracted ?? "—");
  const head = `${String(r.index).padStart(4)} ${mark}  ref ${fit(r.reference || "—", 10)} got ${fit(String(got), 10)} │ `;
  return `${head}${oneLine(lastUser === undefined ? "" : contentText(lastUser.content))}`.slice(0, Math.max(10, width));
}

/** The full example: prompt messages, then every sample with its extracted answer and grade. */
export function exampleDetailLines(r: TrajectoryRecord, width: number): string[] {
  const wrap = (text: string, indent: string): string[] => {
    const w = Math.max(10, width - indent.length);
    const out: string[] = [];
    for (const para of text.split("\n")) {
      if (para.length === 0) out.push(indent);
      for (let i = 0; i < para.length; i += w) out.push(indent + para.slice(i, i + w));
    }
    return out;
  };
  const lines: string[] = [`example ${r.example_id} (#${r.index})   reference: ${r.reference || "—"}`];
  if (r.error !== undefined) lines.push(`error: ${r.error}`);
  lines.push("── prompt");
  for (const m of r.prompt) {
    lines.push(`[${m.role}]`);
    lines.push(...wrap(contentText(m.content), "  "));
  }
  if (r.nll_weight !== undefined) lines.push(`── NLL ${(r.nll_sum! / Math.max(1, r.nll_weight)).toFixed(4)} over ${r.nll_weight} tokens`);
  r.samples.forEach((s, i) => {
    const grade = s.correct ? "CORRECT" : "WRONG";
    const score = s.score !== undefined ? `  judge score ${(s.score * 10).toFixed(1)}/10` : "";
    lines.push(
      `── sample ${i + 1}/${r.samples.length}: ${grade}  extracted: ${s.extracted ?? "—"}${score}  (${s.num_tokens ?? "?"} tokens, ${s.stop_reason ?? "?"})`,
    );
    lines.push(...wrap(s.response, "  "));
    if (s.judge_explanation !== undefined) {
      lines.push("  judge:");
      lines.push(...wrap(s.judge_explanation, "    "));
    }
  });
  return lines;
}
