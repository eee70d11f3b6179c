// The eval store (the cookbook's layout, docs/cookbook-parity.md#evaluation-framework):
//   <root>/runs.jsonl                             one line per eval run (the index)
//   <root>/runs/<run_id>/metadata.json            model, benchmarks, config, status
//   <root>/runs/<run_id>/<bench>/result.json      final metrics of one benchmark
//   <root>/runs/<run_id>/<bench>/trajectories.jsonl  one line per finished example
// Lines are appended whole and JSON files are written to a temp file and renamed, so a crash
// never leaves a half record; a torn last line (killed mid-write) is skipped on read.
import { existsSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { writeJsonAtomic } from "../files/durable.ts";
import { appendJsonl, readJsonl } from "../log/jsonl.ts";
import { join } from "node:path";
import { defaultLogRoot, expandLogPath } from "../runs/paths.ts";

/** `COOKBOOK_EVAL_DIR`, else `<log root>/evals` (log root: COOKBOOK_LOG_ROOT or /tmp/tinker-examples). */
export function defaultEvalStoreDir(env: NodeJS.ProcessEnv = process.env): string {
  return evalStoreDirFor(defaultLogRoot(), env);
}

/** The eval store beside a log root (`COOKBOOK_EVAL_DIR` wins). */
export function evalStoreDirFor(logRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  return env["COOKBOOK_EVAL_DIR"] ? expandLogPath(env["COOKBOOK_EVAL_DIR"]) : join(logRoot, "evals");
}

export interface EvalRunIndexRecord {
  run_id: string;
  created_at: string;
  /** What the user named: a base model, a tinker:// path or a run directory. */
  model: string;
  /** The tinker:// sampler path evaluated, when a checkpoint. */
  model_path: string | null;
  base_model: string;
  benchmarks: string[];
  /** Equal keys mean the same evaluation (resume matches on it). */
  config_key: string;
  /** Training run directory the checkpoint came from, when known. */
  source_run?: string | null;
  /** Training step of the checkpoint, when known. */
  step?: number | null;
}

export interface EvalRunMetadata extends EvalRunIndexRecord {
  status: "running" | "complete" | "failed";
  updated_at: string;
  config: Record<string, unknown>;
}

export interface SampleRecord {
  response: string;
  extracted: string | null;
  correct: boolean;
  /** Judge score in [0, 1] or similar graded score, when the grader gives one. */
  score?: number;
  judge_explanation?: string;
  stop_reason?: string;
  num_tokens?: number;
  /** The benchmark's per-sample numbers (BenchmarkGrade.details), when it gives any. */
  details?: Record<string, number>;
}

export interface TrajectoryRecord {
  example_id: string;
  /** Position in the benchmark's example list (for stable ordering). */
  index: number;
  prompt: { role: string; content: unknown }[];
  reference: string;
  samples: SampleRecord[];
  /** NLL benchmarks: summed weighted NLL and the weight (token count) behind it. */
  nll_sum?: number;
  nll_weight?: number;
  /** Set when the example failed (timeout, sampler error); such examples are retried on resume. */
  error?: string;
}

export interface BenchmarkResultFile {
  benchmark: string;
  run_id: string;
  model: string;
  model_path: string | null;
  base_model: string;
  metrics: Record<string, number>;
  num_examples: number;
  config: Record<string, unknown>;
  started_at: string;
  finished_at: string;
}

/** A JSON file of the store, or null when it does not exist; a damaged one is an error naming it. */
function readJson<T>(path: string): T | null {
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, "utf8")) as T;
  } catch (err) {
    throw new Error(
      `${path}: not valid JSON (${(err as Error).message}); the eval store writes its JSON files whole, so this file was changed by hand or by another program`,
    );
  }
}

/** A folder-safe benchmark name. */
export function benchmarkDirName(name: string): string {
  return name.replace(/[^A-Za-z0-9_.-]+/g, "_");
}

export class EvalStore {
  constructor(readonly root: string) {}

  get indexPath(): string {
    return join(this.root, "runs.jsonl");
  }

  runDir(runId: string): string {
    return join(this.root, "runs", runId);
  }

  benchmarkDir(runId: string, benchmark: string): string {
    return join(this.runDir(runId), benchmarkDirName(benchmark));
  }

