import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const REPO = resolve(import.meta.dirname, "../..");

export function tempDir(prefix = "cookbook-runs-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Starts `node --import tsx <script> ...args` from the repo root. */
export function spawnTs(script: string, args: string[]): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", script, ...args], { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
}

export function waitForOutput(child: ChildProcess, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; got: ${out}`)), timeoutMs);
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (pattern.test(out)) {
        clearTimeout(timer);
        resolvePromise(out);
      }
    });
  });
}

export function waitForExit(child: ChildProcess, timeoutMs = 20_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error("timed out waiting for exit")), timeoutMs);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal });
    });
  });
}

export async function waitUntil(check: () => boolean, timeoutMs = 20_000, what = "condition"): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
