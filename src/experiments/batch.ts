// `cookbook batch`: train an experiment's runs one after another (or N at once), each as its own
// `cookbook run` process in <root>/<experiment>/<run>, then evaluate every finished run and every
// baseline on every test set and write the comparison and the HTML report. batch.json says where
// everything stands after every change. A finished run is skipped, a half-done one resumes; a stop
// (SIGINT) lets the running runs save and stop, and the next invocation carries on from there.
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { EvalStore } from "../eval/store.ts";
import { writeFileAtomic } from "../files/durable.ts";
import { readMetrics, type MetricsRecord } from "../log/metrics.ts";
import { MAIN_METRIC_KEYS, readLastJsonlRecord } from "../runs/discovery.ts";
import { isPidAlive } from "../runs/liveness.ts";
import { readMetricTail } from "../runs/logs.ts";
import { createServiceClient } from "../service.ts";
import type { ServiceClient } from "../tinker/clients.ts";
import { UsageError } from "../config/errors.ts";
import { getConfigValue } from "../config/parse.ts";
import { runFinished, startChildRun, statusAfterExit } from "./childRun.ts";
import { writeComparisonFiles } from "./compare.ts";
import { evaluateExperiment } from "./evaluate.ts";
import type { ExperimentPlan, PlannedRun } from "./plan.ts";
import { renderReport } from "./report/html.ts";
import { type BatchRunState, type BatchState, type Comparison, experimentDir, readBatchState, readComparison, writeBatchState } from "./state.ts";

export const REPORT_FILE = "report.html";

export interface BatchOptions {
  /** Experiments root (default experiments/): runs go to <root>/<experiment>/<run>. */
  root: string;
  train: boolean;
  eval: boolean;
  /** Runs trained at the same time. */
  parallel: number;
  log?: (line: string) => void;
  /** The service evaluations use (default: the embedded engine, or the plan's base_url). */
  openService?: () => Promise<ServiceClient>;
  now?: () => Date;
}

export interface BatchOutcome {
  dir: string;
  state: BatchState;
  comparison?: Comparison;
}

/** Overrides whose value in the finished run's config.json differs from the experiment's (`key=old`). */
export function changedOverrides(logDir: string, run: PlannedRun): string[] {
  let recorded: unknown;
  try {
    recorded = JSON.parse(readFileSync(join(logDir, "config.json"), "utf8"));
  } catch {
    return [];
  }
  return Object.keys(run.overrides)
    .filter((key) => JSON.stringify(getConfigValue(recorded, key)) !== JSON.stringify(getConfigValue(run.config, key)))
    .map((key) => `${key}=${JSON.stringify(getConfigValue(recorded, key))}`);
}

const numberOf = (r: Record<string, unknown> | undefined, k: string): number | undefined =>
  r !== undefined && typeof r[k] === "number" ? (r[k] as number) : undefined;

export class Batch {
  readonly dir: string;
  private readonly log: (line: string) => void;
  private readonly now: () => Date;
  private state!: BatchState;
  private readonly children = new Map<string, ChildProcess>();
  private stopRequests = 0;

  constructor(
    readonly plan: ExperimentPlan,
    readonly options: BatchOptions,
  ) {
    this.dir = experimentDir(plan.name, options.root);
    this.log = options.log ?? ((line) => process.stdout.write(`${line}\n`));
    this.now = options.now ?? (() => new Date());
  }

  runDir(name: string): string {
    return join(this.dir, name);
  }

  get stopping(): boolean {
    return this.stopRequests > 0;
  }

  /** Stop requests so far (a second one means "now"). */
  get stopCount(): number {
    return this.stopRequests;
  }

  /** undefined before run() has read the experiment's state. */
  get phase(): BatchState["phase"] | undefined {
    return (this.state as BatchState | undefined)?.phase;
  }

  /**
   * Records the batch as stopped without waiting for the evaluation in progress (its store keeps
   * every finished example; the next batch resumes it). For a second Ctrl-C while evaluating.
   */
  abandon(): void {
    this.save({ phase: "stopped" });
  }

