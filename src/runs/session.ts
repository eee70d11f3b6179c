// Everything a recipe needs around its loop, in one call: the run lock (one writer per directory,
// whatever the log-dir policy), log-dir policy, run.json with heartbeat, config.json, logs.log,
// metrics logger and signal handling, with the status recorded on every exit path (completed,
// failed, stopped by signal).
import { mkdirSync } from "node:fs";
import { basename, join } from "node:path";
import type { LogDirBehavior } from "../config/common.ts";
import { MetricsLogger, type MetricsSink, type Writable } from "../log/metrics.ts";
import { TENSORBOARD_DIR, TensorBoardWriter } from "../log/tensorboard/writer.ts";
import { planWandb } from "../log/wandb/index.ts";
import { RunLog } from "../log/runLog.ts";
import { type RunControl, installRunControl } from "./control.ts";
import { checkLogDir, type CheckLogDirOptions } from "./logDir.ts";
import { DEFAULT_HEARTBEAT_MS, type ManifestHandle, type RunStatus, startManifest } from "./manifest.ts";
import { expandLogPath } from "./paths.ts";
import { type RunLock, acquireRunLock, assertNoLiveWriter, sweepRunDir } from "./runLock.ts";

export interface RunSessionOptions {
  logPath: string;
  recipe: string;
  config: unknown;
  behavior: LogDirBehavior;
  /** "embedded", "remote", or "none" for recipes that use no engine. */
  engine: string;
  argv?: readonly string[];
  commandLine?: string;
  /** Console table destination (false for none) and cadence. */
  console?: Writable | false;
  consoleEvery?: number;
  heartbeatMs?: number;
  logDirOptions?: CheckLogDirOptions;
  /** Also write the metrics as TensorBoard event files under <log_path>/tensorboard. */
  tensorboard?: boolean;
  /** Weights & Biases project: each step goes there when WANDB_API_KEY is set (see docs/tracking.md). */
  wandbProject?: string | null;
  /** The W&B run name (default: the run directory's name). */
  wandbName?: string | null;
  /** Where WANDB_API_KEY / WANDB_BASE_URL / WANDB_ENTITY are read (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface RunSession {
  logDir: string;
  /** True when the directory existed and the policy chose resume. */
  resumed: boolean;
  metrics: MetricsLogger;
  log: RunLog;
  control: RunControl;
  manifest: ManifestHandle;
  /** This process's hold on the directory; released when the run ends (withRun) or the process exits. */
  lock: RunLock;
}

export type RunOutcome = Exclude<RunStatus, "running">;

/**
 * Sets up the run directory; undefined when the person chose "exit" at the log-dir prompt. Throws
 * RunLockedError (naming the pid) when another live process writes there, before any policy is
 * applied, so neither a resume nor a delete touches a live run.
 */
export async function startRun(options: RunSessionOptions): Promise<RunSession | undefined> {
  const logDir = expandLogPath(options.logPath);
  assertNoLiveWriter(logDir);
  const outcome = await checkLogDir(logDir, options.behavior, options.logDirOptions);
  if (outcome === "exit") return undefined;
  mkdirSync(logDir, { recursive: true });
  const lock = acquireRunLock(logDir);
  try {
    sweepRunDir(logDir);
    return openSession(logDir, outcome === "resume", lock, options);
  } catch (err) {
    lock.release();
    throw err;
  }
}

function openSession(logDir: string, resumed: boolean, lock: RunLock, options: RunSessionOptions): RunSession {
  const argv = options.argv ?? process.argv.slice(2);
  const commandLine = options.commandLine ?? process.argv.join(" ");
  const log = new RunLog(logDir, commandLine);
  const sinks: MetricsSink[] = [];
  const wandbProject = options.wandbProject ?? null;
  // W&B asked for: the TensorBoard files are written too, so whatever does not reach W&B live can
  // still be uploaded with `wandb sync`.
  if (options.tensorboard === true || wandbProject !== null) {
    sinks.push(new TensorBoardWriter(logDir, { onError: (message) => log.warn(message) }));
  }
  const wandb = planWandb({
    project: wandbProject,
    name: options.wandbName ?? null,
    defaultName: basename(logDir),
    tensorboardDir: join(logDir, TENSORBOARD_DIR),
    config: typeof options.config === "object" && options.config !== null ? (options.config as Record<string, unknown>) : {},
    env: options.env ?? process.env,
    onInfo: (message) => log.info(message),
    onError: (message) => {
      log.warn(message);
      if (options.console !== false) process.stderr.write(`${message}\n`);
    },
  });
  if (wandb.sink) sinks.push(wandb.sink);
  if (wandb.notice !== undefined) {
    log.info(wandb.notice);
    if (options.console !== false) process.stderr.write(`${wandb.notice}\n`);
  }
  const metrics = new MetricsLogger(logDir, { console: options.console, consoleEvery: options.consoleEvery, sinks });
  log.progress = () => (metrics.lastStep === undefined ? "before the first step's metrics" : `after step ${metrics.lastStep}`);
  const manifest = startManifest(
    logDir,
    { recipe: options.recipe, argv, command: commandLine, engine: options.engine },
    options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
  );
  metrics.logHyperparams(options.config);
  const control = installRunControl({
    onForceExit: (signal) => {
      bestEffort(() => log.warn(`${signal}: exiting without a final checkpoint`));
      // The steps' timing so far, as a run that ends normally leaves it.
      metrics.writeTrace();
      manifest.finish("stopped", `${signal} forced exit`);
    },
    log: (message) => {
      log.info(message);
      process.stderr.write(`${message}\n`);
    },
  });
  if (resumed) log.info(`resuming in ${logDir}`);
  return { logDir, resumed, metrics, log, control, manifest, lock };
}

/** Runs a log line on an exit path, where a full disk must not replace the run's own outcome. */
function bestEffort(write: () => void): void {
  try {
    write();
  } catch {
    // run.json (finish) reports what could not be recorded.
  }
}

/**
 * Runs `body` inside a session. The status becomes what body returns, else "stopped" when a stop
 * was requested, else "completed"; "failed" (with the message) when body throws, which rethrows.
 */
export async function withRun(options: RunSessionOptions, body: (run: RunSession) => Promise<RunOutcome | void>): Promise<void> {
  const run = await startRun(options);
  if (!run) return;
  try {
    const result = await body(run);
    const status = result ?? (run.control.stopRequested ? "stopped" : "completed");
    // Uploads (W&B) finish before run.json says the run ended, so a watcher never sees a finished
    // run whose last steps are still in flight.
    await run.metrics.close(0);
    bestEffort(() => run.log.info(`run ${status}`));
    run.manifest.finish(status);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    bestEffort(() => run.log.error(`run failed: ${err instanceof Error && err.stack ? err.stack : message}`));
    await run.metrics.close(1);
    run.manifest.finish("failed", message);
    throw err;
  } finally {
    run.control.dispose();
    run.lock.release();
  }
}
