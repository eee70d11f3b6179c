// What the Batch screen shows, as plain strings and cells (pure, so frame content is testable
// without Ink): the batches table, a batch's runs with their key metric and trend, and the
// comparison grid of models × test sets with the best value of each test set marked.
import type { BatchListing, BatchRunView } from "../../../../experiments/batches.ts";
import type { BatchRunStatus, Comparison } from "../../../../experiments/state.ts";
import { sparkline } from "../../../core/chart.ts";
import { fit, fmtAge, fmtNum } from "../../../core/format.ts";
import { theme } from "../../../core/palette.ts";

const RUN_STATUS_COLORS: Record<BatchRunStatus, string> = {
  queued: theme.muted,
  running: theme.ok,
  done: theme.accent,
  failed: theme.error,
  stopped: theme.warn,
};

export function runStatusColor(status: BatchRunStatus): string {
  return RUN_STATUS_COLORS[status];
}

export function batchPhaseColor(b: Pick<BatchListing, "live" | "state" | "error">): string {
  if (b.error !== undefined || b.state?.phase === "failed") return theme.error;
  if (b.live) return theme.ok;
  if (b.state?.phase === "done") return theme.accent;
  return theme.warn;
}

/** The batch's phase as shown: a training/evaluating batch whose process is gone is "interrupted". */
export function phaseLabel(b: Pick<BatchListing, "live" | "state" | "error">): string {
  if (b.error !== undefined) return "unreadable";
  const phase = b.state?.phase ?? "–";
  if ((phase === "training" || phase === "evaluating") && !b.live) return "interrupted";
  return phase;
}

/** `2 done · 1 running · 1 queued` (statuses with no run left out). */
export function countsLabel(counts: Record<BatchRunStatus, number>): string {
  const order: BatchRunStatus[] = ["done", "running", "queued", "failed", "stopped"];
  const parts = order.filter((s) => counts[s] > 0).map((s) => `${counts[s]} ${s}`);
  return parts.length === 0 ? "no runs" : parts.join(" · ");
}

export interface TableLines {
  header: string;
  row: (i: number) => string;
}

export function batchListLines(batches: readonly BatchListing[], width: number): TableLines {
  const phaseW = 12;
  const nameW = Math.max(12, Math.min(28, Math.floor(width * 0.25)));
  const compareW = 8;
  const ageW = 12;
  const runsW = Math.max(10, width - phaseW - nameW - compareW - ageW - 4);
  const line = (c: [string, string, string, string, string]): string =>
    `${fit(c[0], phaseW)}${fit(c[1], nameW)} ${fit(c[2], runsW)} ${fit(c[3], compareW)} ${c[4]}`.slice(0, width);
  return {
    header: line(["phase", "experiment", "runs", "compare", "updated"]),
    row: (i) => {
      const b = batches[i]!;
      const runs = b.error !== undefined ? b.error : countsLabel(b.counts);
      return line([`${b.live ? "● " : ""}${phaseLabel(b)}`, b.name, runs, b.hasComparison ? "yes" : "–", fmtAge(b.updatedAt)]);
    },
  };
}

export function runLines(runs: readonly BatchRunView[], width: number): TableLines {
  const statusW = 9;
  const nameW = Math.max(10, Math.min(24, Math.floor(width * 0.2)));
  const recipeW = width >= 100 ? 14 : 10;
  const stepW = 6;
  const metricW = width >= 100 ? 22 : 16;
  const latestW = 10;
  const trendW = Math.max(0, Math.min(30, width - statusW - nameW - recipeW - stepW - metricW - latestW - 7));
  const line = (c: string[]): string =>
    `${fit(c[0]!, statusW)}${fit(c[1]!, nameW)} ${fit(c[2]!, recipeW)} ${fit(c[3]!, stepW)} ${fit(c[4]!, metricW)} ${fit(c[5]!, latestW)} ${c[6]!}`
      .trimEnd()
      .slice(0, width);
  return {
    header: line(["status", "run", "recipe", "step", "key metric", "latest", trendW > 0 ? "trend" : ""]),
    row: (i) => {
      const r = runs[i]!;
      const trend = r.status === "failed" && r.error !== undefined ? `error: ${r.error.split("\n")[0]}` : sparkline(r.spark, trendW);
      return line([
        r.status,
        r.name,
        r.recipe,
        r.lastStep === undefined ? "–" : String(r.lastStep),
        r.metric ?? "–",
        r.latest === undefined ? "–" : fmtNum(r.latest),
        trend,
      ]);
    },
  };
}

export interface GridCell {
  text: string;
  best: boolean;
  error?: string;
}

export interface ComparisonGrid {
  /** Column titles: test set, metric and direction, e.g. `arith (accuracy ↑)`. */
  columns: string[];
  rows: { model: string; kind: string; cells: GridCell[] }[];
}

function formatValue(kind: "nll" | "accuracy", value: number): string {
  return kind === "accuracy" && value >= 0 && value <= 1 ? `${(value * 100).toFixed(1)}%` : fmtNum(value);
}

/** Models (rows, in the file's order) × test sets (columns); each column's best value is marked. */
export function comparisonGrid(c: Comparison): ComparisonGrid {
  const byKey = new Map(c.results.map((r) => [`${r.model}\0${r.test_set}`, r]));
  const best = c.test_sets.map((t) => {
    const values = c.results.filter((r) => r.test_set === t.name && r.value !== null).map((r) => r.value!);
    if (values.length === 0) return undefined;
    return t.higher_is_better ? Math.max(...values) : Math.min(...values);
  });
  return {
    columns: c.test_sets.map((t) => `${t.name} (${t.metric} ${t.higher_is_better ? "↑" : "↓"})`),
    rows: c.models.map((m) => ({
      model: m.name,
      kind: m.kind,
      cells: c.test_sets.map((t, i): GridCell => {
        const r = byKey.get(`${m.name}\0${t.name}`);
        if (r === undefined) return { text: "–", best: false };
        if (r.value === null) return { text: "error", best: false, ...(r.error !== undefined ? { error: r.error } : {}) };
        return { text: `${formatValue(t.kind, r.value)}${r.value === best[i] ? " *" : ""}`, best: r.value === best[i] };
      }),
    })),
  };
}

/** Column widths of the grid for a terminal width: model column, then equal test-set columns. */
export function gridWidths(grid: ComparisonGrid, width: number): { model: number; kind: number; cell: number } {
  const model = Math.max(10, Math.min(28, Math.max(0, ...grid.rows.map((r) => r.model.length + 1))));
  const kind = 9;
  const n = Math.max(1, grid.columns.length);
  const cell = Math.max(8, Math.min(40, Math.floor((width - model - kind) / n) - 1));
  return { model, kind, cell };
}
