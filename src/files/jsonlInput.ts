// Input files of one JSON value per line (datasets, task sets, document collections), read
// strictly. The logs' reader (log/jsonl.ts) forgives a torn last line because a crash can leave
// one; an input file with a bad line is a mistake to report, naming the file and line, before
// anything trains on half of it.
import { readFileSync } from "node:fs";

export interface JsonlInputLine {
  /** `file:line` (1-based), for messages about this line. */
  where: string;
  line: number;
  /** The line's text. */
  text: string;
}

/** Options shared by the readers: the error class of the caller's domain. */
export interface JsonlInputOptions {
  makeError?: (message: string) => Error;
}

function fail(options: JsonlInputOptions, message: string): Error {
  return options.makeError !== undefined ? options.makeError(message) : new Error(message);
}

/** The non-blank lines of `path` (`\n` or `\r\n`), each with where it is; an unreadable file is an error naming it. */
export function jsonlInputLines(path: string, options: JsonlInputOptions = {}): JsonlInputLine[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw fail(options, `${path}: cannot read (${(err as Error).message})`);
  }
  const out: JsonlInputLine[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() !== "") out.push({ where: `${path}:${i + 1}`, line: i + 1, text: line });
  });
  return out;
}

/**
 * Every non-blank line of `path` as a JSON object, with where it is. A line that is not JSON, or
 * not an object, is an error naming `file:line` and `expected` (the shape a line should have).
 */
export function readJsonlObjects(
  path: string,
  expected: string,
  options: JsonlInputOptions = {},
): { where: string; line: number; row: Record<string, unknown> }[] {
  return jsonlInputLines(path, options).map(({ where, line, text }) => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw fail(options, `${where}: not valid JSON (${(err as Error).message}); expected ${expected}`);
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) throw fail(options, `${where}: expected ${expected}`);
    return { where, line, row: value as Record<string, unknown> };
  });
}
