// Multiple-choice benchmarks from the hub with the Python cookbook's hub ids and prompts
// (docs/eval.md#benchmarks-from-the-hub): MMLU-Pro (up to ten options, accuracy per category),
// MMLU-Redux (the 30 re-annotated MMLU subjects, rows marked "ok" only, accuracy per subject) and
// GPQA-Diamond (options shuffled by a fixed seed). Letters are read by src/eval/choiceGrading.ts.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { cellInt, cellString, cellStringList, readSplitRows, type DatasetRow } from "../../hf/parquetRows.ts";
import { seededPermutation } from "../../data/shuffle.ts";
import { BenchmarkDataError, type EvalExample, type GenerationBenchmark } from "../benchmark.ts";
import { CHOICE_LETTERS, gradeChoice } from "../choiceGrading.ts";
import { stringSeed } from "../../random/seeds.ts";

/** "(A) first\n(B) second…": the cookbook's layout for lettered options. */
export function formatParenChoices(choices: readonly string[]): string {
  return choices.map((c, i) => `(${CHOICE_LETTERS[i]}) ${c}`).join("\n");
}

const gradeLetter = (response: string, example: EvalExample) => gradeChoice(response, example.reference, example.choices?.length ?? 4);

function letterFor(index: number, numChoices: number, where: string): string {
  if (!Number.isInteger(index) || index < 0 || index >= numChoices)
    throw new BenchmarkDataError(`${where}: answer index ${index} is outside 0–${numChoices - 1}`);
  return CHOICE_LETTERS[index]!;
}

/** `mmlu_pro` (TIGER-Lab/MMLU-Pro, split test) or `mmlu_pro:<hub id or local path>`. */
export function mmluProBenchmark(source: string | null): GenerationBenchmark {
  const path = source ?? "TIGER-Lab/MMLU-Pro";
  return {
    kind: "generation",
    name: "mmlu_pro",
    description: `MMLU-Pro (${path}, test split), up to 10 options, accuracy per category`,
    defaults: {},
    async load(options = {}) {
      const data = await readSplitRows({ path, name: null, split: "test" }, undefined, options.hub ?? {});
      return data.map((r, i): EvalExample => {
        const where = `${r.file} row ${r.row}`;
        const choices = cellStringList(r, "options");
        const reference =
          r.values["answer_index"] !== undefined && r.values["answer_index"] !== null
            ? letterFor(cellInt(r, "answer_index"), choices.length, where)
            : letterFor(CHOICE_LETTERS.indexOf(cellString(r, "answer").trim().toUpperCase()), choices.length, where);
        const qid = r.values["question_id"];
        return {
          id: qid === undefined || qid === null ? String(i) : String(qid),
          prompt: [
            { role: "user", content: `${cellString(r, "question")}\n\n${formatParenChoices(choices)}\n\nAnswer with just the letter (A, B, C, D, etc.).` },
          ],
          reference,
          choices,
          ...(typeof r.values["category"] === "string" ? { group: r.values["category"] } : {}),
        };
      });
    },
    grade: gradeLetter,
  };
}

/** The 30 subjects (hub configs) of edinburgh-dawg/mmlu-redux. */
export const MMLU_REDUX_SUBJECTS = [
  "anatomy",
  "astronomy",
  "business_ethics",
  "clinical_knowledge",
  "college_chemistry",
  "college_computer_science",
  "college_mathematics",
  "college_medicine",
  "college_physics",
  "conceptual_physics",
  "econometrics",
  "electrical_engineering",
  "formal_logic",
  "global_facts",
  "high_school_chemistry",
  "high_school_geography",
  "high_school_macroeconomics",
  "high_school_mathematics",
  "high_school_physics",
  "high_school_statistics",
  "high_school_us_history",
  "human_aging",
  "logical_fallacies",
  "machine_learning",
  "miscellaneous",
  "philosophy",
  "professional_accounting",
  "professional_law",
  "public_relations",
  "virology",
] as const;

