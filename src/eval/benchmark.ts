// What a benchmark is (docs/cookbook-parity.md#evaluation-framework): data plus the rules to score it. A benchmark loads its
// examples, says how to grade a response (or, for NLL benchmarks, scores the reference turns by
// likelihood), and carries defaults for temperature, max_tokens, num_samples and max_examples
// that a run's BenchmarkConfig overrides field by field.
import { z } from "zod";
import type { HubOptions } from "../hf/datasets.ts";
import type { Message } from "../renderers/types.ts";
import type { AnswerGrade } from "../grading/index.ts";

/** The cookbook's BenchmarkConfig fields. `null` in the sampling fields means "the benchmark's default". */
export const BenchmarkConfigSchema = z.object({
  max_examples: z.number().int().positive().nullable().default(null).describe("Evaluate only the first N examples (null = the benchmark's default, else all)"),
  concurrency: z.number().int().positive().default(64).describe("Examples sampled at the same time"),
  agent_concurrency: z.number().int().positive().default(8).describe("Multi-turn agent episodes run at the same time (reserved for agentic benchmarks)"),
  timeout_seconds: z.number().positive().default(300).describe("Per-example time limit; a timed-out example counts as wrong and is retried on resume"),
  max_tokens: z
    .number()
    .int()
    .positive()
    .nullable()
    .default(null)
    .describe("Sampled tokens per response (null = the benchmark's default, cookbook default 32768)"),
  temperature: z.number().min(0).nullable().default(null).describe("Sampling temperature (null = the benchmark's default, cookbook default 0.6)"),
  num_samples: z.number().int().positive().nullable().default(null).describe("Samples per example; above 1, pass@k is reported with the unbiased estimator"),
  seed: z.number().int().default(0).describe("Sampling seed: each example is sampled with a seed derived from it, so reruns and resumes draw the same tokens"),
});
export type BenchmarkConfigInput = z.input<typeof BenchmarkConfigSchema>;
export type BenchmarkConfigOverrides = z.output<typeof BenchmarkConfigSchema>;

/** Every field decided: what one benchmark actually runs with. */
export interface ResolvedBenchmarkConfig {
  max_examples: number | null;
  concurrency: number;
  agent_concurrency: number;
  timeout_seconds: number;
  max_tokens: number;
  temperature: number;
  num_samples: number;
  seed: number;
}

export interface BenchmarkDefaults {
  max_examples?: number | null;
  max_tokens?: number;
  temperature?: number;
  num_samples?: number;
}

/** The cookbook's defaults for fields a benchmark does not set. */
export const COOKBOOK_BENCHMARK_DEFAULTS = { max_tokens: 32768, temperature: 0.6, num_samples: 1 } as const;

export function resolveBenchmarkConfig(defaults: BenchmarkDefaults, overrides: Partial<BenchmarkConfigOverrides> = {}): ResolvedBenchmarkConfig {
  const base = BenchmarkConfigSchema.parse({});
  return {
    max_examples: overrides.max_examples ?? defaults.max_examples ?? null,
    concurrency: overrides.concurrency ?? base.concurrency,
    agent_concurrency: overrides.agent_concurrency ?? base.agent_concurrency,
    timeout_seconds: overrides.timeout_seconds ?? base.timeout_seconds,
    max_tokens: overrides.max_tokens ?? defaults.max_tokens ?? COOKBOOK_BENCHMARK_DEFAULTS.max_tokens,
    temperature: overrides.temperature ?? defaults.temperature ?? COOKBOOK_BENCHMARK_DEFAULTS.temperature,
    num_samples: overrides.num_samples ?? defaults.num_samples ?? COOKBOOK_BENCHMARK_DEFAULTS.num_samples,
    seed: overrides.seed ?? base.seed,
  };
}

/** One question: the conversation shown to the model and what a right answer is. */
export interface EvalExample {
  /** Stable within the benchmark (resume matches on it). */
  id: string;
  prompt: Message[];
  reference: string;
  /** Multiple-choice options, when the benchmark has them. */
  choices?: string[];
  /** Subject or category: accuracy is also reported per group (`accuracy/<group>`). */
  group?: string;
}

/** One conversation whose assistant turns are scored by likelihood. */
export interface NllExample {
  id: string;
  messages: Message[];
}

export interface LoadOptions {
  hub?: HubOptions;
}

interface BenchmarkBase {
  /** Store folder and metric prefix: `test/<name>/<metric>`. */
  readonly name: string;
  readonly description: string;
  readonly defaults: BenchmarkDefaults;
}

/**
 * A graded response. `details` are numbers kept with the sample (e.g. IFEval's instructions
 * followed) for the benchmark's own `extraMetrics`.
 */
export interface BenchmarkGrade extends AnswerGrade {
  details?: Record<string, number>;
}

export interface GenerationBenchmark extends BenchmarkBase {
  readonly kind: "generation";
  /** Open-ended answers: an LLM judge, when configured, replaces `grade`. */
  readonly judgeable?: boolean;
  load(options?: LoadOptions): Promise<EvalExample[]>;
  /** Code benchmarks grade by running the reply in the sandbox, so a grade may be a promise. */
  grade(response: string, example: EvalExample): BenchmarkGrade | Promise<BenchmarkGrade>;
  /** Metrics beyond accuracy, from the finished samples' `details` (one list per example, example order). */
  extraMetrics?(details: (Record<string, number> | undefined)[][]): Record<string, number>;
}

export interface NllBenchmark extends BenchmarkBase {
  readonly kind: "nll";
  load(options?: LoadOptions): Promise<NllExample[]>;
}

export type Benchmark = GenerationBenchmark | NllBenchmark;

export class BenchmarkDataError extends Error {
  override name = "BenchmarkDataError";
}
