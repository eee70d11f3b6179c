// The benchmark registry: a benchmark is named `name` or `name:source` (a hub id, a file, or for
// arithmetic the largest operand). Add a line to `BENCHMARKS` (or call registerBenchmark) to
// add one.
import type { Benchmark } from "./benchmark.ts";
import { arithmeticBenchmark } from "./benchmarks/arithmetic.ts";
import { aimeBenchmark, gsm8kBenchmark, math500Benchmark } from "./benchmarks/hubMath.ts";
import { gpqaBenchmark, mmluProBenchmark, mmluReduxBenchmark } from "./benchmarks/hubChoice.ts";
import { ifevalBenchmark } from "./benchmarks/ifeval.ts";
import { humanEvalBenchmark, liveCodeBenchBenchmark, mbppBenchmark } from "./benchmarks/code.ts";
import { chatNllBenchmark, multipleChoiceBenchmark, qaJsonlBenchmark } from "./benchmarks/jsonlFiles.ts";

export interface BenchmarkEntry {
  description: string;
  /** What `:source` means for this benchmark. */
  source: string;
  make(source: string | null): Benchmark;
}

const BENCHMARKS = new Map<string, BenchmarkEntry>([
  ["arithmetic", { description: "two-number addition, offline (held-out pairs)", source: "largest operand (default 100)", make: arithmeticBenchmark }],
  ["gsm8k", { description: "GSM8K test split, boxed/final-number grading", source: "hub id or local parquet (default openai/gsm8k)", make: gsm8kBenchmark }],
  ["math500", { description: "MATH-500, boxed-answer grading", source: "hub id or local parquet (default HuggingFaceH4/MATH-500)", make: math500Benchmark }],
  [
    "aime_2024",
    {
      description: "AIME 2024, integer answers, boxed-answer grading",
      source: "hub id or local parquet (default HuggingFaceH4/aime_2024)",
      make: aimeBenchmark("2024"),
    },
  ],
  [
    "aime_2025",
    {
      description: "AIME 2025, integer answers, boxed-answer grading",
      source: "hub id or local parquet (default MathArena/aime_2025)",
      make: aimeBenchmark("2025"),
    },
  ],
  ["aime", { description: "AIME 2025 (the cookbook's alias)", source: "hub id or local parquet (default MathArena/aime_2025)", make: aimeBenchmark("2025") }],
  [
    "aime_2026",
    {
      description: "AIME 2026, integer answers, boxed-answer grading",
      source: "hub id or local parquet (default MathArena/aime_2026)",
      make: aimeBenchmark("2026"),
    },
  ],
  [
    "mmlu_pro",
    {
      description: "MMLU-Pro, 10-option multiple choice, accuracy per category",
      source: "hub id or local parquet (default TIGER-Lab/MMLU-Pro)",
      make: mmluProBenchmark,
    },
  ],
  [
    "mmlu_redux",
    {
      description: "MMLU-Redux, 30 subjects (rows marked ok), accuracy per subject",
      source: "hub id or local folder of <subject>/ (default edinburgh-dawg/mmlu-redux)",
      make: mmluReduxBenchmark,
    },
  ],
  [
    "gpqa",
    {
      description: "GPQA-Diamond, 4 options shuffled with a fixed seed",
      source: "hub id or local parquet (default Idavidrein/gpqa, gated)",
      make: gpqaBenchmark,
    },
  ],
  [
    "ifeval",
    {
      description: "IFEval verifiable instructions, prompt-level strict accuracy",
      source: "hub id or local parquet (default google/IFEval)",
      make: ifevalBenchmark,
    },
  ],
  [
    "mbpp",
    {
      description: "MBPP test split, Python checked by its asserts in the sandbox (pass@k)",
      source: "hub id or local parquet (default google-research-datasets/mbpp)",
      make: mbppBenchmark,
    },
  ],
  [
    "humaneval",
    {
      description: "HumanEval, Python checked by its check() in the sandbox (pass@k)",
      source: "hub id or local parquet (default openai/openai_humaneval)",
      make: humanEvalBenchmark,
    },
  ],
  [
    "livecodebench",
    {
      description: "LiveCodeBench code generation, Python checked by its public and private tests in the sandbox (pass@k)",
      source: "hub id or local parquet (default livecodebench/code_generation_lite)",
      make: liveCodeBenchBenchmark,
    },
  ],
  ["qa", { description: "any {question, answer} JSONL, math grading (or an LLM judge)", source: "JSONL file (required)", make: qaJsonlBenchmark }],
  ["mc", { description: "multiple-choice {question, choices, answer} JSONL, letter grading", source: "JSONL file (required)", make: multipleChoiceBenchmark }],
  ["nll", { description: "NLL of the assistant turns of a chat JSONL test set", source: "JSONL file (required)", make: chatNllBenchmark }],
]);

export class UnknownBenchmarkError extends Error {
  override name = "UnknownBenchmarkError";
}

export function registerBenchmark(name: string, entry: BenchmarkEntry): void {
  BENCHMARKS.set(name, entry);
}

export function listBenchmarks(): { name: string; entry: BenchmarkEntry }[] {
  return [...BENCHMARKS].map(([name, entry]) => ({ name, entry }));
}

/** `gsm8k`, `arithmetic:9`, `qa:data/test.jsonl` → a benchmark. */
export function resolveBenchmark(spec: string): Benchmark {
  const colon = spec.indexOf(":");
  const name = colon < 0 ? spec : spec.slice(0, colon);
  const source = colon < 0 ? null : spec.slice(colon + 1);
  const entry = BENCHMARKS.get(name);
  if (entry === undefined) {
    throw new UnknownBenchmarkError(
      `unknown benchmark ${JSON.stringify(name)} in ${JSON.stringify(spec)}; known: ${[...BENCHMARKS.keys()].join(", ")} (name or name:source)`,
    );
  }
  return entry.make(source);
}
