// Finding run directories under a root and summarising each for `cookbook runs` and the TUI.
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, readSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { MetricValue, MetricsRecord } from "../log/metrics.ts";
import { type DisplayStatus, runState } from "./liveness.ts";

export type TrainingKind = "sl" | "rl" | "dpo";

/** Metrics shown in run listings, first ones present win. */
export const MAIN_METRIC_KEYS = [
  "loss",
  "train_mean_nll",
  "test/nll",
  "env/all/reward/total",
  "reward/total",
  "dpo_loss",
  "accuracy",
  "learning_rate",
] as const;
const MAX_MAIN_METRICS = 3;

export interface RunSummary {
  dir: string;
  name: string;
  status: DisplayStatus;
  live: boolean;
  recipe?: string;
  trainingKind?: TrainingKind;
  pid?: number;
  lastStep?: number;
  /** Up to three of MAIN_METRIC_KEYS from the last metrics record. */
  metrics: Record<string, MetricValue>;
  startedAt?: string;
  /** Epoch ms of the latest write seen (metrics.jsonl, run.json, config.json). */
  updatedAt: number;
}

/** A run dir has metrics.jsonl or config.json (as the cookbook's RunRegistry), or our run.json. */
export function isRunDir(dir: string): boolean {
  return ["metrics.jsonl", "config.json", "run.json"].some((f) => existsSync(join(dir, f)));
}

/** How deep below the root runs are looked for: experiments/<experiment>/<run> and pipeline stages (<run>/<stage>) sit at depth 2. */
export const DISCOVERY_DEPTH = 3;
/** A bound on folders visited, so a root pointed at a large tree stays quick. */
const MAX_FOLDERS_VISITED = 5_000;
/** Folders a run writes inside itself that never hold runs (elsewhere such a name is an ordinary folder: a run may be called "tensorboard"). */
const NOT_RUN_PARENTS = new Set(["node_modules", "tensorboard", "transcripts", "checkpoints", "__pycache__"]);

/**
 * Runs in `root` itself and below it, up to DISCOVERY_DEPTH levels (a run's stages and a batch's
 * runs included), most recently updated first. A nested run is named by its path under the root.
 */
export function discoverRuns(root: string): RunSummary[] {
  const dir = resolve(root);
  if (!existsSync(dir)) return [];
  const found: { dir: string; name: string }[] = [];
  if (isRunDir(dir)) found.push({ dir, name: basename(dir) });
  let visited = 0;
  const walk = (parent: string, prefix: string, depth: number): void => {
    const parentIsRun = isRunDir(parent);
    let entries;
    try {
      entries = readdirSync(parent, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith(".") || (parentIsRun && NOT_RUN_PARENTS.has(entry.name))) continue;
      if (++visited > MAX_FOLDERS_VISITED) return;
      const child = join(parent, entry.name);
      const name = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
      if (isRunDir(child)) found.push({ dir: child, name });
      if (depth < DISCOVERY_DEPTH) walk(child, name, depth + 1);
    }
  };
  walk(dir, "", 1);
  return found.map((f) => ({ ...summarizeRun(f.dir), name: f.name })).sort((a, b) => b.updatedAt - a.updatedAt);
}

export function inferTrainingKind(config: unknown): TrainingKind | undefined {
  if (typeof config !== "object" || config === null) return undefined;
  if ("dpo_beta" in config) return "dpo";
  if ("loss_fn" in config) return "rl";
  if ("num_epochs" in config) return "sl";
  return undefined;
}

export function summarizeRun(dir: string, now = Date.now()): RunSummary {
  const state = runState(dir, now);
  const config = readJsonFile(join(dir, "config.json"));
  const last = readLastJsonlRecord(join(dir, "metrics.jsonl")) as MetricsRecord | undefined;
  const metrics: Record<string, MetricValue> = {};
  if (last) {
    for (const key of MAIN_METRIC_KEYS) {
      if (Object.keys(metrics).length >= MAX_MAIN_METRICS) break;
      const v = last[key];
      if (typeof v === "number" || typeof v === "string") metrics[key] = v;
    }
  }
  const mtimes = ["metrics.jsonl", "run.json", "config.json"].map((f) => mtimeOf(join(dir, f)));
  const summary: RunSummary = {
    dir,
    name: basename(dir),
    status: state.status,
    live: state.live,
    metrics,
    updatedAt: Math.max(...mtimes),
  };
  const recipe = state.manifest?.recipe ?? recipeFromConfig(config);
  if (recipe !== undefined) summary.recipe = recipe;
  const kind = inferTrainingKind(config);
  if (kind) summary.trainingKind = kind;
  if (state.manifest) {
    summary.pid = state.manifest.pid;
    summary.startedAt = state.manifest.started_at;
  }
  if (last && typeof last.step === "number") summary.lastStep = last.step;
  return summary;
}

function recipeFromConfig(config: unknown): string | undefined {
  if (typeof config !== "object" || config === null) return undefined;
  const name = (config as Record<string, unknown>).recipe_name;
  return typeof name === "string" ? name : undefined;
}

function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function readJsonFile(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

/**
 * The last complete, parsable record of a JSONL file, reading only its tail so that listing
 * many large runs stays fast. Undefined when there is none.
 */
export function readLastJsonlRecord(path: string, tailBytes = 65_536): Record<string, unknown> | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    const size = fstatSync(fd).size;
    let window = Math.min(size, tailBytes);
    for (;;) {
      const buffer = Buffer.alloc(window);
      readSync(fd, buffer, 0, window, size - window);
      const lines = buffer.toString("utf8").split("\n");
      // The first line may be cut by the window unless the window starts the file.
      const usable = window === size ? lines : lines.slice(1);
      for (let i = usable.length - 1; i >= 0; i--) {
        const line = usable[i].trim();
        if (!line) continue;
        try {
          const value: unknown = JSON.parse(line);
          if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
        } catch {
          // torn or malformed: look further back
        }
      }
      if (window === size) return undefined;
      window = Math.min(size, window * 4);
    }
  } finally {
    closeSync(fd);
  }
}
