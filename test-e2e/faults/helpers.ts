// Running `cookbook run sl_basic` as a user would, small enough to take seconds, and mounting a
// small tmpfs to fill up.
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { auditProblems, auditRun } from "../../scripts/runAudit.ts";

export const REPO = resolve(import.meta.dirname, "../..");
const BIN = join(REPO, "bin", "cookbook.js");

/** sl_basic on the shipped tiny model with a small LoRA, 2 conversations a step, a checkpoint every 2. */
export const SMALL_SL = ["batch_size=2", "save_every=2", "eval_every=0", "lora_rank=4", "test_size=0", "max_length=128"];

/** Metrics rows a run has logged so far (0 before the file exists). */
export function metricsRows(logDir: string): number {
  const file = join(logDir, "metrics.jsonl");
  return existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "").length
    : 0;
}

/**
 * A finished run's audit: its final checkpoint recorded and present in `store`, steps 0..steps−1
 * each logged exactly once and in order. Returns the run's logs.log for the caller's own checks.
 */
export function assertEveryStepOnce(logDir: string, store: string, steps: number): string {
  const audit = auditRun(logDir, store);
  assert.deepEqual(auditProblems(audit, { finalRecord: true, lastStep: steps - 1 }), []);
  assert.deepEqual(
    audit.steps,
    Array.from({ length: steps }, (_, i) => i),
    "every step logged exactly once, in order",
  );
  return readFileSync(join(logDir, "logs.log"), "utf8");
}

export function tempDir(prefix = "cookbook-faults-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function startCookbook(args: string[], env: NodeJS.ProcessEnv, stdin: "ignore" | "pipe" = "ignore"): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], { cwd: REPO, env: { ...process.env, ...env, FORCE_COLOR: "0" }, stdio: [stdin, "pipe", "pipe"] });
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function finished(child: ChildProcess, timeoutMs = 240_000): Promise<Finished> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise((res, rej) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      rej(new Error(`cookbook did not finish in ${timeoutMs / 1000}s; stderr: ${stderr}`));
    }, timeoutMs);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      // Let the pipes drain.
      setImmediate(() => res({ code, signal, stdout, stderr }));
    });
  });
}

export function runCookbook(args: string[], env: NodeJS.ProcessEnv, timeoutMs?: number): Promise<Finished> {
  return finished(startCookbook(args, env), timeoutMs);
}

export async function waitUntil(check: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Mounts a tmpfs of `size` (e.g. "2m") at a new folder; fails loudly when this machine cannot. */
export function mountTmpfs(size: string): { dir: string; resize(size: string): void; unmount(): void } {
  const dir = tempDir("cookbook-tmpfs-");
  mkdirSync(dir, { recursive: true });
  const mount = (opts: string): void => {
    const r = spawnSync("mount", ["-t", "tmpfs", "-o", opts, "tmpfs", dir], { encoding: "utf8" });
    if (r.status !== 0) {
      throw new Error(
        `cannot mount a tmpfs at ${dir} (${(r.stderr || r.error?.message || "").trim()}): this test needs root and mount(8); ` +
          "the same faults are covered by injected write errors in test/runs/diskFull.test.ts and test/engine/storeFaults.test.ts",
      );
    }
  };
  mount(`size=${size}`);
  return {
    dir,
    resize: (s) => {
      const r = spawnSync("mount", ["-o", `remount,size=${s}`, dir], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(`cannot resize the tmpfs at ${dir}: ${r.stderr}`);
    },
    unmount: () => {
      spawnSync("umount", ["-l", dir]);
    },
  };
}
