// Where an epoch-based loop is (supervised, DPO, ...): a global step is epoch × batches per
// epoch + batch, and a checkpoint record stores the next position to train.
import type { CheckpointRecord } from "../runs/checkpoints.ts";

/** Where the loop is: global step = epoch × batches per epoch + batch. */
export interface LoopPosition {
  step: number;
  epoch: number;
  batch: number;
}

/** The next position to train; a batch index at the end of an epoch becomes the next epoch's 0. */
export function positionOf(step: number, nBatches: number): LoopPosition {
  return { step, epoch: Math.floor(step / nBatches), batch: step % nBatches };
}

/** The step a checkpoint record resumes at; throws when its loop state does not fit the dataset. */
export function resumeStep(record: CheckpointRecord, nBatches: number, where: string): number {
  const epoch = typeof record.epoch === "number" ? record.epoch : 0;
  const batch = typeof record.batch === "number" ? record.batch : 0;
  if (!Number.isInteger(epoch) || !Number.isInteger(batch) || epoch < 0 || batch < 0 || batch > nBatches) {
    throw new Error(
      `${where}: checkpoint ${JSON.stringify(record.name)} has loop state epoch=${String(record.epoch)} batch=${String(record.batch)}, which does not fit a dataset of ${nBatches} batches per epoch; was the dataset or batch_size changed?`,
    );
  }
  return epoch * nBatches + batch;
}
