// The runs list of a log root, refreshed on a timer, each run with the recent values of its key
// metric for a sparkline.
import { MAIN_METRIC_KEYS, type RunSummary, discoverRuns, readMetricTail, readRunConfig } from "../../runs/index.ts";

export interface RunRow extends RunSummary {
  keyMetric?: string;
  spark: number[];
  model?: string;
}

export function listRuns(root: string): RunRow[] {
  return discoverRuns(root).map((r) => {
    const keyMetric = MAIN_METRIC_KEYS.find((k) => typeof r.metrics[k] === "number");
    const model = readRunConfig(r.dir)?.model_name;
    const row: RunRow = { ...r, keyMetric, spark: keyMetric ? readMetricTail(r.dir, keyMetric, 32 * 1024) : [] };
    if (typeof model === "string") row.model = model;
    return row;
  });
}
