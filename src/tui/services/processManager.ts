// Starting recipes and batches as background processes and stopping them. A launch is `cookbook run
// <recipe> key=value…` (or `cookbook batch <file>`) detached in its own process group with
// stdout/stderr in <log_path>/stdout.log (<root>/<file>.batch.log), so quitting the UI never stops
// it; everything afterwards goes through the run directory (batch.json) and signals to the pid in
// run.json (src/runs). Events report what was done, for the UI's log.
// execa is loaded on the first launch, not at UI start (loading it costs ~0.2–0.4 s of CPU).
import { PROJECT_ROOT } from "../../projectRoot.ts";
import { EventEmitter } from "node:events";
import { closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { type ExistingDirChoice, STDOUT_FILE, isPidAlive, prepareLaunchDir, runState, signalRun } from "../../runs/index.ts";

export interface LaunchRequest {
  recipe: string;
  /** `key=value` overrides (without log_path / behavior_if_log_dir_exists). */
  args: readonly string[];
  logPath: string;
  /** What to do when log_path already holds a run (ignored when it does not). */
  ifExists: ExistingDirChoice;
  /** Path of bin/cookbook.js (default: this checkout's). */
  bin?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export interface LaunchResult {
  pid: number;
  logDir: string;
  command: string[];
}

export interface StopPlan {
  /** Delay before SIGTERM after SIGINT, and before SIGKILL after SIGTERM. */
  termAfterMs: number;
  killAfterMs: number;
}

export const DEFAULT_STOP_PLAN: StopPlan = { termAfterMs: 20_000, killAfterMs: 5_000 };

export type ProcessEvent = { kind: "info" | "error"; runDir: string; message: string; at: number };

const DEFAULT_BIN = resolve(PROJECT_ROOT, "bin", "cookbook.js");
const PROJECT_DIR = resolve(dirname(DEFAULT_BIN), "..");

export interface BatchLaunchRequest {
  /** The experiment file (*.ts, *.json, *.yaml). */
  file: string;
  /** Experiments root the batch writes into. */
  root: string;
  bin?: string;
  /** Working directory of the batch (default: this process's). */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export interface BatchLaunchResult {
  pid: number;
  /** The experiment file, absolute. */
  file: string;
  logFile: string;
  command: string[];
  /** Epoch ms of the launch (the batch.json to follow is written after it). */
  at: number;
}

export interface SpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** stdout and stderr are appended here. */
  outFile: string;
  /** For messages: what is being started. */
  what: string;
}

/** Starts `node <args>` detached and resolves with its pid (tests pass a fake one to ProcessManager). */
export type Spawner = (args: readonly string[], options: SpawnOptions) => Promise<number>;

/**
 * The child runs detached in its own process group with its output in a file, so quitting the UI
 * never stops it; it returns once the child has a pid, without waiting for it to finish.
 */
export async function spawnDetached(args: readonly string[], options: SpawnOptions): Promise<number> {
  const { execa } = await import("execa");
  // A file descriptor, not execa's `{ file }` target: that one is written through this process,
  // and the child's output must not depend on the UI staying open. execa passes any descriptor
  // through to the child; its types only spell out 3–9.
  const out = openSync(options.outFile, "a") as 3;
  try {
    const child = execa(process.execPath, args, {
      // Own process group: signals reach the child's children too, and quitting leaves it running.
      detached: true,
      cleanup: false,
      stdin: "ignore",
      stdout: out,
      stderr: out,
      reject: false,
      cwd: options.cwd,
      env: { ...options.env, FORCE_COLOR: "0" },
    });
    // The outcome is read from the files the child writes, never from this handle.
    void child.catch(() => {});
    if (child.pid === undefined) {
      const result = await child;
      throw new Error(`could not start ${options.what}: ${"message" in result ? result.message : "no pid"}`);
    }
    // Ends the parent's interest in the child so quitting the UI does not wait for it.
    child.unref();
    return child.pid;
  } finally {
    closeSync(out);
  }
}

export class ProcessManager extends EventEmitter<{ event: [ProcessEvent] }> {
  private readonly timers = new Map<string, NodeJS.Timeout[]>();

  constructor(
    private readonly stopPlan: StopPlan = DEFAULT_STOP_PLAN,
    private readonly spawn: Spawner = spawnDetached,
  ) {
    super();
  }

  private report(kind: ProcessEvent["kind"], runDir: string, message: string): void {
    this.emit("event", { kind, runDir, message, at: Date.now() });
  }

  /**
   * Resolves the existing-directory choice (src/runs), starts the child and returns once it has
   * a pid, without waiting for it to finish.
   */
  async launch(req: LaunchRequest): Promise<LaunchResult> {
    const logDir = prepareLaunchDir(req.logPath, req.ifExists);
    const args = [req.bin ?? DEFAULT_BIN, "run", req.recipe, ...req.args, `log_path=${logDir}`, "behavior_if_log_dir_exists=resume"];
    const pid = await this.spawn(args, { cwd: req.cwd ?? PROJECT_DIR, env: req.env ?? {}, outFile: join(logDir, STDOUT_FILE), what: req.recipe });
    this.report("info", logDir, `launched ${req.recipe} (pid ${pid}) in ${basename(logDir)}`);
    return { pid, logDir, command: [process.execPath, ...args] };
  }

  /**
   * `cookbook batch <file> --root <root>` in the background, output appended to <root>/<file name>.batch.log.
   * The batch is followed through its batch.json afterwards, like a run through its directory.
   */
  async launchBatch(req: BatchLaunchRequest): Promise<BatchLaunchResult> {
    const file = resolve(req.file);
    if (!existsSync(file)) throw new Error(`no experiment file at ${file}`);
    const root = resolve(req.root);
    mkdirSync(root, { recursive: true });
    const logFile = join(root, `${basename(file)}.batch.log`);
    // The root is always given: the batch writes where this screen looks, whatever its cwd.
    const args = [req.bin ?? DEFAULT_BIN, "batch", file, "--root", root];
    const pid = await this.spawn(args, { cwd: req.cwd ?? process.cwd(), env: req.env ?? {}, outFile: logFile, what: `cookbook batch ${basename(file)}` });
    this.report("info", root, `launched cookbook batch ${basename(file)} (pid ${pid}); output in ${logFile}`);
    return { pid, file, logFile, command: [process.execPath, ...args], at: Date.now() };
  }

  /** SIGINT to the batch process alone: its running runs save and stop, a later `cookbook batch` continues. */
  stopBatch(pid: number, name: string): void {
    if (!isPidAlive(pid)) throw new Error(`batch ${name} is not running (pid ${pid} is gone)`);
    // Not the process group: the batch forwards one SIGINT to its runs itself, and a second one
    // would make them exit without saving.
    process.kill(pid, "SIGINT");
    this.report("info", name, `sent SIGINT (save and stop) to batch ${name} (pid ${pid})`);
  }

  /** SIGUSR1: the run saves a checkpoint at its next step boundary. */
  checkpoint(runDir: string): void {
    const { pid } = signalRun(runDir, "checkpoint");
    this.report("info", runDir, `sent SIGUSR1 (checkpoint) to pid ${pid}`);
  }

  /**
   * Graduated stop: SIGINT (save and stop), then SIGTERM and SIGKILL if the run is still alive
   * after the plan's delays. Escalation needs this UI to stay open; the first signal does not.
   */
  stop(runDir: string): void {
    const { pid } = signalRun(runDir, "stop");
    this.report("info", runDir, `sent SIGINT (save and stop) to pid ${pid}`);
    this.clearTimers(runDir);
    const stillAlive = (): boolean => {
      const s = runState(runDir);
      return s.live || s.status === "stale";
    };
    const term = setTimeout(() => {
      if (!stillAlive()) return;
      try {
        signalRun(runDir, "terminate");
        this.report("info", runDir, `still running after ${this.stopPlan.termAfterMs / 1000}s: sent SIGTERM`);
      } catch (err) {
        this.report("error", runDir, (err as Error).message);
      }
      const kill = setTimeout(() => {
        if (!stillAlive()) return;
        try {
          signalRun(runDir, "kill");
          this.report("info", runDir, "still running: sent SIGKILL");
        } catch (err) {
          this.report("error", runDir, (err as Error).message);
        }
      }, this.stopPlan.killAfterMs);
      kill.unref();
      this.timers.get(runDir)?.push(kill);
    }, this.stopPlan.termAfterMs);
    term.unref();
    this.timers.set(runDir, [term]);
  }

  private clearTimers(runDir: string): void {
    for (const t of this.timers.get(runDir) ?? []) clearTimeout(t);
    this.timers.delete(runDir);
  }

  dispose(): void {
    for (const dir of [...this.timers.keys()]) this.clearTimers(dir);
  }
}
