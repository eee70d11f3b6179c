// One writer per run directory. Every writer (fresh, resumed, whatever the log-dir policy) holds
// `run.lock`, a small JSON file naming its pid, host and the process's start time. A second writer
// is refused with the live pid; a lock whose process is gone (a crash, a SIGKILL) is taken over.
// The start time tells a live holder from an unrelated process that was given the same pid later.
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { UsageError } from "../config/errors.ts";
import { describeWriteError } from "../files/diskErrors.ts";
import { fsyncDir } from "../files/durable.ts";
import { HEARTBEAT_STALE_MS, isPidAlive } from "./liveness.ts";
import { readManifest } from "./manifest.ts";

export const LOCK_FILE = "run.lock";

export interface RunLockOwner {
  pid: number;
  host: string;
  /** The process's start time in clock ticks since boot (Linux /proc/<pid>/stat), when known. */
  start_ticks: number | null;
  /** Identifies the boot the start time counts from (Linux), when known. */
  boot_id: string | null;
  acquired_at: string;
}

export class RunLockedError extends UsageError {
  override name = "RunLockedError";
  constructor(
    readonly logDir: string,
    readonly owner: RunLockOwner,
  ) {
    super(
      `run directory ${logDir} is in use by a live writer: pid ${owner.pid} on ${owner.host} (since ${owner.acquired_at}). ` +
        `Two writers would interleave metrics.jsonl and checkpoints.jsonl. Wait for it to finish, stop it first ` +
        `(\`kill -INT ${owner.pid}\` saves and stops; so does the TUI's stop key), or pick another log_path`,
    );
  }
}

/** Start time of `pid` in clock ticks since boot, or null where /proc is not available. */
export function processStartTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may hold spaces; fields after it are plain.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

function bootId(): string | null {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return null;
  }
}

export function currentOwner(): RunLockOwner {
  return { pid: process.pid, host: hostname(), start_ticks: processStartTicks(process.pid), boot_id: bootId(), acquired_at: new Date().toISOString() };
}

function parseOwner(text: string): RunLockOwner | undefined {
  try {
    const v = JSON.parse(text) as Partial<RunLockOwner>;
    if (typeof v.pid !== "number" || typeof v.host !== "string") return undefined;
    return {
      pid: v.pid,
      host: v.host,
      start_ticks: typeof v.start_ticks === "number" ? v.start_ticks : null,
      boot_id: typeof v.boot_id === "string" ? v.boot_id : null,
      acquired_at: typeof v.acquired_at === "string" ? v.acquired_at : "an unknown time",
    };
  } catch {
    return undefined;
  }
}

/**
 * Whether the process that wrote `owner` still runs. On this host: its pid exists and, when both
 * start times are known, it is the same process (same boot, same start time). On another host
 * (a shared filesystem) the pid says nothing here, so a fresh heartbeat in run.json decides.
 */
export function isOwnerAlive(owner: RunLockOwner, logDir: string): boolean {
  if (owner.host !== hostname()) {
    try {
      const m = readManifest(logDir);
      return m !== undefined && m.status === "running" && Date.now() - Date.parse(m.heartbeat_at) < HEARTBEAT_STALE_MS;
    } catch {
      return false;
    }
  }
  if (!isPidAlive(owner.pid)) return false;
  const here = bootId();
  if (owner.boot_id !== null && here !== null && owner.boot_id !== here) return false;
  if (owner.start_ticks === null) return true;
  const ticks = processStartTicks(owner.pid);
  return ticks === null || ticks === owner.start_ticks;
}

/** The live writer holding `logDir`'s lock, or undefined when there is none (no lock, or a stale one). */
export function liveLockOwner(logDir: string): RunLockOwner | undefined {
  const dir = resolve(logDir);
  let text: string;
  try {
    text = readFileSync(join(dir, LOCK_FILE), "utf8");
  } catch {
    return undefined;
  }
  const owner = parseOwner(text);
  return owner && isOwnerAlive(owner, dir) ? owner : undefined;
}

/** Temp files of atomic writes (`.<file>.<pid>.<hex>.tmp`) and of lock takeovers, with their pid. */
const LEFTOVER_RE = /^\.(?:.+\.(\d+)\.[0-9a-f]{8}\.tmp|run\.lock\.stale\.(\d+)\.[0-9a-f]{8})$/;

