// Benchmarks as inline evaluators for the training loops: each named benchmark becomes a
// SamplingClientEvaluator whose metrics are `test/<benchmark>/<metric>`. Examples are loaded once;
// the renderer follows the sampler's base model unless one is given. Every evaluation samples
// with the same per-example seeds, so scores move only when the weights do.
import { z } from "zod";
import { inGroup } from "../config/groups.ts";
import {
  BenchmarkConfigSchema,
  resolveBenchmarkConfig,
  type Benchmark,
  type BenchmarkConfigOverrides,
  type EvalExample,
  type NllExample,
} from "./benchmark.ts";
import type { EvalMetrics, SamplingClientEvaluator } from "./evaluators.ts";
import type { LLMJudge } from "./judge.ts";
import { resolveBenchmark } from "./registry.ts";
import type { EvalRenderer } from "./renderer.ts";
import { runBenchmark } from "./runner.ts";
import { rendererForModel } from "./session.ts";
import type { SamplingClient, ServiceClient } from "../tinker/clients.ts";

/** Config fields a loop spreads into its schema to name benchmarks as evaluators. */
export const benchmarkEvalFields = inGroup("evaluation", {
  benchmarks: z
    .array(z.string())
    .default([])
    .describe(`Benchmarks evaluated every eval_every steps, e.g. benchmarks='["arithmetic","gsm8k"]' (see cookbook eval --help)`),
  infrequent_benchmarks: z.array(z.string()).default([]).describe("Benchmarks evaluated every infrequent_eval_every steps"),
  benchmark_config: BenchmarkConfigSchema.partial()
    .default({})
    .describe("BenchmarkConfig overrides for inline benchmarks, e.g. benchmark_config.max_examples=64"),
});

export interface BenchmarkEvaluatorOptions {
  overrides?: Partial<BenchmarkConfigOverrides>;
  /** Chat format; default: the sampler's base model's recommended renderer. */
  renderer?: EvalRenderer;
  rendererName?: string | null;
  judge?: LLMJudge;
  contextWindow?: number;
}

export class BenchmarkEvaluator implements SamplingClientEvaluator {
  readonly kind = "sampling_client" as const;
  readonly name: string;
  private examples: Promise<readonly (EvalExample | NllExample)[]> | null = null;
  private renderer: Promise<EvalRenderer> | null;

  constructor(
    readonly benchmark: Benchmark,
    readonly options: BenchmarkEvaluatorOptions = {},
  ) {
    this.name = `test/${benchmark.name}`;
    this.renderer = options.renderer !== undefined ? Promise.resolve(options.renderer) : null;
  }

  async evaluate(samplingClient: SamplingClient): Promise<EvalMetrics> {
    this.examples ??= this.benchmark.load();
    this.renderer ??= rendererForModel(samplingClient.baseModel, this.options.rendererName ?? null);
    const result = await runBenchmark({
      benchmark: this.benchmark,
      config: resolveBenchmarkConfig(this.benchmark.defaults, this.options.overrides ?? {}),
      samplingClient,
      renderer: await this.renderer,
      examples: await this.examples,
      ...(this.options.judge !== undefined ? { judge: this.options.judge } : {}),
      ...(this.options.contextWindow !== undefined ? { contextWindow: this.options.contextWindow } : {}),
    });
    const out: EvalMetrics = {};
    for (const [k, v] of Object.entries(result.metrics)) out[`${this.name}/${k}`] = v;
    return out;
  }
}

/** Benchmark names (`gsm8k`, `arithmetic:9`, `qa:file.jsonl`) → evaluators the loops run. */
export function benchmarkEvaluators(specs: readonly string[], options: BenchmarkEvaluatorOptions = {}): BenchmarkEvaluator[] {
  const evaluators = specs.map((spec) => new BenchmarkEvaluator(resolveBenchmark(spec), options));
  const names = evaluators.map((e) => e.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup !== undefined) throw new Error(`benchmark ${dup.slice(5)} is named twice in the evaluator list`);
  return evaluators;
}

/** The loop config fields benchmarkEvaluatorsFromConfig reads. */
export interface BenchmarkEvalConfig {
  model_name: string;
  renderer_name?: string | null;
  benchmarks: readonly string[];
  infrequent_benchmarks: readonly string[];
  benchmark_config: Partial<BenchmarkConfigOverrides>;
}

/**
 * The evaluators a loop's `benchmarks` / `infrequent_benchmarks` name (both empty: none, and
 * nothing is asked of the service). max_tokens is capped by the model's context window when the
 * service reports it.
 */
export async function benchmarkEvaluatorsFromConfig(
  config: BenchmarkEvalConfig,
  service?: ServiceClient,
): Promise<{ evaluators: BenchmarkEvaluator[]; infrequent: BenchmarkEvaluator[] }> {
  if (config.benchmarks.length === 0 && config.infrequent_benchmarks.length === 0) return { evaluators: [], infrequent: [] };
  const caps = service === undefined ? null : await service.getServerCapabilities().catch(() => null);
  const contextWindow = caps?.supported_models.find((m) => m.model_name === config.model_name)?.max_context_length;
  const options: BenchmarkEvaluatorOptions = {
    overrides: config.benchmark_config,
    rendererName: config.renderer_name ?? null,
    ...(contextWindow !== undefined ? { contextWindow } : {}),
  };
  return { evaluators: benchmarkEvaluators(config.benchmarks, options), infrequent: benchmarkEvaluators(config.infrequent_benchmarks, options) };
}
