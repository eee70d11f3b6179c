// {question, answer} JSONL rows; errors name the file and line.
import * as fs from "node:fs";

export interface QARow {
  question: string;
  answer: string;
}

export function readJsonlRows(file: string): QARow[] {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
  const rows: QARow[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new Error(`${file}:${i + 1}: not valid JSON (${(err as Error).message})`);
    }
    const v = value as Partial<QARow> | null;
    if (v === null || typeof v !== "object" || typeof v.question !== "string" || typeof v.answer !== "string") {
      throw new Error(`${file}:${i + 1}: expected {"question": "...", "answer": "..."}`);
    }
    rows.push({ question: v.question, answer: v.answer });
  });
  return rows;
}
