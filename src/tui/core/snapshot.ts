// `cookbook watch <dir> --once`: the dashboard as plain text (charts included) for ssh, CI and
// scripts. Pure given the run's data; the command gathers it through src/runs.
import type { CheckpointRecord, MetricColumns, RunState, TrainingKind } from "../../runs/index.ts";
import { chartBlock, gridLayout, kindLabel } from "./dashboard.ts";
import { eta, fmtDuration, progressBar } from "./format.ts";
import { ColumnSeries, chartsFor } from "./series.ts";

export interface SnapshotInput {
  name: string;
  state: RunState;
  kind?: TrainingKind;
  metrics: MetricColumns;
  checkpoints: readonly CheckpointRecord[];
  logLines: readonly string[];
  extraCharts?: readonly string[];
  width: number;
  chartRows: number;
  color: boolean;
  smoothing: number;
  now?: number;
}

export function renderSnapshot(input: SnapshotInput): string {
  const out: string[] = [];
  const m = input.state.manifest;
  const series = new ColumnSeries(input.metrics);
  const lastStep = input.metrics.length > 0 ? input.metrics.step[input.metrics.length - 1] : Number.NaN;
  const spent = series.totalElapsed() || (m ? ((input.now ?? Date.now()) - Date.parse(m.started_at)) / 1000 : 0);
  const progress = series.progress();
  out.push(
    `${input.name}  ${input.state.live ? "live" : input.state.status}  ${m?.recipe ?? "?"} · ${kindLabel(input.kind)}${m ? ` · pid ${m.pid} · engine ${m.engine}` : ""}`,
  );
  const left = input.state.live ? eta(spent, progress) : undefined;
  out.push(
    `step ${Number.isNaN(lastStep) ? "–" : lastStep}  ${progress !== undefined ? progressBar(progress, 32) : ""}  elapsed ${fmtDuration(spent)}${left !== undefined ? `  ETA ${fmtDuration(left)}` : ""}`,
  );
  const charts = [...chartsFor(input.kind, series.keys()), ...(input.extraCharts ?? [])];
  const grid = gridLayout(charts.length, input.width, charts.length * input.chartRows, Math.min(6, input.chartRows));
  out.push("");
  for (const key of charts.slice(0, Math.max(grid.shown, charts.length))) {
    out.push(
      // The charts' x is the step: the per-row elapsed times are not needed (the cache has them for "time").
      ...chartBlock([{ name: input.name, rows: [], elapsed: [], cache: series }], {
        key,
        width: input.width,
        rows: input.chartRows,
        smoothing: input.smoothing,
        xAxis: "step",
        color: input.color,
      }),
    );
    out.push("");
  }
  out.push(`checkpoints (${input.checkpoints.length}):`);
  for (const c of input.checkpoints.slice(-5))
    out.push(`  ${c.name}  ${typeof c.state_path === "string" ? c.state_path : typeof c.sampler_path === "string" ? c.sampler_path : ""}`);
  if (input.logLines.length > 0) {
    out.push("logs.log:");
    for (const l of input.logLines) out.push(`  ${l}`);
  }
  return out.join("\n");
}
