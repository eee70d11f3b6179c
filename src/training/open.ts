// Opening the training client a run continues with: resume from the newest checkpoint whose state
// still loads (optimizer included), else the load_checkpoint_path weights with a fresh optimizer,
// else a fresh LoRA. metrics.jsonl is cut back to the resume step only once the state has loaded,
// so a failed attempt loses nothing.
import { readCheckpoints, type CheckpointRecord } from "../runs/checkpoints.ts";
import { truncateMetricsFrom } from "../runs/resume.ts";
import type { TrainingClient } from "../tinker/clients.ts";
import { explainCreateModelFailure } from "./capabilities.ts";
import type { TrainingRunConfig } from "./config.ts";
import { trainingMetadata, type TrainingContext } from "./run.ts";

export interface OpenedTrainingClient {
  trainingClient: TrainingClient;
  /** The checkpoint record resumed from (the loop's state lives in it), or undefined for a fresh start. */
  resume: CheckpointRecord | undefined;
  /** The first step to train. */
  startStep: number;
}

export interface OpenTrainingClientOptions {
  /** The step a record resumes at (default: its `batch`); throws when the record does not fit the data. */
  stepOf?: (record: CheckpointRecord) => number;
  /** Recorded as the renderer in the training client's metadata. */
  rendererName?: string | null;
}

function defaultStepOf(record: CheckpointRecord): number {
  return typeof record.batch === "number" ? record.batch : 0;
}

/** Resumable records, newest first. */
export function resumeCandidates(logDir: string): CheckpointRecord[] {
  return readCheckpoints(logDir)
    .filter((r) => typeof r.state_path === "string" && r.state_path.length > 0)
    .reverse();
}

export async function openTrainingClient(
  run: TrainingContext,
  config: TrainingRunConfig,
  options: OpenTrainingClientOptions = {},
): Promise<OpenedTrainingClient> {
  const stepOf = options.stepOf ?? defaultStepOf;
  const userMetadata = trainingMetadata(run, options.rendererName ?? config.renderer_name);
  const failures: string[] = [];
  for (const record of resumeCandidates(run.logDir)) {
    // A record that does not fit the data is a configuration mistake, not a missing file: say so.
    const startStep = stepOf(record);
    const statePath = record.state_path as string;
    let trainingClient: TrainingClient;
    try {
      trainingClient = await run.serviceClient.createTrainingClientFromStateWithOptimizer(statePath, { userMetadata });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      failures.push(`${record.name} (${statePath}): ${message}`);
      run.log.warn(`checkpoint ${record.name} could not be loaded (${message}); trying the one before it`);
      continue;
    }
    if (failures.length > 0) run.log.warn(`resuming from older checkpoint ${record.name}: ${failures.length} newer one(s) could not be loaded`);
    run.log.info(`resumed from ${statePath} at step ${startStep}`);
    dropRowsFrom(run, startStep);
    return { trainingClient, resume: record, startStep };
  }
  if (failures.length > 0) {
    throw new Error(
      `${run.logDir}/checkpoints.jsonl: no checkpoint could be loaded to resume from:\n  ${failures.join("\n  ")}\n` +
        `delete the run (behavior_if_log_dir_exists=delete) or restore the checkpoint folders`,
    );
  }
  let trainingClient: TrainingClient;
  if (config.load_checkpoint_path !== null) {
    trainingClient = await run.serviceClient.createTrainingClientFromState(config.load_checkpoint_path, { userMetadata });
    run.log.info(`loaded weights from ${config.load_checkpoint_path} (fresh optimizer)`);
  } else {
    try {
      trainingClient = await run.serviceClient.createLoraTrainingClient(config.model_name, { rank: config.lora_rank, seed: config.seed, userMetadata });
    } catch (err) {
      throw explainCreateModelFailure(err, run.serviceClient, {
        model: config.model_name,
        field: "model_name",
        loraRank: config.lora_rank,
        recipe: run.recipeName,
      });
    }
  }
  dropRowsFrom(run, 0);
  return { trainingClient, resume: undefined, startStep: 0 };
}

/** Rows at or after the start step were written after the last checkpoint and will be written again. */
function dropRowsFrom(run: TrainingContext, step: number): void {
  const dropped = truncateMetricsFrom(run.logDir, step);
  if (dropped > 0) run.log.info(`dropped ${dropped} metrics rows from step ${step} on (they will be logged again)`);
}