  /**
   * Asks the batch to stop: no new run starts, and each running run gets one SIGINT (it saves a
   * checkpoint and stops at its next step). A second call forwards a second SIGINT: runs exit now.
   */
  stop(): void {
    this.stopRequests += 1;
    if (this.stopRequests === 1)
      this.log(
        `stopping: ${this.children.size > 0 ? `${[...this.children.keys()].join(", ")} save${this.children.size === 1 ? "s" : ""} and stop${this.children.size === 1 ? "s" : ""}; ` : ""}run the same command again to continue (stop again to exit now)`,
      );
    for (const child of this.children.values()) {
      if (child.pid !== undefined && child.exitCode === null) {
        try {
          process.kill(child.pid, "SIGINT");
        } catch {
          // already gone
        }
      }
    }
  }

  /** Rewrites batch.json (atomically); the pid is there while the batch trains or evaluates. */
  private save(changes: Partial<BatchState> = {}): void {
    const { pid: _pid, ...next } = { ...this.state, ...changes, updated_at: this.now().toISOString() };
    this.state = next.phase === "training" || next.phase === "evaluating" ? { ...next, pid: process.pid } : next;
    writeBatchState(this.dir, this.state);
  }

  private setRun(name: string, changes: Partial<BatchRunState>): void {
    this.state = { ...this.state, runs: this.state.runs.map((r) => (r.name === name ? { ...r, ...changes } : r)) };
    this.save();
  }

  /** Refuses to run beside a live batch of the same experiment. */
  private checkNotRunning(previous: BatchState | undefined): void {
    if (previous?.pid === undefined || previous.pid === process.pid) return;
    if ((previous.phase === "training" || previous.phase === "evaluating") && isPidAlive(previous.pid)) {
      throw new UsageError(
        `experiment ${this.plan.name} is already being run by pid ${previous.pid} (${join(this.dir, "batch.json")}); stop it first (kill -INT ${previous.pid})`,
      );
    }
  }

  private initialRuns(previous: BatchState | undefined): BatchRunState[] {
    return this.plan.runs.map((run) => {
      const before = previous?.runs.find((r) => r.name === run.name);
      const logPath = this.runDir(run.name);
      const base: BatchRunState = {
        name: run.name,
        recipe: run.recipe,
        overrides: run.overrides,
        log_path: logPath,
        status: "queued",
        ...(this.plan.keyMetric !== undefined
          ? { key_metric: this.plan.keyMetric }
          : before?.key_metric !== undefined
            ? { key_metric: before.key_metric }
            : {}),
      };
      if (runFinished(logPath)) {
        const changed = changedOverrides(logPath, run);
        if (changed.length > 0)
          this.log(
            `warning: ${run.name} finished with ${changed.join(", ")}; the experiment now says otherwise, but a finished run is not retrained (delete ${logPath} to retrain it)`,
          );
        return {
          ...base,
          status: "done",
          ...(before?.started_at !== undefined ? { started_at: before.started_at } : {}),
          ...(before?.finished_at !== undefined ? { finished_at: before.finished_at } : {}),
        };
      }
      // Without training, a run keeps what the last batch said about it (stopped, failed).
      if (!this.options.train && before !== undefined && before.status !== "running" && before.status !== "done")
        return { ...base, status: before.status, ...(before.error !== undefined ? { error: before.error } : {}) };
      return base;
    });
  }

