// Labeled comparisons from JSONL, one cookbook row per line. Every problem names file and line.
import * as fs from "node:fs";
import { DataFormatError } from "../supervised/conversationFile.ts";
import { ComparisonRowSchema, labeledComparisonFromRow, labeledComparisonToRow, type LabeledComparison } from "./types.ts";

const EXAMPLE_ROW =
  '{"comparison":{"prompt_conversation":[{"role":"user","content":"Hi"}],"completion_A":[{"role":"assistant","content":"Hello!"}],"completion_B":[{"role":"assistant","content":"Go away."}]},"label":"A"}';

/** One JSONL line; `where` (e.g. "pairs.jsonl:3") prefixes every error. */
export function parseComparisonLine(text: string, where: string): LabeledComparison {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new DataFormatError(`${where}: not valid JSON (${(err as Error).message})`);
  }
  const parsed = ComparisonRowSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path.length > 0 ? issue.path.map(String).join(".") : "(row)";
    throw new DataFormatError(`${where}: ${key}: ${issue.message}; expected a row like ${EXAMPLE_ROW}`);
  }
  return labeledComparisonFromRow(parsed.data);
}

export function readComparisonFile(file: string): LabeledComparison[] {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new DataFormatError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const out: LabeledComparison[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() !== "") out.push(parseComparisonLine(line, `${file}:${i + 1}`));
  });
  return out;
}

export function comparisonToJsonLine(lc: LabeledComparison): string {
  return JSON.stringify(labeledComparisonToRow(lc));
}
