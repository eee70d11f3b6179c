// Following files that are only ever appended to (metrics.jsonl, logs.log, transcripts): one
// reader remembers its byte offset and returns only complete new lines, so polling a 100k-row
// file costs only what was appended. A file that shrank was rewritten (a resumed run truncates
// metrics.jsonl, a run dir is deleted and recreated): reading starts over and `restarts` counts it.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { JsonlError } from "./jsonl.ts";

const NEWLINE = 0x0a;

/** Up to `maxBytes` from the end of a file, starting at a line boundary, and the file's size. */
export function readTailText(path: string, maxBytes: number): { text: string; size: number } {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return { text: "", size: 0 };
  }
  try {
    const size = fstatSync(fd).size;
    const len = Math.min(size, maxBytes);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    let text = buf.toString("utf8");
    if (len < size) text = text.slice(text.indexOf("\n") + 1);
    return { text, size };
  } finally {
    closeSync(fd);
  }
}

export class AppendedLinesReader {
  private offset = 0;
  /** Lines consumed so far (the next line's number is this + 1). */
  lineNumber = 0;
  /** How many times the file shrank and reading started over. */
  restarts = 0;

  constructor(readonly path: string) {}

  /** Bytes consumed so far. */
  get position(): number {
    return this.offset;
  }

  /** Starts reading at a byte offset (the start of a line), e.g. after reading a tail. */
  seek(offset: number): void {
    this.offset = offset;
  }

  /** Complete lines appended since the last call (without their newlines); a torn last line waits. */
  readLines(): string[] {
    let fd: number;
    try {
      fd = openSync(this.path, "r");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw err;
    }
    try {
      const size = fstatSync(fd).size;
      if (size < this.offset) {
        this.offset = 0;
        this.lineNumber = 0;
        this.restarts++;
      }
      if (size === this.offset) return [];
      const buffer = Buffer.allocUnsafe(size - this.offset);
      let filled = 0;
      while (filled < buffer.length) {
        const n = readSync(fd, buffer, filled, buffer.length - filled, this.offset + filled);
        if (n === 0) break;
        filled += n;
      }
      const lastNewline = buffer.lastIndexOf(NEWLINE, filled - 1);
      if (lastNewline < 0) return [];
      this.offset += lastNewline + 1;
      return buffer.toString("utf8", 0, lastNewline).split("\n");
    } finally {
      closeSync(fd);
    }
  }
}

/**
 * Records appended to a JSONL file. Each batch of new lines is parsed with one JSON.parse of an
 * array (much faster on a long history), falling back to line by line when it holds a malformed
 * line; malformed lines are skipped and kept in `errors` (a live view must not die on one).
 */
export class JsonlTailReader<T = Record<string, unknown>> {
  private readonly lines: AppendedLinesReader;
  readonly errors: JsonlError[] = [];

  constructor(readonly path: string) {
    this.lines = new AppendedLinesReader(path);
  }

  get position(): number {
    return this.lines.position;
  }

  get restarts(): number {
    return this.lines.restarts;
  }

  /** Starts reading at a byte offset (the start of a line). */
  seek(offset: number): void {
    this.lines.seek(offset);
  }

  read(): T[] {
    const firstLine = this.lines.lineNumber + 1;
    const lines = this.lines.readLines();
    this.lines.lineNumber += lines.length;
    const nonEmpty = lines.filter((l) => l.trim() !== "");
    if (nonEmpty.length === 0) return [];
    try {
      const values = JSON.parse(`[${nonEmpty.join(",")}]`) as unknown[];
      if (values.every(isRecord)) return values as T[];
    } catch {
      // Some line is malformed: find it below.
    }
    const out: T[] = [];
    lines.forEach((line, i) => {
      if (line.trim() === "") return;
      try {
        const value: unknown = JSON.parse(line);
        if (isRecord(value)) out.push(value as T);
        else this.errors.push(new JsonlError(this.path, firstLine + i, "expected a JSON object"));
      } catch (err) {
        this.errors.push(new JsonlError(this.path, firstLine + i, err instanceof Error ? err.message : String(err)));
      }
    });
    return out;
  }
}

function isRecord(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Follows a text log: the first read returns the last `keep` lines (reading at most 256 KiB of
 * the tail), later reads only new complete lines; at most `keep` lines are held.
 */
export class LogTailReader {
  private started = false;
  private readonly appended: AppendedLinesReader;
  readonly lines: string[] = [];

  constructor(
    readonly path: string,
    readonly keep = 500,
  ) {
    this.appended = new AppendedLinesReader(path);
  }

  /** Reads what was appended; returns true when lines changed. */
  read(): boolean {
    if (!this.started) {
      const { text, size } = readTailText(this.path, 256 * 1024);
      if (size === 0) return false;
      this.started = true;
      const complete = text.lastIndexOf("\n");
      this.appended.seek(size - Buffer.byteLength(text.slice(complete + 1)));
      this.push(text.slice(0, complete + 1).split("\n"));
      return this.lines.length > 0;
    }
    const restarts = this.appended.restarts;
    const lines = this.appended.readLines();
    if (this.appended.restarts !== restarts) this.lines.length = 0;
    if (lines.length === 0) return false;
    this.push(lines);
    return true;
  }

  private push(lines: readonly string[]): void {
    for (const line of lines) if (line !== "") this.lines.push(line.replace(/\r$/, ""));
    if (this.lines.length > this.keep) this.lines.splice(0, this.lines.length - this.keep);
  }
}
