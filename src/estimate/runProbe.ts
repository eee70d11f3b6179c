// Runs a recipe for a few steps in a scratch directory, as its own `cookbook run` process, and
// returns its metrics rows and when the first one appeared; the process is then killed, and the
// checkpoints its steps saved go with the scratch directory (it has its own checkpoint store). A
// remote base_url is replaced by the embedded engine: the probe must not spend the user's credits.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { PROJECT_ROOT } from "../projectRoot.ts";
import { readMetrics, type MetricsRecord } from "../log/metrics.ts";
import type { ProbeMeasurement } from "./probe.ts";

export interface ProbeOptions {
  /** Metrics rows to wait for (default 4: the first carries warm-up, the rest give the pace). */
  steps?: number;
  timeoutMs?: number;
  /** Told what is happening, for a progress line. */
  onProgress?: (message: string) => void;
}

/** The rows written so far (a torn last line is left for the next read). */
function readRows(logPath: string): MetricsRecord[] {
  try {
    return readMetrics(logPath);
  } catch {
    return [];
  }
}

/**
 * A COOKBOOK_HOME for the probe in its scratch folder: the person's models and checkpoints are
 * visible through symlinks (a load_checkpoint_path still loads), while the checkpoints the probe's
 * steps save land in the scratch store and go with it.
 */
function scratchHome(dir: string, env: NodeJS.ProcessEnv): string {
  const real = env["COOKBOOK_HOME"] || join(homedir(), ".cookbook");
  const home = join(dir, "home");
  mkdirSync(join(home, "checkpoints"), { recursive: true });
  if (!existsSync(real)) return home;
  for (const entry of readdirSync(real)) if (entry !== "checkpoints") symlinkSync(join(real, entry), join(home, entry));
  const store = join(real, "checkpoints");
  if (existsSync(store)) for (const entry of readdirSync(store)) symlinkSync(join(store, entry), join(home, "checkpoints", entry));
  return home;
}

export async function probeRecipe(recipe: string, args: readonly string[], options: ProbeOptions = {}): Promise<ProbeMeasurement> {
  const want = options.steps ?? 4;
  const dir = mkdtempSync(join(tmpdir(), "cookbook-estimate-"));
  const logPath = join(dir, "run");
  const kept = args.filter((a) => !/^(log_path|base_url|behavior_if_log_dir_exists)=/.test(a));
  const child = spawn(
    process.execPath,
    [join(PROJECT_ROOT, "bin", "cookbook.js"), "run", recipe, ...kept, `log_path=${logPath}`, "behavior_if_log_dir_exists=delete"],
    {
      stdio: ["ignore", "ignore", "pipe"],
      // A probe is not a run anyone tracks: no W&B run for it even when wandb_project is set, and its
      // checkpoints go to a scratch store.
      env: { ...process.env, TINKER_BASE_URL: "", WANDB_API_KEY: "", COOKBOOK_HOME: scratchHome(dir, process.env) },
    },
  );
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const t0 = performance.now();
  let firstRowSeconds = Number.NaN;
  const rowSeconds: number[] = [];
  // Fast steps are timed over more of them, so the 50 ms polling does not dominate the pace.
  const minPaceSeconds = 3;
  try {
    return await new Promise<ProbeMeasurement>((resolve, reject) => {
      const timer = setInterval(() => {
        const rows = readRows(logPath);
        const now = (performance.now() - t0) / 1000;
        if (rows.length > 0 && Number.isNaN(firstRowSeconds)) firstRowSeconds = now;
        while (rowSeconds.length < rows.length) rowSeconds.push(now);
        const paced = rows.length >= want && (now - (rowSeconds[1] ?? now) >= minPaceSeconds || rows.length >= 10 * want);
        if (paced) {
          clearInterval(timer);
          resolve({ firstRowSeconds, rows, rowSeconds });
        } else if (performance.now() - t0 > (options.timeoutMs ?? 600_000)) {
          clearInterval(timer);
          reject(new Error(`the probe run of ${recipe} logged ${rows.length} of ${want} steps in ${((options.timeoutMs ?? 600_000) / 1000).toFixed(0)} s`));
        }
      }, 50);
      child.once("exit", (code) => {
        const rows = readRows(logPath);
        clearInterval(timer);
        // A run shorter than the probe finished on its own: its rows are the whole run.
        const now = (performance.now() - t0) / 1000;
        while (rowSeconds.length < rows.length) rowSeconds.push(now);
        if (code === 0 && rows.length > 0)
          resolve({ firstRowSeconds: Number.isNaN(firstRowSeconds) ? now : firstRowSeconds, rows, rowSeconds, finishedSeconds: now });
        else reject(new Error(`the probe run of ${recipe} exited with ${code} after ${rows.length} steps: ${stderr.trim().split("\n").slice(-3).join(" | ")}`));
      });
    });
  } finally {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}
