// Starting recipes as background processes and stopping them. A launch is `cookbook run <recipe>
// key=value…` detached in its own process group with stdout/stderr in <log_path>/stdout.log, so
// quitting the UI never stops it; everything afterwards goes through the run directory and
// signals to the pid in run.json (src/runs). Events report what was done, for the UI's log.
// execa is loaded on the first launch, not at UI start (loading it costs ~0.2–0.4 s of CPU).
import { PROJECT_ROOT } from "../../projectRoot.ts";
import { EventEmitter } from "node:events";
import { closeSync, openSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { type ExistingDirChoice, STDOUT_FILE, prepareLaunchDir, runState, signalRun } from "../../runs/index.ts";


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

export class ProcessManager extends EventEmitter<{ event: [ProcessEvent] }> {
  private readonly timers = new Map<string, NodeJS.Timeout[]>();

  constructor(private readonly stopPlan: StopPlan = DEFAULT_STOP_PLAN) {
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
    const { execa } = await import("execa");
    // A file descriptor, not execa's `{ file }` target: that one is written through this process,
    // and the run's output must not depend on the UI staying open. execa passes any descriptor
    // through to the child; its types only spell out 3–9.
    const out = openSync(join(logDir, STDOUT_FILE), "a") as 3;
    try {
      const child = execa(process.execPath, args, {
        // Own process group: signals reach the recipe's children too, and quitting leaves it running.
        detached: true,
        cleanup: false,
        stdin: "ignore",
        stdout: out,
        stderr: out,
        reject: false,
        cwd: req.cwd ?? resolve(dirname(DEFAULT_BIN), ".."),
        env: { ...(req.env ?? {}), FORCE_COLOR: "0" },
      });
      // The run's outcome is read from its directory, never from this handle.
      void child.catch(() => {});
      if (child.pid === undefined) {
        const result = await child;
        throw new Error(`could not start ${req.recipe}: ${"message" in result ? result.message : "no pid"}`);
      }
      // Ends the parent's interest in the child so quitting the UI does not wait for it.
      child.unref();
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
