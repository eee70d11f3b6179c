// GSM8K and MATH-500 from their Hugging Face parquet files (a local file or folder, the HF cache,
// or the hub by id through src/hf/datasets.ts). The model is asked for a \boxed{} answer; grading
// reads the boxed value (else a stated final answer, else the last number) and compares it
// with the reference after normalisation.
import { readFileSync } from "node:fs";
import { parquetReadObjects } from "hyparquet";
import { resolveDatasetSplitFiles, type HubDatasetRef } from "../../hf/datasets.ts";
import { BenchmarkDataError, type EvalExample, type GenerationBenchmark, type LoadOptions } from "../benchmark.ts";
import { grade, gsm8kReference } from "../../grading/index.ts";

export const BOXED_INSTRUCTION = "Solve the problem step by step, then write the final answer inside \\boxed{}.";

async function readRows(ref: HubDatasetRef, columns: string[] | undefined, options: LoadOptions): Promise<{ file: string; row: number; values: Record<string, unknown> }[]> {
  const files = await resolveDatasetSplitFiles(ref, options.hub ?? {});
  const out: { file: string; row: number; values: Record<string, unknown> }[] = [];
  for (const file of files) {
    const buf = readFileSync(file);
    let rows: Record<string, unknown>[];
    try {
      const file_ = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
      rows = await parquetReadObjects(columns === undefined ? { file: file_ } : { file: file_, columns });
    } catch (err) {
      throw new BenchmarkDataError(`${file}: cannot read ${columns === undefined ? "rows" : `columns ${columns.join(", ")}`} (${(err as Error).message})`);
    }
    rows.forEach((values, row) => out.push({ file, row, values }));
  }
  return out;
}

function requireString(values: Record<string, unknown>, key: string, where: string): string {
  const v = values[key];
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  throw new BenchmarkDataError(`${where}: column "${key}" must be a string, got ${v === undefined ? "nothing" : JSON.stringify(v)}`);
}

function userPrompt(question: string) {
  return [{ role: "user", content: `${question}\n\n${BOXED_INSTRUCTION}` }];
}

/** `gsm8k` (openai/gsm8k, config main, split test) or `gsm8k:<hub id or local path>`. */
export function gsm8kBenchmark(source: string | null): GenerationBenchmark {
  const path = source ?? "openai/gsm8k";
  return {
    kind: "generation",
    name: "gsm8k",
    description: `GSM8K grade-school math (${path}, test split), boxed/final-number grading`,
    defaults: { max_tokens: 2048, temperature: 0.6 },
    async load(options = {}) {
      const rows = await readRows({ path, name: "main", split: "test" }, ["question", "answer"], options);
      return rows.map(({ file, row, values }, i): EvalExample => {
        const where = `${file} row ${row}`;
        const reference = gsm8kReference(requireString(values, "answer", where));
        if (reference === null) throw new BenchmarkDataError(`${where}: "answer" has no "#### <number>" marker`);
        return { id: String(i), prompt: userPrompt(requireString(values, "question", where)), reference };
      });
    },
    grade: (response, example) => grade(response, example.reference, { mode: "lenient" }),
  };
}

/** `math500` (HuggingFaceH4/MATH-500, split test) or `math500:<hub id or local path>`. */
export function math500Benchmark(source: string | null): GenerationBenchmark {
  const path = source ?? "HuggingFaceH4/MATH-500";
  return {
    kind: "generation",
    name: "math500",
    description: `MATH-500 competition math (${path}, test split), boxed-answer grading`,
    defaults: { max_tokens: 4096, temperature: 0.6 },
    async load(options = {}) {
      const rows = await readRows({ path, name: null, split: "test" }, undefined, options);
      return rows.map(({ file, row, values }, i): EvalExample => {
        const where = `${file} row ${row}`;
        const id = typeof values["unique_id"] === "string" ? values["unique_id"] : String(i);
        return { id, prompt: userPrompt(requireString(values, "problem", where)), reference: requireString(values, "answer", where) };
      });
    },
    grade: (response, example) => grade(response, example.reference, { mode: "lenient" }),
  };
}
