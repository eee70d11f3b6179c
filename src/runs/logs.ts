// Reading the human side of a run directory: the tail of logs.log (incrementally, bounded) and
// the last values of a metric for sparklines without reading a whole metrics.jsonl.
import { closeSync, fstatSync, openSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import type { MetricsRecord } from "../log/metrics.ts";

export const LOG_FILE = "logs.log";
export const STDOUT_FILE = "stdout.log";

/** Up to `maxBytes` from the end of a file, starting at a line boundary. */
function readTailText(path: string, maxBytes: number): { text: string; size: number } {
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

/**
 * Follows a text log: the first read returns the last `keep` lines, later reads only new complete
 * lines; at most `keep` lines are held.
 */
export class LogTailReader {
  private offset = -1;
  readonly lines: string[] = [];

  constructor(
    readonly path: string,
    readonly keep = 500,
  ) {}

  /** Reads what was appended; returns true when lines changed. */
  read(): boolean {
    if (this.offset < 0) {
      const { text, size } = readTailText(this.path, 256 * 1024);
      if (size === 0) return false;
      const complete = text.lastIndexOf("\n");
      this.offset = size - (text.length - complete - 1 >= 0 ? Buffer.byteLength(text.slice(complete + 1)) : 0);
      this.push(text.slice(0, complete + 1));
      return this.lines.length > 0;
    }
    let fd: number;
    try {
      fd = openSync(this.path, "r");
    } catch {
      return false;
    }
    try {
      const size = fstatSync(fd).size;
      if (size < this.offset) {
        this.offset = 0;
        this.lines.length = 0;
      }
      if (size === this.offset) return false;
      const buf = Buffer.alloc(size - this.offset);
      readSync(fd, buf, 0, buf.length, this.offset);
      const end = buf.lastIndexOf(0x0a);
      if (end < 0) return false;
      this.offset += end + 1;
      this.push(buf.toString("utf8", 0, end + 1));
      return true;
    } finally {
      closeSync(fd);
    }
  }

  private push(text: string): void {
    for (const line of text.split("\n")) if (line !== "") this.lines.push(line.replace(/\r$/, ""));
    if (this.lines.length > this.keep) this.lines.splice(0, this.lines.length - this.keep);
  }
}

/** The last `n` lines of a run's logs.log (falling back to stdout.log). */
export function readLogTail(logDir: string, n = 20): string[] {
  for (const f of [LOG_FILE, STDOUT_FILE]) {
    const r = new LogTailReader(join(logDir, f), n);
    if (r.read()) return r.lines;
  }
  return [];
}

/**
 * Follows metrics.jsonl like JsonlTailReader, but parses each batch of new lines with one
 * JSON.parse of an array (much faster on a 100k-row history), falling back to line by line when
 * the batch holds a malformed line. A rewritten (shorter) file restarts from the beginning.
 */
export class MetricsTailReader {
  private offset = 0;
  /** Lines that could not be parsed (skipped). */
  malformed = 0;
  /** How many times the file shrank and reading started over. */
  restarts = 0;

  constructor(readonly path: string) {}

  get position(): number {
    return this.offset;
  }

  read(): MetricsRecord[] {
    let fd: number;
    try {
      fd = openSync(this.path, "r");
    } catch {
      return [];
    }
    try {
      const size = fstatSync(fd).size;
      if (size < this.offset) {
        this.offset = 0;
        this.restarts++;
      }
      if (size === this.offset) return [];
      const buf = Buffer.allocUnsafe(size - this.offset);
      let filled = 0;
      while (filled < buf.length) {
        const n = readSync(fd, buf, filled, buf.length - filled, this.offset + filled);
        if (n === 0) break;
        filled += n;
      }
      const end = buf.lastIndexOf(0x0a, filled - 1);
      if (end < 0) return [];
      this.offset += end + 1;
      const lines = buf.toString("utf8", 0, end).split("\n").filter((l) => l.trim() !== "");
      try {
        return JSON.parse(`[${lines.join(",")}]`) as MetricsRecord[];
      } catch {
        const out: MetricsRecord[] = [];
        for (const line of lines) {
          try {
            const v: unknown = JSON.parse(line);
            if (typeof v === "object" && v !== null && !Array.isArray(v)) out.push(v as MetricsRecord);
            else this.malformed++;
          } catch {
            this.malformed++;
          }
        }
        return out;
      }
    } finally {
      closeSync(fd);
    }
  }
}

/** A tailer over a run's metrics.jsonl. */
export function metricsTailReader(logDir: string): MetricsTailReader {
  return new MetricsTailReader(join(logDir, "metrics.jsonl"));
}

/** The last values of `key` in metrics.jsonl, reading only the file's tail (for sparklines). */
export function readMetricTail(logDir: string, key: string, maxBytes = 64 * 1024): number[] {
  const { text } = readTailText(join(logDir, "metrics.jsonl"), maxBytes);
  const out: number[] = [];
  for (const line of text.split("\n")) {
    if (!line.includes(`"${key}"`)) continue;
    try {
      const v = (JSON.parse(line) as Record<string, unknown>)[key];
      if (typeof v === "number" && Number.isFinite(v)) out.push(v);
    } catch {
      // a torn line
    }
  }
  return out;
}

/** config.json of a run directory as an object, or undefined when missing or unreadable. */
export function readRunConfig(logDir: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(readFileSync(join(logDir, "config.json"), "utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
