// Text table of run summaries for `cookbook runs` and bare `cookbook` without a TUI.
import { formatColumns, formatValue } from "../log/format.ts";
import type { RunSummary } from "../runs/discovery.ts";

export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

export function formatRunsTable(runs: readonly RunSummary[], now = Date.now()): string {
  const header = ["NAME", "STATUS", "RECIPE", "KIND", "STEP", "METRICS", "AGE"];
  const rows = runs.map((r) => [
    r.name,
    r.status,
    r.recipe ?? "-",
    r.trainingKind ?? "-",
    r.lastStep === undefined ? "-" : String(r.lastStep),
    Object.entries(r.metrics)
      .map(([k, v]) => `${k}=${formatValue(v)}`)
      .join(" ") || "-",
    r.updatedAt > 0 ? formatAge(now - r.updatedAt) : "-",
  ]);
  return formatColumns([header, ...rows]).join("\n");
}

export function runsAsJson(runs: readonly RunSummary[], now = Date.now()): string {
  return JSON.stringify(
    runs.map((r) => ({ ...r, ageSec: r.updatedAt > 0 ? Math.round((now - r.updatedAt) / 1000) : null })),
    null,
    2,
  );
}
