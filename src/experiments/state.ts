// The files a batch leaves in experiments/<experiment>/: batch.json (where every run stands, rewritten
// atomically after each change, read by the TUI's Batch screen) and comparison.json (every model on
// every test set, read by the HTML report and the TUI). Both are the interface between the batch
// runner and everything that watches it, like a run directory's files are for a single run.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../files/durable.ts";

export const DEFAULT_EXPERIMENTS_ROOT = "experiments";
export const BATCH_STATE_FILE = "batch.json";
export const COMPARISON_FILE = "comparison.json";

export const BatchRunStatusSchema = z.enum(["queued", "running", "done", "failed", "stopped"]);
export type BatchRunStatus = z.infer<typeof BatchRunStatusSchema>;

export const BatchRunStateSchema = z.object({
  /** Run name, unique in the experiment; the run directory is experiments/<experiment>/<name>. */
  name: z.string().min(1),
  recipe: z.string().min(1),
  /** Config overrides on top of the recipe's defaults (grid values and shared defaults merged). */
  overrides: z.record(z.string(), z.unknown()),
  log_path: z.string(),
  status: BatchRunStatusSchema,
  /** Metric the Batch screen shows and sparklines, e.g. "train_mean_nll" or "env/all/reward/total". */
  key_metric: z.string().optional(),
  /** The run's own process (`cookbook run`), while it is running. */
  pid: z.number().int().optional(),
  started_at: z.string().optional(),
  finished_at: z.string().optional(),
  error: z.string().optional(),
});
export type BatchRunState = z.infer<typeof BatchRunStateSchema>;

export const BatchPhaseSchema = z.enum(["training", "evaluating", "done", "stopped", "failed"]);

export const BatchStateSchema = z.object({
  experiment: z.string().min(1),
  /** The experiment file this batch was launched from (absolute path). */
  file: z.string(),
  /** Process running the batch, while phase is training or evaluating. */
  pid: z.number().int().optional(),
  updated_at: z.string(),
  phase: BatchPhaseSchema,
  runs: z.array(BatchRunStateSchema),
  error: z.string().optional(),
});
export type BatchState = z.infer<typeof BatchStateSchema>;

export const TestSetSummarySchema = z.object({
  name: z.string().min(1),
  /** nll: mean negative log-likelihood per token on held-out chats; accuracy: sampled answers graded. */
  kind: z.enum(["nll", "accuracy"]),
  metric: z.string(),
  higher_is_better: z.boolean(),
});

export const ComparedModelSchema = z.object({
  /** Row label: a run name, or "base:<model>" for an untrained baseline. */
  name: z.string().min(1),
  kind: z.enum(["baseline", "run"]),
  base_model: z.string(),
  run: z.string().optional(),
  /** The sampler checkpoint evaluated (tinker:// path or folder); absent for baselines. */
  checkpoint: z.string().optional(),
});

export const ComparisonResultSchema = z.object({
  model: z.string(),
  test_set: z.string(),
  /** null when the evaluation failed; `error` then says why. */
  value: z.number().nullable(),
  /** Number of examples scored. */
  n: z.number().int().nonnegative(),
  error: z.string().optional(),
});

export const ComparisonSchema = z.object({
  experiment: z.string().min(1),
  created_at: z.string(),
  test_sets: z.array(TestSetSummarySchema),
  models: z.array(ComparedModelSchema),
  results: z.array(ComparisonResultSchema),
});
export type Comparison = z.infer<typeof ComparisonSchema>;

export function experimentDir(experiment: string, root: string = DEFAULT_EXPERIMENTS_ROOT): string {
  return resolve(root, experiment);
}

function readValidated<T>(file: string, schema: z.ZodType<T>, what: string): T | undefined {
  if (!existsSync(file)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`${file}: ${what} is not valid JSON (${(error as Error).message})`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${file}: ${what} key "${issue?.path.join(".") ?? ""}": ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}

export function readBatchState(dir: string): BatchState | undefined {
  return readValidated(join(dir, BATCH_STATE_FILE), BatchStateSchema, "batch state");
}

export function writeBatchState(dir: string, state: BatchState): void {
  writeFileAtomic(join(dir, BATCH_STATE_FILE), `${JSON.stringify(BatchStateSchema.parse(state), null, 2)}\n`, {
    context: `batch state of ${state.experiment}`,
  });
}

export function readComparison(dir: string): Comparison | undefined {
  return readValidated(join(dir, COMPARISON_FILE), ComparisonSchema, "comparison");
}

export function writeComparison(dir: string, comparison: Comparison): void {
  writeFileAtomic(join(dir, COMPARISON_FILE), `${JSON.stringify(ComparisonSchema.parse(comparison), null, 2)}\n`, {
    context: `comparison of ${comparison.experiment}`,
  });
}
