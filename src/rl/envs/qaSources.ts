// Where question/answer problems come from: a JSONL file of {"question","answer"} records (the
// shape of fixtures/data/arithmetic.jsonl) or GSM8K's parquet files, found locally, in the HF
// cache, or downloaded from the hub when online.
import { readFileSync } from "node:fs";
import { parquetReadObjects } from "hyparquet";
import { resolveDatasetSplitFiles, type HubOptions } from "../../hf/datasets.ts";
import { gsm8kReference } from "../../grading/index.ts";
import type { QAProblem } from "./problems.ts";

export class QAFileError extends Error {
  override name = "QAFileError";
}

/** Every record of a JSONL file; errors name the file, the 1-based line and the field. */
export function readQAJsonl(path: string): QAProblem[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new QAFileError(`${path}: cannot read (${(err as Error).message})`);
  }
  const out: QAProblem[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    const where = `${path}:${i + 1}`;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      throw new QAFileError(`${where}: not valid JSON`);
    }
    if (row === null || typeof row !== "object") throw new QAFileError(`${where}: expected an object with "question" and "answer"`);
    const r = row as Record<string, unknown>;
    for (const key of ["question", "answer"] as const) {
      const v = r[key];
      if (typeof v !== "string" && typeof v !== "number") {
        throw new QAFileError(`${where}: "${key}" must be a string (or number), got ${v === undefined ? "nothing" : JSON.stringify(v)}`);
      }
    }
    out.push({ question: String(r["question"]), answer: String(r["answer"]) });
  });
  if (out.length === 0) throw new QAFileError(`${path}: no records (expected one {"question": …, "answer": …} per line)`);
  return out;
}

export const GSM8K_REPO = "openai/gsm8k";

/** GSM8K problems of one split ("train" / "test"); the reference is the number after "####". */
export async function readGsm8k(split: string, options: HubOptions & { path?: string } = {}): Promise<QAProblem[]> {
  const files = await resolveDatasetSplitFiles({ path: options.path ?? GSM8K_REPO, name: "main", split }, options);
  const out: QAProblem[] = [];
  for (const file of files) {
    const buf = readFileSync(file);
    const rows = await parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength), columns: ["question", "answer"] });
    rows.forEach((row, i) => {
      const q = row["question"];
      const a = row["answer"];
      if (typeof q !== "string" || typeof a !== "string") throw new QAFileError(`${file} row ${i}: expected string "question" and "answer" columns`);
      const reference = gsm8kReference(a);
      if (reference === null) throw new QAFileError(`${file} row ${i}: the answer has no "#### <number>" line: ${JSON.stringify(a.slice(-80))}`);
      out.push({ question: q, answer: reference });
    });
  }
  return out;
}
