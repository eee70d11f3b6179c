// A full disk or an exhausted quota, reported with what a person needs to act on it: the file that
// could not be written, what was being written (the step, the checkpoint), and how much space is
// left on that filesystem. Node's own message ("ENOSPC: no space left on device, write") has none.
import { existsSync, statfsSync } from "node:fs";
import { dirname } from "node:path";

const DISK_FULL_CODES = new Set(["ENOSPC", "EDQUOT"]);

export function isDiskFullError(err: unknown): boolean {
  return err instanceof DiskFullError || (err instanceof Error && DISK_FULL_CODES.has(String((err as NodeJS.ErrnoException).code)));
}

export interface FreeSpace {
  freeBytes: number;
  totalBytes: number;
}

/** Space left for this user on the filesystem holding `path` (or its nearest existing parent). */
export function freeSpaceAt(path: string): FreeSpace | undefined {
  let probe = path;
  while (!existsSync(probe)) {
    const up = dirname(probe);
    if (up === probe) return undefined;
    probe = up;
  }
  try {
    const s = statfsSync(probe);
    return { freeBytes: s.bavail * s.bsize, totalBytes: s.blocks * s.bsize };
  } catch {
    return undefined;
  }
}

export function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(1)} ${units[u]}`;
}

export class DiskFullError extends Error {
  override name = "DiskFullError";
  readonly code: string;
  readonly freeSpace: FreeSpace | undefined;

  constructor(
    readonly path: string,
    code: string,
    /** What was being written, e.g. "metrics for step 12" or "checkpoint weights/000010 (step 10)". */
    readonly context: string | undefined,
  ) {
    const space = freeSpaceAt(path);
    const what = code === "EDQUOT" ? "disk quota exceeded" : "no space left on device";
    const where = space ? `; ${formatBytes(space.freeBytes)} free of ${formatBytes(space.totalBytes)} on that filesystem` : "";
    super(`${what} writing ${path}${context ? ` (${context})` : ""}${where}. Files written before this are intact: free some space, then resume`);
    this.code = code;
    this.freeSpace = space;
  }
}

/**
 * A disk-full error turned into a DiskFullError naming `path` and `context`; anything else (and
 * an error that already is one) comes back unchanged. Use as `throw describeWriteError(err, …)`.
 */
export function describeWriteError(err: unknown, path: string, context?: string): unknown {
  if (err instanceof DiskFullError) return err;
  if (isDiskFullError(err)) return new DiskFullError(path, String((err as NodeJS.ErrnoException).code), context);
  return err;
}
