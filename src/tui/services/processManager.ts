// Starting recipes as background processes and stopping them. A launch is `cookbook run <recipe>
// key=value…` detached in its own process group with stdout/stderr in <log_path>/stdout.log, so
// quitting the UI never stops it; everything afterwards goes through the run directory and
// signals to the pid in run.json (src/runs). Events report what was done, for the UI's log.
// node:child_process rather than execa: a detached child with file descriptors and no cleanup
// uses none of execa's features, and loading execa cost ~0.2–0.4 s CPU on every UI start.
import { spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { closeSync, existsSync, mkdirSync, openSync, readdirSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { STDOUT_FILE, assertNoLiveWriter, deleteRunDir, expandLogPath, runState, signalRun } from "../../runs/index.ts";

export type ExistingDirChoice = "resume" | "delete" | "new";

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

const DEFAULT_BIN = resolve(dirname(fileURLToPath(import.meta.url)), "../../../bin/cookbook.js");

/** `dir`, or `dir-2`, `dir-3`… the first that does not exist yet. */
export function freshName(dir: string): string {
  if (!existsSync(dir)) return dir;
  for (let i = 2; ; i++) {
    const candidate = `${dir}-${i}`;
    if (!existsSync(candidate)) return candidate;
  }
}

function hasContent(dir: string): boolean {
  try {
    return readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}

export class ProcessManager extends EventEmitter<{ event: [ProcessEvent] }> {
  private readonly timers = new Map<string, NodeJS.Timeout[]>();

  constructor(private readonly stopPlan: StopPlan = DEFAULT_STOP_PLAN) {
    super();
  }

  private report(kind: ProcessEvent["kind"], runDir: string, message: string): void {
    this.emit("event", { kind, runDir, message, at: Date.now() });
  }

  /**
   * Resolves the existing-directory choice here (the child then always resumes, because its
   * stdout file already sits in the directory), starts the child and returns without waiting.
   * A directory a live run still writes to is refused here (RunLockedError naming its pid), since
   * the child's own refusal would only reach its stdout.log.
   */
  launch(req: LaunchRequest): LaunchResult {
    let logDir = expandLogPath(req.logPath);
    if (hasContent(logDir)) {
      if (req.ifExists !== "new") assertNoLiveWriter(logDir);
      if (req.ifExists === "delete") deleteRunDir(logDir);
      else if (req.ifExists === "new") logDir = freshName(logDir);
    }
    mkdirSync(logDir, { recursive: true });
    const out = openSync(join(logDir, STDOUT_FILE), "a");
    const args = [req.bin ?? DEFAULT_BIN, "run", req.recipe, ...req.args, `log_path=${logDir}`, "behavior_if_log_dir_exists=resume"];
    try {
      const child = spawn(process.execPath, args, {
        // Own process group: signals reach the recipe's children too, and quitting leaves it running.
        detached: true,
        stdio: ["ignore", out, out],
        cwd: req.cwd ?? resolve(dirname(DEFAULT_BIN), ".."),
        env: { ...process.env, ...(req.env ?? {}), FORCE_COLOR: "0" },
      });
      child.on("error", () => {});
      // Ends the parent's interest in the child so quitting the UI does not wait for it.
      child.unref();
      if (child.pid === undefined) throw new Error(`could not start ${req.recipe}`);
      this.report("info", logDir, `launched ${req.recipe} (pid ${child.pid}) in ${basename(logDir)}`);
      return { pid: child.pid, logDir, command: [process.execPath, ...args] };
    } finally {
      closeSync(out);
    }
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
