// The runs of the log root as a table: status, name, recipe, model, step, key metric, trend, age.
// Columns drop (model, sparkline) when the terminal is narrow.
import type { ReactNode } from "react";
import { Text } from "ink";
import { sparkline } from "../../../core/chart.ts";
import { fit, fmtAge, fmtNum } from "../../../core/format.ts";
import { statusColor, theme } from "../../../core/palette.ts";
import { windowStart } from "../../../core/textEdit.ts";
import type { RunRow } from "../../../services/runsPoller.ts";

export function filterRuns(runs: readonly RunRow[], query: string): RunRow[] {
  const q = query.trim().toLowerCase();
  if (!q) return [...runs];
  return runs.filter((r) => [r.name, r.recipe ?? "", r.status, r.model ?? ""].some((s) => s.toLowerCase().includes(q)));
}

export interface RunsTableProps {
  runs: readonly RunRow[];
  shown: readonly RunRow[];
  cursor: number;
  active: boolean;
  filter: string;
  filtering: boolean;
  rows: number;
  width: number;
  logRoot: string;
}

export function RunsTable({ runs, shown, cursor, active, filter, filtering, rows, width, logRoot }: RunsTableProps): ReactNode {
  const start = windowStart(cursor, shown.length, rows);
  const cols = runColumns(
    width,
    runs.some((r) => r.evals !== ""),
  );
  return (
    <>
      <Text bold color={active ? theme.accent : undefined} wrap="truncate">
        {`Runs (${shown.length}${filter ? ` of ${runs.length}, filter "${filter}"` : ""})${filtering ? "  / " + filter + "▏" : ""}`}
      </Text>
      <Text color={theme.muted} wrap="truncate">
        {cols.header}
      </Text>
      {shown.length === 0 ? (
        <Text color={theme.muted}>{runs.length === 0 ? `  no runs under ${logRoot} yet: launch a recipe above` : "  no run matches the filter"}</Text>
      ) : (
        shown.slice(start, start + rows).map((r, i) => (
          <Text key={r.dir} wrap="truncate" inverse={active && start + i === cursor}>
            <Text color={statusColor(r.status)}>{fit(r.live ? "● live" : r.status, 10)}</Text>
            {cols.row(r)}
          </Text>
        ))
      )}
    </>
  );
}

/** Column layout of the runs table for a width (drops model, sparkline and eval scores when narrow). */
export function runColumns(width: number, hasEvals = false): { header: string; row: (r: RunRow) => string } {
  const wide = width >= 100;
  const nameW = Math.max(10, Math.min(24, Math.floor(width * 0.2)));
  const recipeW = wide ? 16 : 12;
  const modelW = wide ? 16 : 0;
  const stepW = wide ? 7 : 6;
  const ageW = 12;
  const metricW = wide ? 24 : Math.max(10, width - 10 - nameW - recipeW - stepW - ageW - 5);
  const used = 10 + nameW + recipeW + modelW + stepW + metricW + ageW + 6;
  // Latest `cookbook eval` scores share the room left with the sparkline, scores first.
  const evalsW = wide && hasEvals ? Math.max(0, Math.min(34, width - used - 12)) : 0;
  const sparkW = wide ? Math.max(0, Math.min(30, width - used - (evalsW > 0 ? evalsW + 1 : 0) - 1)) : 0;
  const cell = (text: string, w: number): string => (w > 0 ? `${fit(text, w)} ` : "");
  const header =
    fit("status", 10) +
    cell("run", nameW) +
    cell("recipe", recipeW) +
    cell("model", modelW) +
    cell("step", stepW) +
    cell("key metric", metricW) +
    cell("trend", sparkW) +
    cell("evals", evalsW) +
    "age";
  const row = (r: RunRow): string => {
    const metric = r.keyMetric ? `${r.keyMetric}=${fmtNum(r.metrics[r.keyMetric] as number)}` : "";
    return (
      cell(r.name, nameW) +
      cell(r.recipe ?? "–", recipeW) +
      cell(r.model ?? "–", modelW) +
      cell(r.lastStep === undefined ? "–" : String(r.lastStep), stepW) +
      cell(metric, metricW) +
      cell(sparkline(r.spark, sparkW), sparkW) +
      cell(r.evals || "–", evalsW) +
      fmtAge(r.updatedAt)
    );
  };
  return { header, row };
}
