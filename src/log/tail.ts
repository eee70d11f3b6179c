// Incremental JSONL reader for live views: remembers its byte offset and returns only records
// from complete new lines, so polling a 100k-row metrics.jsonl costs only what was appended.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { JsonlError } from "./jsonl.ts";

const NEWLINE = 0x0a;

export class JsonlTailReader<T = Record<string, unknown>> {
  private offset = 0;
  private lineNumber = 0;
  /** Malformed complete lines seen so far (they are skipped, not fatal, for a live view). */
  readonly errors: JsonlError[] = [];

  constructor(readonly path: string) {}

  /** Records appended since the last call. A missing file yields none; a truncated file restarts. */
  read(): T[] {
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
        // Rewritten or truncated (e.g. the run dir was deleted and recreated): start over.
        this.offset = 0;
        this.lineNumber = 0;
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
      return this.parse(buffer.toString("utf8", 0, lastNewline));
    } finally {
      closeSync(fd);
    }
  }

  private parse(text: string): T[] {
    const out: T[] = [];
    for (const line of text.split("\n")) {
      this.lineNumber++;
      if (line.trim() === "") continue;
      try {
        out.push(JSON.parse(line) as T);
      } catch (err) {
        this.errors.push(new JsonlError(this.path, this.lineNumber, err instanceof Error ? err.message : String(err)));
      }
    }
    return out;
  }

  /** Bytes consumed so far. */
  get position(): number {
    return this.offset;
  }
}