  async run(): Promise<BatchOutcome> {
    mkdirSync(this.dir, { recursive: true });
    const previous = readBatchState(this.dir);
    this.checkNotRunning(previous);
    this.state = {
      experiment: this.plan.name,
      file: this.plan.file,
      updated_at: this.now().toISOString(),
      phase: "training",
      runs: this.initialRuns(previous),
    };
    const queued = this.state.runs.filter((r) => r.status === "queued");
    const done = this.state.runs.filter((r) => r.status === "done");
    if (done.length > 0) this.log(`${done.length} of ${this.state.runs.length} runs already finished: ${done.map((r) => r.name).join(", ")}`);

    if (this.options.train && queued.length > 0) {
      this.save({ phase: "training" });
      await this.trainAll(queued.map((r) => this.plan.runs.find((p) => p.name === r.name)!));
    }
    if (this.stopping) return this.finish("stopped");

    let comparison: Comparison | undefined;
    if (this.options.eval && this.plan.testSets.length > 0) {
      this.save({ phase: "evaluating" });
      const result = await this.evaluate();
      comparison = result.comparison;
      if (result.stopped) return this.finish("stopped", comparison);
    } else if (this.options.eval) this.log("no test_sets in the experiment: nothing to evaluate");
    const failed = this.state.runs.filter((r) => r.status === "failed");
    return this.finish(
      failed.length > 0 ? "failed" : "done",
      comparison,
      failed.length > 0 ? `${failed.length} run${failed.length === 1 ? "" : "s"} failed: ${failed.map((r) => r.name).join(", ")}` : undefined,
    );
  }

  private async trainAll(queue: PlannedRun[]): Promise<void> {
    const total = queue.length;
    let started = 0;
    const shown = new Map<string, number>();
    const monitor = setInterval(() => this.showProgress(shown), 2000);
    try {
      await new Promise<void>((resolve) => {
        const launchMore = (): void => {
          while (!this.stopping && this.children.size < this.options.parallel && queue.length > 0) {
            const run = queue.shift()!;
            started += 1;
            this.launch(run, `${started}/${total}`, () => launchMore());
          }
          if (this.children.size === 0) resolve();
        };
        launchMore();
      });
    } finally {
      clearInterval(monitor);
    }
  }

  private launch(run: PlannedRun, position: string, onExit: () => void): void {
    const logDir = this.runDir(run.name);
    const consoleLog = join(this.dir, "logs", `${run.name}.log`);
    const resuming = existsSync(join(logDir, "checkpoints.jsonl"));
    const t0 = Date.now();
    const child = startChildRun({ recipe: run.recipe, args: run.args, logDir, consoleLog });
    this.children.set(run.name, child);
    this.log(`[${position}] ${run.name}: ${resuming ? "resuming" : "training"} ${run.recipe} → ${logDir}`);
    const { error: _error, finished_at: _finished, ...current } = this.state.runs.find((r) => r.name === run.name)!;
    this.state = {
      ...this.state,
      runs: this.state.runs.map((r) =>
        r.name === run.name
          ? { ...current, status: "running", started_at: this.now().toISOString(), ...(child.pid !== undefined ? { pid: child.pid } : {}) }
          : r,
      ),
    };
    this.save();
    child.once("error", (err) => this.log(`${run.name}: could not start: ${err.message}`));
    child.once("close", (code, signal) => {
      this.children.delete(run.name);
      const outcome = statusAfterExit(logDir, consoleLog, { code, signal }, this.stopping);
      const { pid: _pid, ...rest } = this.state.runs.find((r) => r.name === run.name)!;
      this.state = {
        ...this.state,
        runs: this.state.runs.map((r) =>
          r.name === run.name
            ? { ...rest, status: outcome.status, finished_at: this.now().toISOString(), ...(outcome.error !== undefined ? { error: outcome.error } : {}) }
            : r,
        ),
      };
      this.save();
      const key = this.keyMetricOf(run.name);
      const value = key !== undefined ? readMetricTail(logDir, key).at(-1) : undefined;
      this.log(
        `[${position}] ${run.name}: ${outcome.status} after ${((Date.now() - t0) / 1000).toFixed(1)} s${value !== undefined ? ` (last ${key} ${value.toPrecision(4)})` : ""}${outcome.error !== undefined ? ` — ${outcome.error} (full output: ${consoleLog})` : ""}`,
      );
      onExit();
    });
  }

  /**
   * The run's key metric: the experiment's, else the first main metric in the recent rows (then
   * recorded). Not the last row alone: a run whose last row is an evaluation would get `test/nll`.
   */
  private keyMetricOf(name: string): string | undefined {
    const run = this.state.runs.find((r) => r.name === name)!;
    if (run.key_metric !== undefined) return run.key_metric;
    const key = MAIN_METRIC_KEYS.find((k) => readMetricTail(run.log_path, k).length > 0);
    if (key !== undefined) this.setRun(name, { key_metric: key });
    return key;
  }

