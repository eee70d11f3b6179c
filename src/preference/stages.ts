// Multi-stage pipelines (rlhf, shorter): each stage is an ordinary run in its own folder under one
// parent. A stage whose checkpoints.jsonl holds a final record is done and is never rerun; an
// unfinished one is resumed by its loop from its last checkpoint.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { readCheckpoints, type CheckpointRecord } from "../runs/checkpoints.ts";

export function finalCheckpoint(stageDir: string): CheckpointRecord | undefined {
  if (!existsSync(join(stageDir, "checkpoints.jsonl"))) return undefined;
  return readCheckpoints(stageDir).findLast((r) => r.final === true);
}

export interface StageOutcome {
  record: CheckpointRecord;
  /** False when the stage was already finished before this call. */
  ran: boolean;
}

/** Runs `body` unless the stage already finished; returns the stage's final checkpoint record. */
export async function runStage(
  name: string,
  stageDir: string,
  log: (line: string) => void,
  body: () => Promise<unknown>,
  options: { skipFinished?: boolean } = {},
): Promise<StageOutcome> {
  const done = options.skipFinished === false ? undefined : finalCheckpoint(stageDir);
  if (done !== undefined) {
    log(`stage ${name}: already finished in ${stageDir} (final checkpoint ${done.name}); not rerun`);
    return { record: done, ran: false };
  }
  log(`stage ${name}: ${existsSync(stageDir) ? "resuming" : "starting"} in ${stageDir}`);
  await body();
  const record = finalCheckpoint(stageDir);
  if (record === undefined)
    throw new StageStoppedError(`stage ${name} stopped before finishing (no final checkpoint in ${stageDir}); run the same command again to resume it`);
  return { record, ran: true };
}

export class StageStoppedError extends Error {
  override name = "StageStoppedError";
}