/**
 * The subjects to read: all 30 from the hub; from a local folder, the subject folders it has
 * (a partial download evaluates what is there, and says so in the description).
 */
function reduxSubjects(path: string): string[] {
  const local = resolve(path);
  if (!existsSync(local) || !statSync(local).isDirectory()) return [...MMLU_REDUX_SUBJECTS];
  const present = readdirSync(local).filter((d) => (MMLU_REDUX_SUBJECTS as readonly string[]).includes(d) && statSync(join(local, d)).isDirectory());
  if (present.length === 0) throw new BenchmarkDataError(`${local}: no MMLU-Redux subject folders (expected e.g. anatomy/test-00000-of-00001.parquet)`);
  return present.sort();
}

/** `mmlu_redux` (edinburgh-dawg/mmlu-redux, 30 configs, split test) or `mmlu_redux:<hub id or local folder>`. */
export function mmluReduxBenchmark(source: string | null): GenerationBenchmark {
  const path = source ?? "edinburgh-dawg/mmlu-redux";
  return {
    kind: "generation",
    name: "mmlu_redux",
    description: `MMLU-Redux (${path}, test split, rows with error_type "ok"), accuracy per subject`,
    defaults: {},
    async load(options = {}) {
      const out: EvalExample[] = [];
      for (const subject of reduxSubjects(path)) {
        const data: DatasetRow[] = await readSplitRows({ path, name: subject, split: "test" }, undefined, options.hub ?? {});
        data.forEach((r, i) => {
          const errorType = r.values["error_type"];
          if (errorType !== undefined && errorType !== null && errorType !== "ok") return;
          const choices = cellStringList(r, "choices");
          out.push({
            id: `${subject}/${i}`,
            prompt: [
              { role: "user", content: `${cellString(r, "question")}\n\n${formatParenChoices(choices)}\n\nAnswer with just the letter (A, B, C, or D).` },
            ],
            reference: letterFor(cellInt(r, "answer"), choices.length, `${r.file} row ${r.row}`),
            choices,
            group: subject,
          });
        });
      }
      return out;
    },
    grade: gradeLetter,
  };
}

/** The seed of GPQA's option order; fixed so every run (and every model) sees the same letters. */
export const GPQA_SHUFFLE_SEED = 0;

/**
 * `gpqa` (Idavidrein/gpqa, config gpqa_diamond, split train; gated) or `gpqa:<hub id or local path>`.
 * The hub lists the correct answer first; shown in that order the answer would always be A, so the
 * options are permuted by a seed derived from GPQA_SHUFFLE_SEED and the question.
 */
export function gpqaBenchmark(source: string | null): GenerationBenchmark {
  const path = source ?? "Idavidrein/gpqa";
  return {
    kind: "generation",
    name: "gpqa",
    description: `GPQA-Diamond (${path}, gpqa_diamond), 4 options shuffled with a fixed seed`,
    defaults: {},
    async load(options = {}) {
      const data = await readSplitRows({ path, name: "gpqa_diamond", split: "train" }, undefined, options.hub ?? {});
      return data.map((r, i): EvalExample => {
        const question = cellString(r, "Question").trim();
        const correct = cellString(r, "Correct Answer").trim();
        const options_ = [correct, ...[1, 2, 3].map((k) => cellString(r, `Incorrect Answer ${k}`).trim())];
        const order = seededPermutation(options_.length, stringSeed(GPQA_SHUFFLE_SEED, question));
        const choices = order.map((k) => options_[k]!);
        const rid = r.values["Record ID"];
        return {
          id: typeof rid === "string" && rid !== "" ? rid : String(i),
          prompt: [
            {
              role: "user",
              content: `${question}\n\n${formatParenChoices(choices)}\n\nThink step by step, then give your final answer as a single letter (A, B, C, or D).`,
            },
          ],
          reference: CHOICE_LETTERS[order.indexOf(0)]!,
          choices,
        };
      });
    },
    grade: gradeLetter,
  };
}