  listIndex(): EvalRunIndexRecord[] {
    return readJsonl<EvalRunIndexRecord>(this.indexPath);
  }

  readMetadata(runId: string): EvalRunMetadata | null {
    return readJson<EvalRunMetadata>(join(this.runDir(runId), "metadata.json"));
  }

  writeMetadata(meta: EvalRunMetadata): void {
    mkdirSync(this.runDir(meta.run_id), { recursive: true });
    writeJsonAtomic(join(this.runDir(meta.run_id), "metadata.json"), meta, { context: `eval run ${meta.run_id} metadata` });
  }

  /** The newest run with this config key that is unfinished or has failed examples, to resume. */
  findResumable(configKey: string): EvalRunMetadata | null {
    const index = this.listIndex();
    for (let i = index.length - 1; i >= 0; i--) {
      const rec = index[i]!;
      if (rec.config_key !== configKey) continue;
      const meta = this.readMetadata(rec.run_id);
      if (meta === null) continue;
      if (meta.status !== "complete") return meta;
      if (rec.benchmarks.some((b) => (this.readResult(rec.run_id, b)?.metrics["errors"] ?? 0) > 0)) return meta;
      // The newest complete, error-free run with this key: a rerun starts afresh.
      return null;
    }
    return null;
  }

  /** The newest complete run with this config key whose every benchmark has a result without failed examples. */
  findComplete(configKey: string): EvalRunMetadata | null {
    const index = this.listIndex();
    for (let i = index.length - 1; i >= 0; i--) {
      const rec = index[i]!;
      if (rec.config_key !== configKey) continue;
      const meta = this.readMetadata(rec.run_id);
      if (meta?.status !== "complete") continue;
      if (
        rec.benchmarks.every((b) => {
          const r = this.readResult(rec.run_id, b);
          return r !== null && (r.metrics["errors"] ?? 0) === 0;
        })
      )
        return meta;
    }
    return null;
  }

  /** Starts a run: its metadata (status running) and its index line. */
  createRun(record: EvalRunIndexRecord, config: Record<string, unknown>): EvalRunMetadata {
    mkdirSync(this.root, { recursive: true });
    const meta: EvalRunMetadata = { ...record, status: "running", updated_at: record.created_at, config };
    this.writeMetadata(meta);
    appendJsonl(this.indexPath, record, { context: `eval run ${record.run_id} index line` });
    return meta;
  }

  readResult(runId: string, benchmark: string): BenchmarkResultFile | null {
    return readJson<BenchmarkResultFile>(join(this.benchmarkDir(runId, benchmark), "result.json"));
  }

  writeResult(result: BenchmarkResultFile): void {
    const dir = this.benchmarkDir(result.run_id, result.benchmark);
    mkdirSync(dir, { recursive: true });
    writeJsonAtomic(join(dir, "result.json"), result, { context: `${result.benchmark} result of eval run ${result.run_id}` });
  }

  trajectoriesPath(runId: string, benchmark: string): string {
    return join(this.benchmarkDir(runId, benchmark), "trajectories.jsonl");
  }

  readTrajectories(runId: string, benchmark: string): TrajectoryRecord[] {
    return readJsonl<TrajectoryRecord>(this.trajectoriesPath(runId, benchmark));
  }

  appendTrajectory(runId: string, benchmark: string, record: TrajectoryRecord): void {
    mkdirSync(this.benchmarkDir(runId, benchmark), { recursive: true });
    appendJsonl(this.trajectoriesPath(runId, benchmark), record, { context: `${benchmark} example ${record.index} of eval run ${runId}` });
  }

  /** Benchmark folders present in a run (with or without a result yet). */
  listBenchmarks(runId: string): string[] {
    const dir = this.runDir(runId);
    if (!existsSync(dir)) return [];
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  }
}

/** Examples already finished (no error) in a trajectories file, by example id; the last line wins. */
export function finishedExamples(records: readonly TrajectoryRecord[]): Map<string, TrajectoryRecord> {
  const out = new Map<string, TrajectoryRecord>();
  for (const r of records) {
    if (r.error === undefined) out.set(r.example_id, r);
    else out.delete(r.example_id);
  }
  return out;
}
