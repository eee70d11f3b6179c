// Reading batches for whatever watches them (the TUI's Batch screen): the batches under one or
// more experiments roots, one batch with each run's key metric (latest value and recent values for
// a sparkline, from the run directory through src/runs) and its comparison, and the experiment
// files a batch can be launched from. Nothing here writes.
import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, extname, isAbsolute, join, resolve } from "node:path";
import { LogTailReader, MAIN_METRIC_KEYS, isPidAlive, isRunDir, readLastJsonlRecord, readMetricTail } from "../runs/index.ts";
import {
  BATCH_STATE_FILE,
  type BatchRunState,
  type BatchRunStatus,
  type BatchState,
  COMPARISON_FILE,
  type Comparison,
  DEFAULT_EXPERIMENTS_ROOT,
  readBatchState,
  readComparison,
} from "./state.ts";

/** Environment variable naming one more experiments root (beside ./experiments). */
export const EXPERIMENTS_ROOT_ENV = "COOKBOOK_EXPERIMENTS_ROOT";
export const EXPERIMENT_FILE_EXTENSIONS = [".ts", ".json", ".yaml", ".yml"] as const;

/** ./experiments of the working directory, then $COOKBOOK_EXPERIMENTS_ROOT when set (no duplicates). */
export function experimentsRoots(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string[] {
  const roots = [resolve(cwd, DEFAULT_EXPERIMENTS_ROOT)];
  const configured = env[EXPERIMENTS_ROOT_ENV];
  if (configured !== undefined && configured !== "") roots.push(resolve(cwd, configured));
  return [...new Set(roots)];
}

export interface BatchListing {
  dir: string;
  root: string;
  /** The experiment name (batch.json), else the folder's name. */
  name: string;
  state?: BatchState;
  /** Why batch.json could not be read (named file, key and expectation). */
  error?: string;
  /** The batch process is alive (phase training/evaluating and its pid answers). */
  live: boolean;
  hasComparison: boolean;
  counts: Record<BatchRunStatus, number>;
  /** Epoch ms of the last batch.json write. */
  updatedAt: number;
}

const NO_COUNTS: Record<BatchRunStatus, number> = { queued: 0, running: 0, done: 0, failed: 0, stopped: 0 };

function mtime(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith("."))
      .map((e) => join(dir, e.name));
  } catch {
    return [];
  }
}

export function batchLive(state: BatchState | undefined): boolean {
  if (state === undefined || state.pid === undefined) return false;
  return (state.phase === "training" || state.phase === "evaluating") && isPidAlive(state.pid);
}

function listing(dir: string, root: string): BatchListing {
  const base = { dir, root, name: basename(dir), updatedAt: mtime(join(dir, BATCH_STATE_FILE)), hasComparison: existsSync(join(dir, COMPARISON_FILE)) };
  let state: BatchState | undefined;
  try {
    state = readBatchState(dir);
  } catch (err) {
    return { ...base, error: (err as Error).message, live: false, counts: { ...NO_COUNTS } };
  }
  const counts = { ...NO_COUNTS };
  for (const run of state?.runs ?? []) counts[run.status] += 1;
  return { ...base, name: state?.experiment ?? base.name, state, live: batchLive(state), counts };
}

/** Every experiments/<experiment>/ holding a batch.json under the roots, most recently updated first. */
export function listBatches(roots: readonly string[]): BatchListing[] {
  const found: BatchListing[] = [];
  for (const root of roots) {
    for (const dir of subdirs(root)) if (existsSync(join(dir, BATCH_STATE_FILE))) found.push(listing(dir, root));
  }
  return found.sort((a, b) => b.updatedAt - a.updatedAt);
}

export interface BatchRunView extends BatchRunState {
  /** The run directory (log_path resolved). */
  dir: string;
  /** The run directory holds a run (a dashboard can open it). */
  started: boolean;
  /** key_metric, else the first of the usual training metrics the run has logged. */
  metric?: string;
  latest?: number;
  /** Recent values of the metric, oldest first. */
  spark: number[];
  lastStep?: number;
}

