// Runs a recipe for a few steps in a scratch directory, as its own `cookbook run` process, and
// returns its metrics rows and when the first one appeared; the process is then killed (no
// checkpoint is saved). A remote base_url is replaced by the embedded engine: the probe must not
// spend the user's service credits.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
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

export async function probeRecipe(recipe: string, args: readonly string[], options: ProbeOptions = {}): Promise<ProbeMeasurement> {
  const want = options.steps ?? 4;
  const dir = mkdtempSync(join(tmpdir(), "cookbook-estimate-"));
  const logPath = join(dir, "run");
  const kept = args.filter((a) => !/^(log_path|base_url|behavior_if_log_dir_exists)=/.test(a));
  const child = spawn(process.execPath, [join(PROJECT_ROOT, "bin", "cookbook.js"), "run", recipe, ...kept, `log_path=${logPath}`, "behavior_if_log_dir_exists=delete"], {
    stdio: ["ignore", "ignore", "pipe"],
    // A probe is not a run anyone tracks: no W&B run for it even when wandb_project is set.
    env: { ...process.env, TINKER_BASE_URL: "", WANDB_API_KEY: "" },
  });
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
        if (code === 0 && rows.length > 0) resolve({ firstRowSeconds: Number.isNaN(firstRowSeconds) ? now : firstRowSeconds, rows, rowSeconds, finishedSeconds: now });
        else reject(new Error(`the probe run of ${recipe} exited with ${code} after ${rows.length} steps: ${stderr.trim().split("\n").slice(-3).join(" | ")}`));
      });
    });
  } finally {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}
