// The runs list of a log root, refreshed on a timer, each run with the recent values of its key
// metric for a sparkline.
import { MAIN_METRIC_KEYS, type RunSummary, discoverRuns, readMetricTail } from "../../runs/index.ts";

export interface RunRow extends RunSummary {
  keyMetric?: string;
  spark: number[];
}

export function listRuns(root: string): RunRow[] {
  return discoverRuns(root).map((r) => {
    const keyMetric = MAIN_METRIC_KEYS.find((k) => typeof r.metrics[k] === "number");
    return { ...r, keyMetric, spark: keyMetric ? readMetricTail(r.dir, keyMetric, 32 * 1024) : [] };
  });
}
