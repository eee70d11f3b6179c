// Removing a record from checkpoints.jsonl after its weights were deleted: the file is rewritten
// through a rename while this process holds the run lock, so a live run (which appends records)
// cannot be writing it meanwhile; a live writer makes the removal fail with its pid.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../files/durable.ts";
import { CHECKPOINTS_FILE } from "./checkpoints.ts";
import { acquireRunLock } from "./runLock.ts";

/** Drops the records named `name` (and, when given, with that state_path); returns how many. */
export function removeCheckpointRecord(logDir: string, name: string, statePath?: string): number {
  const lock = acquireRunLock(logDir);
  try {
    return removeUnderLock(logDir, name, statePath);
  } finally {
    lock.release();
  }
}

function removeUnderLock(logDir: string, name: string, statePath: string | undefined): number {
  const path = join(logDir, CHECKPOINTS_FILE);
  const lines = readFileSync(path, "utf8").split("\n");
  let removed = 0;
  const kept = lines.filter((line) => {
    if (line.trim() === "") return false;
    try {
      const rec = JSON.parse(line) as Record<string, unknown>;
      if (rec.name === name && (statePath === undefined || rec.state_path === statePath)) {
        removed++;
        return false;
      }
    } catch {
      // keep lines we cannot read; they are not ours to drop
    }
    return true;
  });
  if (removed === 0) return 0;
  writeFileAtomic(path, kept.map((l) => `${l}\n`).join(""), { context: `removing the record of checkpoint ${name}` });
  return removed;
}