export interface BatchView {
  dir: string;
  state?: BatchState;
  error?: string;
  live: boolean;
  runs: BatchRunView[];
  comparison?: Comparison;
  comparisonError?: string;
}

/** A run's directory: log_path as written, relative ones against the experiments root's parent (the batch's working directory) or the batch folder. */
export function runDirOf(batchDir: string, run: Pick<BatchRunState, "name" | "log_path">): string {
  if (run.log_path !== "" && isAbsolute(run.log_path)) return run.log_path;
  if (run.log_path !== "") {
    for (const base of [resolve(batchDir, "..", ".."), batchDir]) {
      const candidate = resolve(base, run.log_path);
      if (existsSync(candidate)) return candidate;
    }
  }
  return join(batchDir, run.name);
}

function runView(batchDir: string, run: BatchRunState, sparkBytes: number): BatchRunView {
  const dir = runDirOf(batchDir, run);
  const last = readLastJsonlRecord(join(dir, "metrics.jsonl"));
  const view: BatchRunView = { ...run, dir, started: isRunDir(dir), spark: [] };
  if (typeof last?.["step"] === "number") view.lastStep = last["step"];
  // Without a key_metric, the first usual metric with values in the tail: the last row alone may
  // be an evaluation row that has test/nll but no training loss.
  const candidates = run.key_metric !== undefined ? [run.key_metric] : MAIN_METRIC_KEYS;
  for (const key of candidates) {
    const values = readMetricTail(dir, key, sparkBytes);
    if (values.length === 0 && run.key_metric === undefined) continue;
    view.metric = key;
    view.spark = values;
    break;
  }
  const metric = view.metric;
  if (metric === undefined) return view;
  const latest = last?.[metric];
  if (typeof latest === "number") view.latest = latest;
  else if (view.spark.length > 0) view.latest = view.spark[view.spark.length - 1];
  return view;
}

/** One batch as the screen shows it; a malformed batch.json or comparison.json is an error, not a throw. */
export function readBatchView(dir: string, sparkBytes = 32 * 1024): BatchView {
  let state: BatchState | undefined;
  try {
    state = readBatchState(dir);
  } catch (err) {
    return { dir, error: (err as Error).message, live: false, runs: [] };
  }
  const view: BatchView = { dir, state, live: batchLive(state), runs: (state?.runs ?? []).map((r) => runView(dir, r, sparkBytes)) };
  try {
    const comparison = readComparison(dir);
    if (comparison !== undefined) view.comparison = comparison;
  } catch (err) {
    view.comparisonError = (err as Error).message;
  }
  return view;
}

/** Experiment files (*.ts, *.json, *.yaml) directly in the roots, sorted by path. */
export function listExperimentFiles(roots: readonly string[]): string[] {
  const files: string[] = [];
  for (const root of roots) {
    let entries;
    try {
      entries = readdirSync(root, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (e.isFile() && !e.name.endsWith(".d.ts") && (EXPERIMENT_FILE_EXTENSIONS as readonly string[]).includes(extname(e.name)))
        files.push(join(root, e.name));
    }
  }
  return files.sort();
}

/** The batch launched from `file` at or after `sinceMs` (its batch.json names the file), if it has appeared. */
export function batchForFile(batches: readonly BatchListing[], file: string, sinceMs: number): BatchListing | undefined {
  const wanted = resolve(file);
  return batches.find((b) => b.state !== undefined && resolve(b.state.file) === wanted && b.updatedAt >= sinceMs);
}

/** The last lines of a launched batch's output file (why it ended before writing batch.json). */
export function readLaunchLog(logFile: string, n = 5): string[] {
  const reader = new LogTailReader(logFile, n);
  reader.read();
  return reader.lines;
}
