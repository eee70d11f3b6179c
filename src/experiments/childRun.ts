// One run of a batch as its own `cookbook run` process, exactly as a person would launch it, into
// its run directory with behavior_if_log_dir_exists=resume (so a half-done run picks up from its
// last checkpoint). The child gets its own process group: a Ctrl-C at the terminal reaches only the
// batch, which forwards one SIGINT per run (two would make a run exit without saving).
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { PROJECT_ROOT } from "../projectRoot.ts";
import { readCheckpoints } from "../runs/checkpoints.ts";
import { readManifest } from "../runs/manifest.ts";
import type { BatchRunStatus } from "./state.ts";

/** A run is finished when its final checkpoint is recorded. */
export function runFinished(logDir: string): boolean {
  if (!existsSync(join(logDir, "checkpoints.jsonl"))) return false;
  try {
    return readCheckpoints(logDir).some((c) => c.final === true || c.name === "final");
  } catch {
    return false;
  }
}

export interface ChildRunSpec {
  recipe: string;
  args: readonly string[];
  logDir: string;
  /** Where the child's console output goes (appended). */
  consoleLog: string;
}

export function startChildRun(spec: ChildRunSpec): ChildProcess {
  mkdirSync(dirname(spec.consoleLog), { recursive: true });
  const fd = openSync(spec.consoleLog, "a");
  try {
    return spawn(
      process.execPath,
      [join(PROJECT_ROOT, "bin", "cookbook.js"), "run", spec.recipe, ...spec.args, `log_path=${spec.logDir}`, "behavior_if_log_dir_exists=resume"],
      { detached: true, stdio: ["ignore", fd, fd], env: { ...process.env, FORCE_COLOR: "0" } },
    );
  } finally {
    closeSync(fd);
  }
}

/** The line that says why a run failed: the CLI's `error:` line, else the last lines of its output. */
export function failureReason(consoleLog: string, exit: { code: number | null; signal: NodeJS.Signals | null }): string {
  let lines: string[] = [];
  try {
    lines = readFileSync(consoleLog, "utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "");
  } catch {
    // no output at all
  }
  const error = [...lines].reverse().find((l) => l.startsWith("error:"));
  const how = exit.signal !== null ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
  return `${how}: ${error ?? (lines.slice(-3).join(" | ") || "no output")}`;
}

/** What a run's exit means for the batch. */
export function statusAfterExit(
  logDir: string,
  consoleLog: string,
  exit: { code: number | null; signal: NodeJS.Signals | null },
  stopping: boolean,
): { status: BatchRunStatus; error?: string } {
  if (runFinished(logDir)) return { status: "done" };
  let recorded: string | undefined;
  try {
    recorded = readManifest(logDir)?.status;
  } catch {
    recorded = undefined;
  }
  if (recorded === "stopped" || (stopping && (exit.code === 0 || exit.code === 130 || exit.signal !== null))) return { status: "stopped" };
  return { status: "failed", error: failureReason(consoleLog, exit) };
}
