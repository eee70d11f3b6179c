// The runs list of a log root, refreshed on a timer, each run with the recent values of its key
// metric for a sparkline.
import { formatEvalScores, latestEvalScoresForRun, listEvalRuns } from "../../eval/reader.ts";
import { evalStoreDirFor } from "../../eval/store.ts";
import { MAIN_METRIC_KEYS, type RunSummary, discoverRuns, readMetricTail, readRunConfig } from "../../runs/index.ts";

export interface RunRow extends RunSummary {
  keyMetric?: string;
  spark: number[];
  model?: string;
  /** Latest `cookbook eval` scores of the run's checkpoints, e.g. `arithmetic 55.0%` (empty: none). */
  evals: string;
}

export function listRuns(root: string): RunRow[] {
  const evalRuns = listEvalRuns(evalStoreDirFor(root), { progress: false });
  return discoverRuns(root).map((r) => {
    const keyMetric = MAIN_METRIC_KEYS.find((k) => typeof r.metrics[k] === "number");
    const model = readRunConfig(r.dir)?.model_name;
    const evals = evalRuns.length > 0 ? formatEvalScores(latestEvalScoresForRun(r.dir, evalRuns)) : "";
    const row: RunRow = { ...r, keyMetric, spark: keyMetric ? readMetricTail(r.dir, keyMetric, 32 * 1024) : [], evals };
    if (typeof model === "string") row.model = model;
    return row;
  });
}
