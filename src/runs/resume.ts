// Where a resumed supervised run starts, and keeping metrics.jsonl consistent with it: rows for
// steps at or after the resume point were written by the interrupted run after its last
// checkpoint and are about to be written again, so they are dropped first.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../files/durable.ts";
import { parseJsonlText } from "../log/jsonl.ts";
import type { CheckpointRecord } from "./checkpoints.ts";

export interface LoopPosition {
  /** Global step: epoch × batches per epoch + batch. */
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

/**
 * Rewrites metrics.jsonl without rows whose step is ≥ `fromStep` (atomically: temp file +
 * rename). Returns how many rows were dropped. A torn final line is dropped too.
 */
export function truncateMetricsFrom(logDir: string, fromStep: number): number {
  const path = join(logDir, "metrics.jsonl");
  if (!existsSync(path)) return 0;
  const { records, tornTail } = parseJsonlText<{ step?: unknown }>(readFileSync(path, "utf8"), path);
  const kept = records.filter((r) => !(typeof r.step === "number" && r.step >= fromStep));
  const dropped = records.length - kept.length;
  if (dropped === 0 && !tornTail) return 0;
  writeFileAtomic(path, kept.map((r) => `${JSON.stringify(r)}\n`).join(""), { context: `dropping metrics from step ${fromStep} to resume` });
  return dropped;
}
