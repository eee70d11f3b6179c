// behavior_if_log_dir_exists: what to do when a run's log_path already holds something, and a
// guarded delete that refuses anything that is not a finished run directory.
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { parse, relative, resolve } from "node:path";
import type { LogDirBehavior } from "../config/common.ts";
import { UsageError } from "../config/errors.ts";
import { runState } from "./liveness.ts";
import { liveLockOwner } from "./runLock.ts";

export const RUN_FILES = ["metrics.jsonl", "config.json", "run.json", "checkpoints.jsonl", "logs.log", "run.lock"] as const;

export class RefusedDeleteError extends UsageError {
  override name = "RefusedDeleteError";
}

/** Why `dir` must not be deleted, or undefined when it is a finished run directory. */
export function deleteRefusal(dir: string): string | undefined {
  const path = resolve(dir);
  if (path === parse(path).root) return "it is the filesystem root";
  if (path === resolve(homedir())) return "it is the home directory";
  const cwd = process.cwd();
  if (path === cwd || !relative(path, cwd).startsWith("..")) return "it contains the current working directory";
  if (!existsSync(path)) return undefined;
  if (!statSync(path).isDirectory()) return "it is not a directory";
  const entries = readdirSync(path);
  if (entries.length === 0) return undefined;
  if (!RUN_FILES.some((f) => entries.includes(f))) {
    return `it does not look like a run directory (none of ${RUN_FILES.join(", ")})`;
  }
  const owner = liveLockOwner(path);
  if (owner) return `its run is still live (pid ${owner.pid})`;
  const state = runState(path);
  if (state.live) return `its run is still live (pid ${state.manifest?.pid})`;
  return undefined;
}

/** Deletes a run directory after deleteRefusal's checks; throws RefusedDeleteError saying why not. */
export function deleteRunDir(dir: string): void {
  const reason = deleteRefusal(dir);
  if (reason) throw new RefusedDeleteError(`refusing to delete ${resolve(dir)}: ${reason}`);
  rmSync(resolve(dir), { recursive: true, force: true });
}

export type LogDirOutcome = "fresh" | "deleted" | "resume" | "exit";

export interface CheckLogDirOptions {
  /** Whether a person can answer a prompt. Default: stdin and stdout are TTYs. */
  interactive?: boolean;
  /** Asks a question and returns the answer (tests replace it). */
  prompt?: (question: string) => Promise<string>;
  log?: (message: string) => void;
}

async function readlinePrompt(question: string): Promise<string> {
  // Loaded when a question is asked: every command imports this module, few ever ask.
  const { createInterface } = process.getBuiltinModule("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

function hasContent(dir: string): boolean {
  return existsSync(dir) && (!statSync(dir).isDirectory() || readdirSync(dir).length > 0);
}

/**
 * Applies the policy to `logDir` (as the cookbook's check_log_dir): a missing or empty directory
 * is "fresh"; otherwise delete (guarded), resume, raise (UsageError), or ask on a terminal for
 * delete/resume/exit ("exit" means the caller should stop without running).
 */
export async function checkLogDir(logDir: string, behavior: LogDirBehavior, options: CheckLogDirOptions = {}): Promise<LogDirOutcome> {
  const dir = resolve(logDir);
  const log = options.log ?? (() => {});
  if (!hasContent(dir)) return "fresh";
  switch (behavior) {
    case "resume":
      log(`log directory ${dir} exists; resuming`);
      return "resume";
    case "delete":
      deleteRunDir(dir);
      log(`deleted existing log directory ${dir}`);
      return "deleted";
    case "raise":
      throw new UsageError(`log directory ${dir} already exists (behavior_if_log_dir_exists=raise)`);
    case "ask": {
      const interactive = options.interactive ?? Boolean(process.stdin.isTTY && process.stdout.isTTY);
      if (!interactive) {
        throw new UsageError(`log directory ${dir} already exists and there is no terminal to ask; pass behavior_if_log_dir_exists=delete, resume or raise`);
      }
      const prompt = options.prompt ?? readlinePrompt;
      for (;;) {
        const answer = (await prompt(`Log directory ${dir} already exists. [delete, resume, exit]: `)).trim().toLowerCase();
        if (answer === "delete") return checkLogDir(dir, "delete", options);
        if (answer === "resume") return "resume";
        if (answer === "exit") return "exit";
      }
    }
  }
}