/**
 * Removes what writers killed mid-write left in `logDir` (temp files of run.json, config.json,
 * metrics rewrites, lock takeovers) whose process is gone. Called by the lock holder, so no other
 * writer of this run can be using them. Returns the paths removed.
 */
export function sweepRunDir(logDir: string): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(logDir)) {
    const m = LEFTOVER_RE.exec(name);
    const pid = m ? Number(m[1] ?? m[2]) : undefined;
    if (pid === undefined || pid === process.pid || isPidAlive(pid)) continue;
    rmSync(join(logDir, name), { force: true });
    removed.push(join(logDir, name));
  }
  return removed;
}

/** Throws RunLockedError when a live writer holds `logDir`. */
export function assertNoLiveWriter(logDir: string): void {
  const owner = liveLockOwner(logDir);
  if (owner) throw new RunLockedError(resolve(logDir), owner);
}

export interface RunLock {
  readonly path: string;
  readonly owner: RunLockOwner;
  /** Removes the lock if it is still ours (idempotent). */
  release(): void;
}

function sameOwner(a: RunLockOwner | undefined, b: RunLockOwner): boolean {
  return a !== undefined && a.pid === b.pid && a.host === b.host && a.start_ticks === b.start_ticks && a.acquired_at === b.acquired_at;
}

function readOwnerAt(path: string): RunLockOwner | undefined {
  try {
    return parseOwner(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV"]);

/**
 * Puts the lock file at `path`, failing with EEXIST when one is there: a hard link of the complete
 * temp file, or on filesystems without hard links (FAT, some network mounts) an exclusive create.
 */
function placeLock(tmp: string, path: string, text: string): void {
  try {
    linkSync(tmp, path);
  } catch (err) {
    if (!NO_HARD_LINKS.has(String((err as NodeJS.ErrnoException).code))) throw err;
    const fd = openSync(path, "wx");
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}

function lockAgeMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Takes `logDir`'s lock (the directory must exist). The lock file is written whole under a temp
 * name and hard-linked into place, which fails if a lock exists, so no reader sees half of it. A
 * stale lock is moved aside and checked to be the one judged stale before it is removed, so two
 * processes taking over the same stale lock cannot both win. Released on exit.
 */
export function acquireRunLock(logDir: string): RunLock {
  const dir = resolve(logDir);
  const path = join(dir, LOCK_FILE);
  const owner = currentOwner();
  const text = `${JSON.stringify(owner)}\n`;
  const tmp = join(dir, `.${LOCK_FILE}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    const fd = openSync(tmp, "wx");
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    rmSync(tmp, { force: true });
    throw describeWriteError(err, path, "taking the run lock");
  }
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        placeLock(tmp, path, text);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST" || attempt >= 20) throw describeWriteError(err, path, "taking the run lock");
      }
      const holderText = (() => {
        try {
          return readFileSync(path, "utf8");
        } catch {
          return undefined;
        }
      })();
      if (holderText === undefined) continue;
      const holder = parseOwner(holderText);
      // Half-written: only possible where hard links are unsupported (see placeLock); give the
      // writer a moment before judging the lock stale.
      if (!holder && lockAgeMs(path) < 2_000) {
        sleepSync(200);
        continue;
      }
      if (holder && isOwnerAlive(holder, dir)) throw new RunLockedError(dir, holder);
      const aside = join(dir, `.${LOCK_FILE}.stale.${process.pid}.${randomBytes(4).toString("hex")}`);
      try {
        renameSync(path, aside);
      } catch {
        continue;
      }
      const moved = readFileSync(aside, "utf8");
      if (moved !== holderText) {
        // Someone replaced the stale lock between our read and the move: put theirs back.
        try {
          linkSync(aside, path);
        } catch {
          // A third process took the name; its lock stands.
        }
        rmSync(aside, { force: true });
        const theirs = parseOwner(moved);
        if (theirs && isOwnerAlive(theirs, dir)) throw new RunLockedError(dir, theirs);
        continue;
      }
      rmSync(aside, { force: true });
    }
  } finally {
    rmSync(tmp, { force: true });
  }
  fsyncDir(dir);
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    process.off("exit", release);
    if (sameOwner(readOwnerAt(path), owner)) rmSync(path, { force: true });
  };
  process.on("exit", release);
  return { path, owner, release };
}
