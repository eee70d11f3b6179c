// Reading the eval store for people (the TUI's Evals screen, the runs table): every eval run
// with its benchmarks' metrics, models side by side per benchmark, and a training run's latest
// eval scores (matched by the run directory or by its checkpoints' sampler paths).
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { readCheckpoints } from "../runs/checkpoints.ts";
import { formatMetricValue, headlineMetric } from "./summary.ts";
import { EvalStore, type EvalRunMetadata, type TrajectoryRecord } from "./store.ts";

export interface EvalRunView {
  runId: string;
  createdAt: string;
  updatedAt: string;
  status: EvalRunMetadata["status"] | "unknown";
  /** What was evaluated, as a short label (the tinker path or model name). */
  model: string;
  modelPath: string | null;
  baseModel: string;
  sourceRun: string | null;
  step: number | null;
  /** Benchmark name → its metrics (missing while it has no result.json yet). */
  results: Record<string, Record<string, number>>;
  /** Benchmark name → finished examples on disk (for runs in progress). */
  progress: Record<string, number>;
}

/** Every eval run in the store, newest first. `progress: false` skips counting unfinished examples (cheaper). */
export function listEvalRuns(root: string, options: { progress?: boolean } = {}): EvalRunView[] {
  if (!existsSync(join(root, "runs.jsonl"))) return [];
  const store = new EvalStore(root);
  const seen = new Set<string>();
  const out: EvalRunView[] = [];
  for (const rec of store.listIndex()) {
    if (seen.has(rec.run_id)) continue;
    seen.add(rec.run_id);
    const meta = store.readMetadata(rec.run_id);
    const results: Record<string, Record<string, number>> = {};
    const progress: Record<string, number> = {};
    for (const bench of rec.benchmarks) {
      const r = store.readResult(rec.run_id, bench);
      if (r !== null) results[bench] = r.metrics;
      else if (options.progress !== false) progress[bench] = store.readTrajectories(rec.run_id, bench).filter((t) => t.error === undefined).length;
    }
    out.push({
      runId: rec.run_id,
      createdAt: rec.created_at,
      updatedAt: meta?.updated_at ?? rec.created_at,
      status: meta?.status ?? "unknown",
      model: rec.model_path ?? rec.model,
      modelPath: rec.model_path,
      baseModel: rec.base_model,
      sourceRun: rec.source_run ?? null,
      step: rec.step ?? null,
      results,
      progress,
    });
  }
  return out.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
}

export function readEvalTrajectories(root: string, runId: string, benchmark: string): TrajectoryRecord[] {
  return new EvalStore(root)
    .readTrajectories(runId, benchmark)
    .slice()
    .sort((a, b) => a.index - b.index);
}

export interface BenchmarkComparison {
  benchmark: string;
  /** One entry per eval run that has this benchmark, newest first. */
  entries: { runId: string; model: string; metric: string; value: number; numExamples: number }[];
}

/** Per benchmark, every model's headline score, best first. */
export function compareByBenchmark(runs: readonly EvalRunView[]): BenchmarkComparison[] {
  const byBench = new Map<string, BenchmarkComparison["entries"]>();
  for (const run of runs) {
    for (const [bench, metrics] of Object.entries(run.results)) {
      const head = headlineMetric(metrics);
      if (head === null) continue;
      const list = byBench.get(bench) ?? [];
      list.push({ runId: run.runId, model: run.model, metric: head.key, value: head.value, numExamples: metrics["num_examples"] ?? 0 });
      byBench.set(bench, list);
    }
  }
  return [...byBench.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([benchmark, entries]) => ({
      benchmark,
      // NLL: lower is better.
      entries: entries.sort((x, y) => (x.metric === "nll" ? x.value - y.value : y.value - x.value)),
    }));
}

/** `arithmetic 55.0% · gsm8k 12.3%` (headline metric of each benchmark), "" when none. */
export function formatEvalScores(scores: Record<string, { metric: string; value: number }>): string {
  return Object.entries(scores)
    .map(([bench, s]) => `${bench} ${formatMetricValue(s.metric, s.value)}`)
    .join(" · ");
}

/**
 * The newest eval score per benchmark for a training run directory: eval runs made from that
 * directory, or of any sampler checkpoint listed in its checkpoints.jsonl.
 */
export function latestEvalScoresForRun(runDir: string, runs: readonly EvalRunView[]): Record<string, { metric: string; value: number; step: number | null }> {
  const dir = resolve(runDir);
  let samplerPaths = new Set<string>();
  try {
    samplerPaths = new Set(
      readCheckpoints(dir)
        .map((r) => r.sampler_path)
        .filter((p): p is string => typeof p === "string"),
    );
  } catch {
    // no or unreadable checkpoints.jsonl: match by directory only
  }
  const out: Record<string, { metric: string; value: number; step: number | null }> = {};
  // `runs` is newest first: the first score seen per benchmark is the latest.
  for (const run of runs) {
    const mine = (run.sourceRun !== null && resolve(run.sourceRun) === dir) || (run.modelPath !== null && samplerPaths.has(run.modelPath));
    if (!mine) continue;
    for (const [bench, metrics] of Object.entries(run.results)) {
      if (out[bench] !== undefined) continue;
      const head = headlineMetric(metrics);
      if (head !== null) out[bench] = { metric: head.key, value: head.value, step: run.step };
    }
  }
  return out;
}
