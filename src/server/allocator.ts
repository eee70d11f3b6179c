// glibc's malloc keeps freed memory: one arena per thread (the engine worker is a thread) and a
// mmap threshold that grows after large frees, so the big tensor buffers of finished requests end
// up in the heap instead of going back to the system. These settings make big blocks always
// mmap'd (returned on free) and cap the arenas. glibc reads them only at process start, so
// `cookbook serve` re-runs itself once with them set (COOKBOOK_SERVE_MALLOC=0 opts out).
import { spawn } from "node:child_process";

export const MALLOC_ENV: Record<string, string> = {
  MALLOC_ARENA_MAX: "2",
  MALLOC_MMAP_THRESHOLD_: "131072",
  MALLOC_TRIM_THRESHOLD_: "131072",
};

/** True when this process should re-run itself with MALLOC_ENV (Linux/glibc, not yet set, not opted out). */
export function needsAllocatorTuning(env: NodeJS.ProcessEnv = process.env): boolean {
  if (process.platform !== "linux" || env.COOKBOOK_SERVE_MALLOC === "0") return false;
  return Object.keys(MALLOC_ENV).some((k) => env[k] === undefined);
}

/** Runs this same command line again with MALLOC_ENV; forwards signals; resolves with its exit code. */
export function rerunWithAllocatorTuning(): Promise<number> {
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    env: { ...MALLOC_ENV, ...process.env },
    stdio: "inherit",
  });
  const forward = (sig: NodeJS.Signals) => (): void => {
    child.kill(sig);
  };
  const onInt = forward("SIGINT");
  const onTerm = forward("SIGTERM");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  return new Promise((resolve) => {
    child.once("exit", (code, signal) => {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
      resolve(code ?? (signal !== null ? 1 : 0));
    });
  });
}
