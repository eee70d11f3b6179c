// Writes that survive crashes, full disks and power cuts: whole-file replacement through a temp
// file that is fsynced and renamed (and removed again when anything fails), and line appends that
// first repair a torn final line, so a record is never glued onto the remains of a crashed write.
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, openSync, readSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomBytes } from "node:crypto";
import { describeWriteError } from "./diskErrors.ts";

/** fsyncs a directory so a rename or a new file in it survives a power cut (no-op where unsupported). */
export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Some platforms and filesystems cannot open or fsync a directory; the data files are synced.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function writeAll(fd: number, bytes: Uint8Array): void {
  let done = 0;
  while (done < bytes.byteLength) done += writeSync(fd, bytes, done, bytes.byteLength - done);
}

export interface AtomicWriteOptions {
  /** What is being written, for error messages ("checkpoint weights/000010 (step 10)"). */
  context?: string;
  /** fsync the file and its directory (default true). */
  fsync?: boolean;
}

/**
 * Replaces `path` with `data` all at once: readers see the old content or the new, never part of
 * it. On failure (a full disk) the temp file is removed, `path` keeps its old content, and a disk
 * full error names the file and the context.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  const sync = options.fsync ?? true;
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    const fd = openSync(tmp, "w");
    try {
      writeAll(fd, typeof data === "string" ? Buffer.from(data) : data);
      if (sync) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw describeWriteError(err, path, options.context);
  }
  if (sync) fsyncDir(dirname(path));
}

/** Replaces `path` with `value` as indented JSON, all at once (writeFileAtomic). */
export function writeJsonAtomic(path: string, value: unknown, options: AtomicWriteOptions = {}): void {
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, options);
}

/**
 * How a final line without its newline is repaired before the next append: "jsonl" cuts it off
 * unless it is a whole JSON object (a crash mid-write leaves a fragment no reader can use);
 * "text" terminates it (half a log message is still worth reading).
 */
export type TornTailRepair = "jsonl" | "text";

export interface AppendOptions {
  context?: string;
  /** fsync after the append (and the directory when the file is new). Default false. */
  fsync?: boolean;
  repair?: TornTailRepair;
}

export interface AppendResult {
  /** What was done to a torn final line found before appending. */
  repaired?: "cut" | "terminated";
  /** The bytes cut off, when repaired is "cut". */
  cutBytes?: number;
  /** Byte offsets of the line written: where it starts and where the file ended after it. */
  start?: number;
  end?: number;
}

function readRange(fd: number, start: number, end: number): Buffer {
  const buf = Buffer.alloc(end - start);
  let done = 0;
  while (done < buf.length) {
    const n = readSync(fd, buf, done, buf.length - done, start + done);
    if (n === 0) break;
    done += n;
  }
  return buf.subarray(0, done);
}

/** Offset just past the last newline before `size` (0 when there is none). */
function startOfLastLine(fd: number, size: number): number {
  const CHUNK = 64 * 1024;
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - CHUNK);
    const at = readRange(fd, start, end).lastIndexOf(0x0a);
    if (at >= 0) return start + at + 1;
    end = start;
  }
  return 0;
}

function isJsonObject(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === "object" && v !== null;
  } catch {
    return false;
  }
}

/**
 * Appends `line` (a newline is added when missing) with one write on an O_APPEND descriptor, after
 * repairing a torn final line. If the write fails part-way (a full disk), the file is cut back to
 * where it was, so the failure leaves no torn line either.
 */
export function appendLine(path: string, line: string, options: AppendOptions = {}): AppendResult {
  const repair = options.repair ?? "jsonl";
  const isNew = !existsSync(path);
  const result: AppendResult = {};
  let fd: number | undefined;
  try {
    fd = openSync(path, "a+");
    const size = fstatSync(fd).size;
    let end = size;
    let prefix = "";
    if (size > 0 && readRange(fd, size - 1, size)[0] !== 0x0a) {
      const lineStart = startOfLastLine(fd, size);
      const tail = readRange(fd, lineStart, size).toString("utf8");
      if (repair === "text" || isJsonObject(tail)) {
        prefix = "\n";
        result.repaired = "terminated";
      } else {
        ftruncateSync(fd, lineStart);
        end = lineStart;
        result.repaired = "cut";
        result.cutBytes = size - lineStart;
      }
    }
    const text = `${prefix}${line}${line.endsWith("\n") ? "" : "\n"}`;
    try {
      const bytes = Buffer.from(text);
      writeAll(fd, bytes);
      result.start = end + Buffer.byteLength(prefix);
      result.end = end + bytes.length;
    } catch (err) {
      try {
        ftruncateSync(fd, end);
      } catch {
        // The original error matters more; the next append repairs what is left.
      }
      throw err;
    }
    if (options.fsync) fsyncSync(fd);
  } catch (err) {
    throw describeWriteError(err, path, options.context);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (isNew && options.fsync) fsyncDir(dirname(path));
  return result;
}
