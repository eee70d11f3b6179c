// Where question/answer problems come from: a JSONL file of {"question","answer"} records (the
// shape of fixtures/data/arithmetic.jsonl) or the parquet files of GSM8K, Hendrycks MATH,
// MATH-500, DeepMath or Polaris, found locally, in the HF cache, or downloaded from the hub when
// online.
import { readJsonlObjects } from "../../files/jsonlInput.ts";
import type { HubOptions } from "../../hf/datasets.ts";
import { cellString, readSplitRows, type DatasetRow } from "../../hf/parquetRows.ts";
import { gsm8kReference, mathReference } from "../../grading/index.ts";
import type { QAProblem } from "./problems.ts";

export class QAFileError extends Error {
  override name = "QAFileError";
}

/** Every record of a JSONL file; errors name the file, the 1-based line and the field. */
export function readQAJsonl(path: string): QAProblem[] {
  const expected = 'an object with "question" and "answer"';
  const out = readJsonlObjects(path, expected, { makeError: (m) => new QAFileError(m) }).map(({ where, row }) => {
    for (const key of ["question", "answer"] as const) {
      const v = row[key];
      if (typeof v !== "string" && typeof v !== "number") {
        throw new QAFileError(`${where}: "${key}" must be a string (or number), got ${v === undefined ? "nothing" : JSON.stringify(v)}`);
      }
    }
    return { question: String(row["question"]), answer: String(row["answer"]) };
  });
  if (out.length === 0) throw new QAFileError(`${path}: no records (expected one {"question": …, "answer": …} per line)`);
  return out;
}

export const GSM8K_REPO = "openai/gsm8k";

/** GSM8K problems of one split ("train" / "test"); the reference is the number after "####". */
export async function readGsm8k(split: string, options: HubOptions & { path?: string } = {}): Promise<QAProblem[]> {
  const rows = await readSplitRows({ path: options.path ?? GSM8K_REPO, name: "main", split }, ["question", "answer"], options);
  return rows.map((r) => {
    const reference = gsm8kReference(cellString(r, "answer"));
    if (reference === null)
      throw new QAFileError(`${r.file} row ${r.row}: the answer has no "#### <number>" line: ${JSON.stringify(cellString(r, "answer").slice(-80))}`);
    return { question: cellString(r, "question"), answer: reference };
  });
}

/** Hub ids of the math sources (the Python cookbook's math_rl datasets). */
export const MATH_SOURCES = {
  /** Hendrycks MATH, 7 subject configs; train = their train and test splits minus MATH-500. */
  math: "EleutherAI/hendrycks_math",
  math500: "HuggingFaceH4/MATH-500",
  deepmath: "zwhe99/DeepMath-103K",
  polaris: "POLARIS-Project/Polaris-Dataset-53K",
} as const;

export const HENDRYCKS_MATH_SUBJECTS = [
  "algebra",
  "counting_and_probability",
  "geometry",
  "intermediate_algebra",
  "number_theory",
  "prealgebra",
  "precalculus",
] as const;

/** Rows → problems; rows without a usable question or answer are skipped (the cookbook skips them too) and counted. */
function problemsFrom(rows: DatasetRow[], question: string, answer: (r: DatasetRow) => string | null, where: string): QAProblem[] {
  const out: QAProblem[] = [];
  let skipped = 0;
  for (const r of rows) {
    const q = r.values[question];
    const a = answer(r);
    if (typeof q !== "string" || q.trim() === "" || a === null || a.trim() === "") skipped++;
    else out.push({ question: q, answer: a });
  }
  if (out.length === 0) throw new QAFileError(`${where}: no rows with a "${question}" and an answer (${skipped} rows skipped)`);
  return out;
}

/** MATH-500 (the held-out test set of env=math). */
export async function readMath500(options: HubOptions & { path?: string } = {}): Promise<QAProblem[]> {
  const path = options.path ?? MATH_SOURCES.math500;
  const rows = await readSplitRows({ path, name: null, split: "test" }, undefined, options);
  return problemsFrom(rows, "problem", (r) => mathReference(r.values["answer"], r.values["solution"]), path);
}

/**
 * Hendrycks MATH for training: every subject's train and test split, without the problems of
 * `exclude` (MATH-500), as the cookbook does (12,000 train problems from 12,500).
 */
export async function readHendrycksMath(exclude: readonly QAProblem[], options: HubOptions & { path?: string } = {}): Promise<QAProblem[]> {
  const path = options.path ?? MATH_SOURCES.math;
  const held = new Set(exclude.map((p) => p.question));
  const out: QAProblem[] = [];
  for (const subject of HENDRYCKS_MATH_SUBJECTS) {
    for (const split of ["train", "test"]) {
      const rows = await readSplitRows({ path, name: subject, split }, ["problem", "solution"], options);
      out.push(
        ...problemsFrom(rows, "problem", (r) => mathReference(undefined, r.values["solution"]), `${path} ${subject}/${split}`).filter(
          (p) => !held.has(p.question),
        ),
      );
    }
  }
  return out;
}

/** DeepMath-103K: `question` and `final_answer` (train only). */
export async function readDeepMath(options: HubOptions & { path?: string } = {}): Promise<QAProblem[]> {
  const path = options.path ?? MATH_SOURCES.deepmath;
  const rows = await readSplitRows({ path, name: null, split: "train" }, ["question", "final_answer"], options);
  return problemsFrom(rows, "question", (r) => mathReference(r.values["final_answer"], undefined), path);
}

/** Polaris-Dataset-53K: `problem` and `answer` (train only). */
export async function readPolaris(options: HubOptions & { path?: string } = {}): Promise<QAProblem[]> {
  const path = options.path ?? MATH_SOURCES.polaris;
  const rows = await readSplitRows({ path, name: null, split: "train" }, ["problem", "answer"], options);
  return problemsFrom(rows, "problem", (r) => mathReference(r.values["answer"], undefined), path);
}
