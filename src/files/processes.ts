// Whether a process still runs: the one answer for run locks, run status and the checkpoint
// store's sweep of leftovers from dead writers.
import { readFileSync } from "node:fs";

/** True when `pid` names a running process (ours or another user's), not a zombie. */
export function isPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return !isZombie(pid);
}

/**
 * A killed process whose parent has not reaped it yet (a zombie, state Z) still answers kill(pid, 0),
 * but it runs nothing and holds nothing: a run SIGKILLed with its parent must not keep its
 * directory locked until someone reaps it. False where /proc is not available.
 */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state === "Z" || state === "X";
  } catch {
    return false;
  }
}
