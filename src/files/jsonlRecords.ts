// A data file of JSON records, one per line, each checked against a zod schema; a bad line is
// reported with the file, its 1-based line, the key and what was expected.
import { readFileSync } from "node:fs";
import type { z } from "zod";

export class JsonlRecordError extends Error {
  override name = "JsonlRecordError";
}

/** Every non-blank line of `file` parsed with `schema`; `expected` describes a good record in errors. */
export function readJsonlRecords<S extends z.ZodType>(file: string, schema: S, expected: string): z.output<S>[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new JsonlRecordError(`${file}: cannot read (${(err as Error).message})`);
  }
  const out: z.output<S>[] = [];
  text.split("\n").forEach((line, idx) => {
    if (line.trim() === "") return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (err) {
      throw new JsonlRecordError(`${file}:${idx + 1}: not valid JSON (${(err as Error).message})`);
    }
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new JsonlRecordError(`${file}:${idx + 1}: key ${JSON.stringify(issue.path.join(".") || "(row)")}: ${issue.message}; expected ${expected}`);
    }
    out.push(parsed.data);
  });
  return out;
}
