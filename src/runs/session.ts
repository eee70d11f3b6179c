// Everything a recipe needs around its loop, in one call: log-dir policy, run.json with heartbeat,
// config.json, logs.log, metrics logger and signal handling, with the status recorded on every
// exit path (completed, failed, stopped by signal).
import type { LogDirBehavior } from "../config/common.ts";
import { MetricsLogger, type Writable } from "../log/metrics.ts";
import { RunLog } from "../log/runLog.ts";
import { type RunControl, installRunControl } from "./control.ts";
import { checkLogDir, type CheckLogDirOptions } from "./logDir.ts";
import { DEFAULT_HEARTBEAT_MS, type ManifestHandle, type RunStatus, startManifest } from "./manifest.ts";
import { expandLogPath } from "./paths.ts";

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
}

export interface RunSession {
  logDir: string;
  /** True when the directory existed and the policy chose resume. */
  resumed: boolean;
  metrics: MetricsLogger;
  log: RunLog;
  control: RunControl;
  manifest: ManifestHandle;
}

export type RunOutcome = Exclude<RunStatus, "running">;

/** Sets up the run directory; undefined when the person chose "exit" at the log-dir prompt. */
export async function startRun(options: RunSessionOptions): Promise<RunSession | undefined> {
  const logDir = expandLogPath(options.logPath);
  const outcome = await checkLogDir(logDir, options.behavior, options.logDirOptions);
  if (outcome === "exit") return undefined;
  const argv = options.argv ?? process.argv.slice(2);
  const commandLine = options.commandLine ?? process.argv.join(" ");
  const metrics = new MetricsLogger(logDir, { console: options.console, consoleEvery: options.consoleEvery });
  const log = new RunLog(logDir, commandLine);
  const manifest = startManifest(
    logDir,
    { recipe: options.recipe, argv, command: commandLine, engine: options.engine },
    options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
  );
  metrics.logHyperparams(options.config);
  const control = installRunControl({
    onForceExit: (signal) => {
      log.warn(`${signal}: exiting without a final checkpoint`);
      manifest.finish("stopped", `${signal} forced exit`);
    },
    log: (message) => {
      log.info(message);
      process.stderr.write(`${message}\n`);
    },
  });
  if (outcome === "resume") log.info(`resuming in ${logDir}`);
  return { logDir, resumed: outcome === "resume", metrics, log, control, manifest };
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
    run.log.info(`run ${status}`);
    run.manifest.finish(status);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    run.log.error(`run failed: ${err instanceof Error && err.stack ? err.stack : message}`);
    run.manifest.finish("failed", message);
    throw err;
  } finally {
    run.control.dispose();
  }
}
