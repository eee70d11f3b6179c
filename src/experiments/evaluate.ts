// The comparison: every baseline (a base model, untrained) and every finished run's final sampler
// checkpoint on every test set, through src/eval and its store in experiments/<experiment>/evals/,
// so an interrupted evaluation resumes and a finished one is read back, not sampled again.
import type { ProgressUpdate } from "../eval/runner.ts";
import { evaluateModel, resolveEvalTarget } from "../eval/session.ts";
import type { EvalStore } from "../eval/store.ts";
import type { ServiceClient } from "../tinker/clients.ts";
import type { ExperimentPlan } from "./plan.ts";
import type { Comparison } from "./state.ts";

type ComparedModel = Comparison["models"][number];
type ComparisonResult = Comparison["results"][number];

export interface EvaluateExperimentOptions {
  service: ServiceClient;
  store: EvalStore;
  /** Names of the runs whose training finished (the others are left out). */
  finishedRuns: ReadonlySet<string>;
  /** Run directories by run name. */
  runDirs: ReadonlyMap<string, string>;
  log?: (line: string) => void;
  onProgress?: (update: ProgressUpdate) => void;
  /** Checked between evaluations: true stops the evaluation (what is stored so far stays). */
  shouldStop?: () => boolean;
  now?: () => Date;
}

/** The models compared: baselines first, then the finished runs in the experiment's order. */
export function comparedModels(
  plan: ExperimentPlan,
  finishedRuns: ReadonlySet<string>,
  runDirs: ReadonlyMap<string, string>,
): { model: ComparedModel; target: string; rendererName: string | null }[] {
  const out: { model: ComparedModel; target: string; rendererName: string | null }[] = plan.baselines.map((m) => ({
    model: { name: `base:${m}`, kind: "baseline", base_model: m },
    target: m,
    rendererName: null,
  }));
  for (const run of plan.runs) {
    if (!finishedRuns.has(run.name)) continue;
    const dir = runDirs.get(run.name)!;
    const checkpoint = resolveEvalTarget(dir).modelPath ?? undefined;
    out.push({
      model: { name: run.name, kind: "run", base_model: String(run.config["model_name"]), run: run.name, ...(checkpoint !== undefined ? { checkpoint } : {}) },
      target: dir,
      // A run trained with its own chat format is asked questions in that format.
      rendererName: typeof run.config["renderer_name"] === "string" ? run.config["renderer_name"] : null,
    });
  }
  return out;
}

export async function evaluateExperiment(plan: ExperimentPlan, options: EvaluateExperimentOptions): Promise<{ comparison: Comparison; stopped: boolean }> {
  const now = options.now ?? (() => new Date());
  const models = comparedModels(plan, options.finishedRuns, options.runDirs);
  const results: ComparisonResult[] = [];
  let stopped = false;
  outer: for (const { model, target, rendererName } of models) {
    for (const testSet of plan.testSets) {
      if (options.shouldStop?.() === true) {
        stopped = true;
        break outer;
      }
      try {
        const { summaries } = await evaluateModel({
          model: target,
          benchmarks: [testSet.spec],
          overrides: testSet.settings,
          service: options.service,
          store: options.store,
          reuseComplete: true,
          rendererName,
          ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
          now,
        });
        const s = summaries[0]!;
        const value = s.metrics[testSet.metric];
        const errors = s.metrics["errors"] ?? 0;
        results.push({
          model: model.name,
          test_set: testSet.name,
          value: typeof value === "number" && Number.isFinite(value) ? value : null,
          n: Math.round(s.metrics["num_examples"] ?? 0),
          ...(errors > 0 ? { error: `${errors} examples failed (sampled again on the next run)` } : {}),
        });
        options.log?.(
          `  ${model.name.padEnd(32)} ${testSet.name.padEnd(24)} ${testSet.metric} ${typeof value === "number" ? value.toFixed(4) : "—"}${s.fromEarlierRun ? " (stored)" : ""}`,
        );
      } catch (err) {
        const message = (err as Error).message;
        results.push({ model: model.name, test_set: testSet.name, value: null, n: 0, error: message });
        options.log?.(`  ${model.name.padEnd(32)} ${testSet.name.padEnd(24)} failed: ${message}`);
      }
    }
  }
  return {
    comparison: {
      experiment: plan.name,
      created_at: now().toISOString(),
      test_sets: plan.testSets.map((t) => ({ name: t.name, kind: t.kind, metric: t.metric, higher_is_better: t.higher_is_better })),
      models: models.map((m) => m.model),
      results,
    },
    stopped,
  };
}
