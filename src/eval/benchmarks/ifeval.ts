// IFEval (google/IFEval, split train, 541 prompts): each prompt carries verifiable instructions
// ("answer in fewer than 50 words", "no commas"...). A response is correct when it follows all of
// them (prompt-level strict accuracy, the cookbook's score); also reported: instruction-level
// strict accuracy and both loose accuracies (docs/eval.md#ifeval).
import { cellString, cellStringList, readSplitRows, type DatasetRow } from "../../hf/parquetRows.ts";
import { BenchmarkDataError, type BenchmarkGrade, type EvalExample, type GenerationBenchmark } from "../benchmark.ts";
import { followsInstruction, followsInstructionLoosely, validateInstruction, type InstructionArgs } from "../ifeval/instructions.ts";

interface IfevalItem {
  instruction_id_list: string[];
  kwargs: InstructionArgs[];
}

/** An instruction's arguments without the struct's null fields, int64s as numbers (so it is JSON). */
function plainArgs(args: InstructionArgs): InstructionArgs {
  const out: InstructionArgs = {};
  for (const [k, v] of Object.entries(args)) {
    if (v === null || v === undefined) continue;
    out[k] = typeof v === "bigint" ? Number(v) : v;
  }
  return out;
}

/** The kwargs column: a list of structs (absent keys null), JSON strings, or one JSON string of a list. */
function parseArgs(r: DatasetRow, count: number): InstructionArgs[] {
  let raw = r.values["kwargs"];
  const where = `${r.file} row ${r.row}`;
  if (typeof raw === "string") {
    try {
      raw = JSON.parse(raw);
    } catch {
      throw new BenchmarkDataError(`${where}: "kwargs" is a string but not JSON`);
    }
  }
  if (raw === undefined || raw === null) raw = [];
  if (!Array.isArray(raw)) throw new BenchmarkDataError(`${where}: "kwargs" must be a list with one entry per instruction`);
  const out = raw.map((kw, i): InstructionArgs => {
    let v: unknown = kw;
    if (typeof v === "string") {
      try {
        v = JSON.parse(v);
      } catch {
        throw new BenchmarkDataError(`${where}: kwargs[${i}] is not JSON: ${JSON.stringify(v)}`);
      }
    }
    if (v === null || v === undefined) return {};
    if (typeof v !== "object" || Array.isArray(v)) throw new BenchmarkDataError(`${where}: kwargs[${i}] must be an object`);
    return v as InstructionArgs;
  });
  while (out.length < count) out.push({});
  return out;
}

export function ifevalBenchmark(source: string | null): GenerationBenchmark {
  const path = source ?? "google/IFEval";
  return {
    kind: "generation",
    name: "ifeval",
    description: `IFEval instruction following (${path}, train split), all instructions followed (strict)`,
    defaults: {},
    async load(options = {}) {
      const data = await readSplitRows({ path, name: null, split: "train" }, undefined, options.hub ?? {});
      return data.map((r, i): EvalExample => {
        const ids = cellStringList(r, "instruction_id_list");
        const args = parseArgs(r, ids.length).map(plainArgs);
        ids.forEach((id, k) => {
          const problem = validateInstruction(id, args[k]!);
          if (problem !== null) throw new BenchmarkDataError(`${r.file} row ${r.row}: instruction ${k}: ${problem}`);
        });
        const key = r.values["key"];
        const id = key === undefined || key === null ? String(i) : String(key);
        // The reference is the instructions themselves, so grading needs nothing but the example.
        const item: IfevalItem = { instruction_id_list: ids, kwargs: args };
        return { id, prompt: [{ role: "user", content: cellString(r, "prompt") }], reference: JSON.stringify(item) };
      });
    },
    grade(response, example): BenchmarkGrade {
      const item = JSON.parse(example.reference) as IfevalItem;
      const ids = item.instruction_id_list;
      const strict = ids.map((id, k) => followsInstruction(id, response, item.kwargs[k] ?? {}));
      const loose = ids.map((id, k) => strict[k]! || followsInstructionLoosely(id, response, item.kwargs[k] ?? {}));
      const failed = ids.filter((_, k) => !strict[k]);
      const followed = strict.filter(Boolean).length;
      const followedLoose = loose.filter(Boolean).length;
      return {
        correct: failed.length === 0,
        extracted: failed.length === 0 ? `${followed}/${ids.length}` : `${followed}/${ids.length} (not followed: ${failed.join(", ")})`,
        details: { instructions: ids.length, followed, followed_loose: followedLoose },
      };
    },
    extraMetrics(details) {
      return instructionMetrics(details);
    },
  };
}

/** Prompt- and instruction-level strict and loose accuracy from the samples' details. */
export function instructionMetrics(details: (Record<string, number> | undefined)[][]): Record<string, number> {
  let prompts = 0;
  let promptStrict = 0;
  let promptLoose = 0;
  let instructions = 0;
  let followed = 0;
  let followedLoose = 0;
  for (const samples of details) {
    if (samples.length === 0) {
      prompts += 1;
      continue;
    }
    for (const d of samples) {
      prompts += 1 / samples.length;
      if (d === undefined) continue;
      const n = d["instructions"] ?? 0;
      instructions += n;
      followed += d["followed"] ?? 0;
      followedLoose += d["followed_loose"] ?? 0;
      if ((d["followed"] ?? 0) === n) promptStrict += 1 / samples.length;
      if ((d["followed_loose"] ?? 0) === n) promptLoose += 1 / samples.length;
    }
  }
  return {
    prompt_strict_accuracy: prompts > 0 ? promptStrict / prompts : 0,
    prompt_loose_accuracy: prompts > 0 ? promptLoose / prompts : 0,
    instruction_strict_accuracy: instructions > 0 ? followed / instructions : 0,
    instruction_loose_accuracy: instructions > 0 ? followedLoose / instructions : 0,
  };
}
