// Keeping metrics.jsonl consistent with a resumed run: rows for steps at or after the resume
// point were written by the interrupted run after its last checkpoint and are about to be
// written again, so they are dropped first.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../files/durable.ts";
import { parseJsonlText } from "../log/jsonl.ts";
import { dropMetricColumns } from "../log/metricColumns.ts";

/**
 * Rewrites metrics.jsonl without rows whose step is ≥ `fromStep` (atomically: temp file +
 * rename). Returns how many rows were dropped. A torn final line is dropped too.
 */
export function truncateMetricsFrom(logDir: string, fromStep: number): number {
  const path = join(logDir, "metrics.jsonl");
  if (!existsSync(path)) return 0;
  const { records, tornTail } = parseJsonlText<{ step?: unknown }>(readFileSync(path, "utf8"), path);
  const kept = records.filter((r) => !(typeof r.step === "number" && r.step >= fromStep));
  const dropped = records.length - kept.length;
  if (dropped === 0 && !tornTail) return 0;
  writeFileAtomic(path, kept.map((r) => `${JSON.stringify(r)}\n`).join(""), { context: `dropping metrics from step ${fromStep} to resume` });
  dropMetricColumns(logDir);
  return dropped;
}
