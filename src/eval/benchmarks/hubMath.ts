// Math benchmarks from their Hugging Face parquet files (a local file or folder, the HF cache, or
// the hub by id through src/hf/datasets.ts), with the Python cookbook's prompts and hub ids
// (docs/eval.md#benchmarks-from-the-hub). Every one is graded by src/grading in lenient mode: the last
// \boxed{} answer, else a stated final answer, else the last number.
import { cellString, readSplitRows, type DatasetRow } from "../../hf/parquetRows.ts";
import { BenchmarkDataError, type EvalExample, type GenerationBenchmark, type LoadOptions } from "../benchmark.ts";
import { grade, gsm8kReference, mathReference } from "../../grading/index.ts";
import type { HubDatasetRef } from "../../hf/datasets.ts";

export const BOXED_INSTRUCTION = "Solve the problem step by step, then write the final answer inside \\boxed{}.";

async function rows(ref: HubDatasetRef, columns: string[] | undefined, options: LoadOptions): Promise<DatasetRow[]> {
  const out = await readSplitRows(ref, columns, options.hub ?? {});
  if (out.length === 0) throw new BenchmarkDataError(`${ref.path}: split "${ref.split}" has no rows`);
  return out;
}

function user(content: string) {
  return [{ role: "user" as const, content }];
}

const gradeLenient = (response: string, example: EvalExample) => grade(response, example.reference, { mode: "lenient" });

/** `gsm8k` (openai/gsm8k, config main, split test) or `gsm8k:<hub id or local path>`. */
export function gsm8kBenchmark(source: string | null): GenerationBenchmark {
  const path = source ?? "openai/gsm8k";
  return {
    kind: "generation",
    name: "gsm8k",
    description: `GSM8K grade-school math (${path}, test split), boxed/final-number grading`,
    defaults: { max_tokens: 2048, temperature: 0.6 },
    async load(options = {}) {
      return (await rows({ path, name: "main", split: "test" }, ["question", "answer"], options)).map((r, i): EvalExample => {
        const reference = gsm8kReference(cellString(r, "answer"));
        if (reference === null) throw new BenchmarkDataError(`${r.file} row ${r.row}: "answer" has no "#### <number>" marker`);
        return { id: String(i), prompt: user(`${cellString(r, "question")}\n\n${BOXED_INSTRUCTION}`), reference };
      });
    },
    grade: gradeLenient,
  };
}

/** The reference of a MATH row: its `answer` column, else the last \boxed{} of its `solution`. */
function mathRowAnswer(r: DatasetRow): string {
  const ref = mathReference(r.values["answer"], r.values["solution"]);
  if (ref === null) throw new BenchmarkDataError(`${r.file} row ${r.row}: no "answer" column and no \\boxed{} in "solution"`);
  return ref;
}

/**
 * `math500` (HuggingFaceH4/MATH-500, split test) or `math500:<hub id or local path>`. The
 * cookbook's prompt: the problem, then " Put your final answer in \boxed{}.".
 */
export function math500Benchmark(source: string | null): GenerationBenchmark {
  const path = source ?? "HuggingFaceH4/MATH-500";
  return {
    kind: "generation",
    name: "math500",
    description: `MATH-500 competition math (${path}, test split), boxed-answer grading`,
    defaults: { max_tokens: 4096, temperature: 0.6 },
    async load(options = {}) {
      return (await rows({ path, name: null, split: "test" }, undefined, options)).map((r, i): EvalExample => {
        const id = typeof r.values["unique_id"] === "string" ? r.values["unique_id"] : String(i);
        return { id, prompt: user(`${cellString(r, "problem")} Put your final answer in \\boxed{}.`), reference: mathRowAnswer(r) };
      });
    },
    grade: gradeLenient,
  };
}

/** AIME sets by year: the cookbook reads MathArena's; 2024 is HuggingFaceH4's 30 problems of AIME I and II. */
export const AIME_DATASETS: Record<string, string> = {
  "2024": "HuggingFaceH4/aime_2024",
  "2025": "MathArena/aime_2025",
  "2026": "MathArena/aime_2026",
};

const AIME_SUFFIX = "This is an AIME problem. The answer is an integer from 000 to 999. Show your work step by step, then put your final answer in \\boxed{}.";

function firstPresent(r: DatasetRow, keys: string[]): string | null {
  for (const k of keys) if (r.values[k] !== undefined && r.values[k] !== null) return k;
  return null;
}

/** `aime_<year>` (split train, as on the hub) or `aime_<year>:<hub id or local path>`. */
export function aimeBenchmark(year: string): (source: string | null) => GenerationBenchmark {
  return (source) => {
    const path = source ?? AIME_DATASETS[year]!;
    const name = `aime_${year}`;
    return {
      kind: "generation",
      name,
      description: `AIME ${year} (${path}), integer answers 0–999, boxed-answer grading`,
      defaults: { max_tokens: 32768, temperature: 0.6 },
      async load(options = {}) {
        return (await rows({ path, name: null, split: "train" }, undefined, options)).map((r, i): EvalExample => {
          const problemKey = firstPresent(r, ["problem", "question", "Problem"]);
          const answerKey = firstPresent(r, ["answer", "Answer", "expected_answer"]);
          if (problemKey === null || answerKey === null) throw new BenchmarkDataError(`${r.file} row ${r.row}: expected "problem" and "answer" columns`);
          const raw = cellString(r, answerKey).trim();
          const m = /\d+/.exec(raw);
          if (m === null) throw new BenchmarkDataError(`${r.file} row ${r.row}: "${answerKey}" ${JSON.stringify(raw)} is not an integer`);
          const idKey = firstPresent(r, ["problem_idx", "id", "ID"]);
          return {
            id: idKey === null ? String(i + 1) : cellString(r, idKey),
            prompt: user(`${cellString(r, problemKey)}\n\n${AIME_SUFFIX}`),
            // "042" and "42" are one answer.
            reference: String(Number(m[0])),
          };
        });
      },
      grade: gradeLenient,
    };
  };
}
