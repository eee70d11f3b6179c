// JSON Lines files in a run directory. Writers append whole lines in one write call, so a reader
// sees at most one torn final line (from a writer that crashed mid-write), which it skips; the
// next append cuts that fragment off first, so it is never glued to a whole record.
import { existsSync, readFileSync } from "node:fs";
import { type AppendResult, appendLine } from "../files/durable.ts";

export class JsonlError extends Error {
  override name = "JsonlError";
  constructor(
    readonly file: string,
    readonly line: number,
    detail: string,
  ) {
    super(`${file}:${line}: malformed JSON line (${detail})`);
  }
}

export interface AppendJsonlOptions {
  /** What the record is, for a disk-full message ("metrics for step 12"). */
  context?: string;
  /** fsync after writing (records that must survive a power cut, e.g. checkpoints). */
  fsync?: boolean;
}

/**
 * Appends one record as one line with a single write (O_APPEND), so lines never interleave, after
 * cutting off a torn final line left by a crash or a full disk.
 */
export function appendJsonl(path: string, record: unknown, options: AppendJsonlOptions = {}): AppendResult {
  return appendLine(path, JSON.stringify(record), { context: options.context, fsync: options.fsync, repair: "jsonl" });
}

export interface JsonlParseResult<T> {
  records: T[];
  /** True when the last line had no newline and did not parse (a write in progress or a crash). */
  tornTail: boolean;
}

/**
 * Parses JSONL text. Blank lines are ignored. An unparsable final line without a trailing newline
 * is skipped as torn; any other unparsable line throws JsonlError with the file and line number.
 * `firstLine` numbers lines when the text starts part-way into a file.
 */
export function parseJsonlText<T = Record<string, unknown>>(text: string, file: string, firstLine = 1): JsonlParseResult<T> {
  const lines = text.split("\n");
  const endsWithNewline = text.endsWith("\n");
  if (endsWithNewline) lines.pop();
  const records: T[] = [];
  let tornTail = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === "") continue;
    try {
      records.push(JSON.parse(line) as T);
    } catch (err) {
      if (i === lines.length - 1 && !endsWithNewline) {
        tornTail = true;
        continue;
      }
      throw new JsonlError(file, firstLine + i, err instanceof Error ? err.message : String(err));
    }
  }
  return { records, tornTail };
}

/** Reads a whole JSONL file; a missing file reads as empty. */
export function readJsonl<T = Record<string, unknown>>(path: string): T[] {
  if (!existsSync(path)) return [];
  return parseJsonlText<T>(readFileSync(path, "utf8"), path).records;
}
