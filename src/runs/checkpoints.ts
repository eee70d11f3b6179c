// checkpoints.jsonl: one record per save, same shape as the Python cookbook's (docs/cookbook-parity.md#checkpoint-records).
import { join } from "node:path";
import { appendJsonl, readJsonl } from "../log/jsonl.ts";

export interface CheckpointRecord {
  /** `NNNNNN` (the step, 6 digits) or `final`. */
  name: string;
  batch?: number;
  epoch?: number;
  final?: boolean;
  /** Weights + optimizer state (resumable), e.g. `tinker://…/weights/<name>`. */
  state_path?: string;
  /** Sampler weights, e.g. `tinker://…/sampler_weights/<name>`. */
  sampler_path?: string;
  /** Extra loop state (`elapsed_tokens`, `rolling`, ...). */
  [key: string]: unknown;
}

export const CHECKPOINTS_FILE = "checkpoints.jsonl";

/** The cookbook's checkpoint name for a step: zero-padded to 6 digits. */
export function checkpointName(step: number): string {
  return String(step).padStart(6, "0");
}

/** Appends the record durably (fsynced): a listed checkpoint survives a power cut. */
export function appendCheckpoint(logDir: string, record: CheckpointRecord): void {
  const step = /^\d+$/.test(record.name) ? ` (step ${Number(record.name)})` : "";
  appendJsonl(join(logDir, CHECKPOINTS_FILE), record, { fsync: true, context: `record of checkpoint ${record.name}${step}` });
}

export function readCheckpoints(logDir: string): CheckpointRecord[] {
  return readJsonl<CheckpointRecord>(join(logDir, CHECKPOINTS_FILE));
}

/** The last record that has `requiredKey` (default `state_path`: the last resumable one). */
export function getLastCheckpoint(logDir: string, requiredKey = "state_path"): CheckpointRecord | undefined {
  const records = readCheckpoints(logDir);
  for (let i = records.length - 1; i >= 0; i--) {
    if (records[i][requiredKey] !== undefined && records[i][requiredKey] !== null) return records[i];
  }
  return undefined;
}
