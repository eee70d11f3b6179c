// Run-level actions shared by screens: resume a run with its recorded recipe and arguments, or
// start a new run from a checkpoint. The arguments come from run.json (src/runs).
import { basename, dirname, join } from "node:path";
import { type CheckpointRecord, type RunManifest, freshName, readManifest } from "../../runs/index.ts";
import type { LaunchResult, ProcessManager } from "./processManager.ts";

export type { LaunchResult } from "./processManager.ts";

const MANAGED_KEYS = ["log_path", "behavior_if_log_dir_exists", "load_checkpoint_path"];

/** The run's recorded `key=value` arguments without the ones a relaunch sets itself. */
export function relaunchArgs(manifest: Pick<RunManifest, "argv">): string[] {
  return manifest.argv.filter((a) => !MANAGED_KEYS.some((k) => a.startsWith(`${k}=`)) && a.includes("="));
}

function manifestOf(runDir: string): RunManifest {
  const m = readManifest(runDir);
  if (!m) throw new Error(`${runDir} has no run.json: it was not started by cookbook, so its recipe and arguments are unknown`);
  return m;
}

/** Resumes in the same directory (the recipe continues from its last resumable checkpoint). */
export async function resumeRun(pm: ProcessManager, runDir: string): Promise<LaunchResult> {
  const m = manifestOf(runDir);
  return pm.launch({ recipe: m.recipe, args: relaunchArgs(m), logPath: runDir, ifExists: "resume" });
}

/** A new run next to this one that starts from the checkpoint's weights (load_checkpoint_path). */
export async function runFromCheckpoint(pm: ProcessManager, runDir: string, ckpt: CheckpointRecord): Promise<LaunchResult> {
  const m = manifestOf(runDir);
  const path = typeof ckpt.state_path === "string" ? ckpt.state_path : undefined;
  if (!path) throw new Error(`checkpoint ${ckpt.name} has no state_path to start from`);
  const target = freshName(join(dirname(runDir), `${basename(runDir)}-from-${ckpt.name}`));
  return pm.launch({ recipe: m.recipe, args: [...relaunchArgs(m), `load_checkpoint_path=${path}`], logPath: target, ifExists: "new" });
}
