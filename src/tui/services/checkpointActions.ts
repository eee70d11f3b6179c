// Checkpoint side effects the checkpoints screen asks for: delete one (Tinker RestClient, then its
// record in checkpoints.jsonl) and start a new background run from one.
import { listConfigFields, loadRecipe, type RecipeEntry } from "../../config/index.ts";
import { assertNoLiveWriter, type CheckpointRecord, readManifest, removeCheckpointRecord } from "../../runs/index.ts";
import type { ProcessManager } from "./processManager.ts";
import { type LaunchResult, runFromCheckpoint } from "./runActions.ts";

/** The path a person copies or resumes from: the full state, else the sampler weights. */
export function checkpointPath(c: CheckpointRecord): string | undefined {
  return typeof c.state_path === "string" ? c.state_path : typeof c.sampler_path === "string" ? c.sampler_path : undefined;
}

/** Deletes the checkpoint's stored weights through the run's engine, then its record. */
export async function deleteCheckpoint(runDir: string, ckpt: CheckpointRecord, config: Record<string, unknown> | undefined): Promise<void> {
  // A live run appends to checkpoints.jsonl and may resume from this checkpoint: refuse before any
  // weights are gone rather than leave a record pointing at nothing.
  assertNoLiveWriter(runDir);
  const paths = [ckpt.state_path, ckpt.sampler_path].filter((p): p is string => typeof p === "string");
  // Loaded on demand: the engine is heavy and most sessions never delete.
  const { createServiceClient } = await import("../../service.ts");
  const service = await createServiceClient(typeof config?.base_url === "string" ? { baseUrl: config.base_url } : {});
  try {
    const rest = service.createRestClient();
    for (const p of paths) await rest.deleteCheckpointFromTinkerPath(p);
  } finally {
    await service.close().catch(() => {});
  }
  removeCheckpointRecord(runDir, ckpt.name, typeof ckpt.state_path === "string" ? ckpt.state_path : undefined);
}

/** A new run from the checkpoint, refused when the run's recipe cannot load weights. */
export async function startFromCheckpoint(pm: ProcessManager, recipes: readonly RecipeEntry[], runDir: string, ckpt: CheckpointRecord): Promise<LaunchResult> {
  const m = readManifest(runDir);
  const recipe = m ? await loadRecipe(recipes, m.recipe) : undefined;
  if (recipe && !listConfigFields(recipe.configSchema).some((f) => f.path === "load_checkpoint_path")) {
    throw new Error(`recipe ${recipe.name} has no load_checkpoint_path; use r on the dashboard to resume the run itself`);
  }
  return runFromCheckpoint(pm, runDir, ckpt);
}
