// Batch directories as `cookbook batch` leaves them, for the Batch screen's tests: an
// experiments/<experiment>/batch.json (validated by the real writer) plus real run directories
// with metrics.jsonl, and optionally a comparison.json.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type BatchRunState, type BatchState, type Comparison, writeBatchState, writeComparison } from "../../src/experiments/state.ts";
import { makeSlRun } from "./fixtures.ts";

export interface FixtureRun {
  name: string;
  status: BatchRunState["status"];
  /** Steps of metrics.jsonl (none: the run has not started, no directory). */
  steps?: number;
  error?: string;
}

/** experiments/<experiment>/ with batch.json and a directory per started run; returns its path. */
export function makeBatch(root: string, experiment: string, runs: readonly FixtureRun[], extra: Partial<BatchState> = {}): string {
  const dir = join(root, experiment);
  mkdirSync(dir, { recursive: true });
  const file = join(root, `${experiment}.ts`);
  writeFileSync(file, `export default {};\n`);
  const states: BatchRunState[] = runs.map((r) => {
    if (r.steps !== undefined) makeSlRun(dir, r.name, r.steps);
    return {
      name: r.name,
      recipe: "sl_basic",
      overrides: { model_name: "tiny-chat", learning_rate: 1e-3 },
      log_path: join(dir, r.name),
      status: r.status,
      key_metric: "train_mean_nll",
      ...(r.error !== undefined ? { error: r.error } : {}),
    };
  });
  writeBatchState(dir, { experiment, file, updated_at: new Date().toISOString(), phase: "training", runs: states, ...extra });
  return dir;
}

/** Two trained runs and one baseline on two test sets: the first run is best on arith, the second on chat. */
export function makeComparison(dir: string, experiment: string, [a, b]: readonly [string, string] = ["run-a", "run-b"]): Comparison {
  const comparison: Comparison = {
    experiment,
    created_at: new Date().toISOString(),
    test_sets: [
      { name: "arith", kind: "accuracy", metric: "accuracy", higher_is_better: true },
      { name: "chat", kind: "nll", metric: "nll", higher_is_better: false },
    ],
    models: [
      { name: "base:tiny-chat", kind: "baseline", base_model: "tiny-chat" },
      { name: a, kind: "run", base_model: "tiny-chat", run: a, checkpoint: `tinker://${a}/sampler_weights/final` },
      { name: b, kind: "run", base_model: "tiny-chat", run: b, checkpoint: `tinker://${b}/sampler_weights/final` },
    ],
    results: [
      { model: "base:tiny-chat", test_set: "arith", value: 0.1, n: 50 },
      { model: "base:tiny-chat", test_set: "chat", value: 3.2, n: 40 },
      { model: a, test_set: "arith", value: 0.62, n: 50 },
      { model: a, test_set: "chat", value: 1.9, n: 40 },
      { model: b, test_set: "arith", value: 0.4, n: 50 },
      { model: b, test_set: "chat", value: 1.45, n: 40 },
    ],
  };
  writeComparison(dir, comparison);
  return comparison;
}