  /** A line per running run each time it passes a quarter of its steps. */
  private showProgress(shown: Map<string, number>): void {
    for (const name of this.children.keys()) {
      const last = readLastJsonlRecord(join(this.runDir(name), "metrics.jsonl"));
      const progress = numberOf(last, "progress") ?? numberOf(last, "progress/done_frac");
      if (progress === undefined) continue;
      const quarter = Math.floor(progress * 4);
      if (quarter <= (shown.get(name) ?? 0) || quarter >= 4) continue;
      shown.set(name, quarter);
      const key = this.keyMetricOf(name);
      const value = key !== undefined ? readMetricTail(this.runDir(name), key).at(-1) : undefined;
      this.log(`    ${name}: step ${String(last?.["step"])} (${Math.round(progress * 100)}%)${value !== undefined ? ` ${key} ${value.toPrecision(4)}` : ""}`);
    }
  }

  private async evaluate(): Promise<{ comparison: Comparison; stopped: boolean }> {
    const finished = new Set(this.state.runs.filter((r) => r.status === "done").map((r) => r.name));
    const missing = this.state.runs.filter((r) => r.status !== "done").map((r) => r.name);
    if (missing.length > 0) this.log(`not evaluated (training not finished): ${missing.join(", ")}`);
    const models = this.plan.baselines.length + finished.size;
    this.log(
      `evaluating ${models} model${models === 1 ? "" : "s"} (${this.plan.baselines.length} baseline${this.plan.baselines.length === 1 ? "" : "s"}) on ${this.plan.testSets.map((t) => t.name).join(", ")}`,
    );
    const service = await (this.options.openService ?? (() => createServiceClient(this.plan.evalBaseUrl !== null ? { baseUrl: this.plan.evalBaseUrl } : {})))();
    try {
      const result = await evaluateExperiment(this.plan, {
        service,
        store: new EvalStore(join(this.dir, "evals")),
        finishedRuns: finished,
        runDirs: new Map(this.plan.runs.map((r) => [r.name, this.runDir(r.name)])),
        log: this.log,
        shouldStop: () => this.stopping,
        now: this.now,
      });
      writeComparisonFiles(this.dir, result.comparison);
      return result;
    } finally {
      await service.close();
    }
  }

  private finish(phase: BatchState["phase"], comparison?: Comparison, error?: string): BatchOutcome {
    const { error: _old, ...rest } = this.state;
    this.state = { ...rest, ...(error !== undefined ? { error } : {}) };
    this.save({ phase });
    let shown = comparison;
    try {
      shown ??= readComparison(this.dir);
    } catch (err) {
      this.log(`the earlier comparison is not readable, the report leaves it out: ${(err as Error).message}`);
    }
    this.writeReport(shown);
    return { dir: this.dir, state: this.state, ...(comparison !== undefined ? { comparison } : {}) };
  }

  private writeReport(comparison: Comparison | undefined): void {
    const metrics = new Map<string, MetricsRecord[]>();
    for (const r of this.state.runs) {
      try {
        metrics.set(r.name, readMetrics(r.log_path));
      } catch {
        metrics.set(r.name, []);
      }
    }
    const html = renderReport({
      state: this.state,
      ...(comparison !== undefined ? { comparison } : {}),
      metrics,
      ...(this.plan.description !== undefined ? { description: this.plan.description } : {}),
      generatedAt: this.now().toISOString(),
    });
    writeFileAtomic(join(this.dir, REPORT_FILE), html, { context: `report of ${this.plan.name}` });
  }
}

/** The comparison table as Markdown, when the batch wrote one. */
export function readComparisonMarkdown(dir: string): string | undefined {
  const path = join(dir, "comparison.md");
  return existsSync(path) ? readFileSync(path, "utf8") : undefined;
}
