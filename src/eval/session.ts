// One evaluation of a model on several benchmarks, recorded in the eval store: picks the
// sampler (base model, tinker:// checkpoint, or a training run directory's newest sampler
// checkpoint), the tokenizer and renderer of its base model, then runs each benchmark,
// resuming an unfinished run with the same model and config when there is one.
import { createHash } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { resolveRendererName } from "../modelInfo.ts";
import { getRenderer } from "../renderers/registry.ts";
import { readCheckpoints } from "../runs/checkpoints.ts";
import type { SamplingClient, ServiceClient } from "../tinker/clients.ts";
import { isTinkerPath } from "../tinker/paths.ts";
import { getTokenizer } from "../tokenizers/index.ts";
import { resolveBenchmarkConfig, type Benchmark, type BenchmarkConfigOverrides, type LoadOptions, type ResolvedBenchmarkConfig } from "./benchmark.ts";
import type { LLMJudge } from "./judge.ts";
import { resolveBenchmark } from "./registry.ts";
import type { EvalRenderer } from "./renderer.ts";
import { runBenchmark, type ProgressUpdate } from "./runner.ts";
import type { EvalStore, EvalRunMetadata } from "./store.ts";

export class EvalTargetError extends Error {
  override name = "EvalTargetError";
}

export interface EvalTarget {
  /** As the user wrote it. */
  model: string;
  /** tinker:// sampler (or state) path, or null for a base model. */
  modelPath: string | null;
  baseModel: string | null;
  sourceRun: string | null;
  step: number | null;
}

/** A base model name, a tinker:// path, or a training run directory (its newest sampler checkpoint). */
export function resolveEvalTarget(model: string): EvalTarget {
  if (isTinkerPath(model)) return { model, modelPath: model, baseModel: null, sourceRun: null, step: null };
  const dir = resolve(model);
  if (existsSync(dir) && statSync(dir).isDirectory() && existsSync(resolve(dir, "checkpoints.jsonl"))) {
    const records = readCheckpoints(dir).filter((r) => typeof r.sampler_path === "string");
    const last = records.find((r) => r.final === true || r.name === "final") ?? records[records.length - 1];
    if (last === undefined) throw new EvalTargetError(`${dir}/checkpoints.jsonl has no record with a sampler_path to evaluate`);
    const step = typeof last["batch"] === "number" ? last["batch"] : Number.isFinite(Number(last.name)) ? Number(last.name) : null;
    return { model, modelPath: last.sampler_path as string, baseModel: null, sourceRun: dir, step };
  }
  return { model, modelPath: null, baseModel: model, sourceRun: null, step: null };
}

export async function openTargetSampler(service: ServiceClient, target: EvalTarget): Promise<SamplingClient> {
  return target.modelPath !== null
    ? service.createSamplingClient({ modelPath: target.modelPath })
    : service.createSamplingClient({ baseModel: target.baseModel! });
}

export async function rendererForModel(baseModel: string, rendererName: string | null): Promise<EvalRenderer> {
  const tokenizer = await getTokenizer(baseModel);
  return getRenderer(resolveRendererName(baseModel, rendererName), tokenizer);
}

/** Fields that change results (not concurrency or timeouts) plus the model and the benchmark list. */
export function evalConfigKey(
  target: string,
  benchmarks: readonly { spec: string; config: ResolvedBenchmarkConfig }[],
  extra: Record<string, unknown>,
): string {
  const payload = JSON.stringify({
    target,
    benchmarks: benchmarks.map((b) => ({
      spec: b.spec,
      max_examples: b.config.max_examples,
      max_tokens: b.config.max_tokens,
      temperature: b.config.temperature,
      num_samples: b.config.num_samples,
      seed: b.config.seed,
    })),
    extra,
  });
  return createHash("sha256").update(payload).digest("hex").slice(0, 16);
}

export interface EvaluateOptions {
  model: string;
  benchmarks: readonly string[];
  overrides?: Partial<BenchmarkConfigOverrides>;
  service: ServiceClient;
  store: EvalStore;
  rendererName?: string | null;
  /** Use this renderer instead of the base model's (tests, custom chat formats). */
  renderer?: EvalRenderer;
  judge?: LLMJudge;
  /** Describes the judge in the stored config (e.g. its model). */
  judgeName?: string | null;
  /** false: always start a new run. */
  resume?: boolean;
  /** Return the results of an earlier complete, error-free run with the same model and config instead of sampling again. */
  reuseComplete?: boolean;
  runId?: string;
  hub?: LoadOptions["hub"];
  onProgress?: (update: ProgressUpdate) => void;
  onBenchmarkStart?: (benchmark: Benchmark, config: ResolvedBenchmarkConfig) => void;
  now?: () => Date;
}

export interface BenchmarkSummary {
  benchmark: string;
  metrics: Record<string, number>;
  reused: number;
  fromEarlierRun: boolean;
}

export interface EvaluateResult {
  run: EvalRunMetadata;
  resumed: boolean;
  summaries: BenchmarkSummary[];
}

function newRunId(now: Date, model: string): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  const slug = model
    .replace(/^tinker:\/\//, "")
    .replace(/[^A-Za-z0-9_.-]+/g, "_")
    .slice(-40);
  return `${stamp}-${slug}-${createHash("sha256").update(`${model}${now.getTime()}${Math.random()}`).digest("hex").slice(0, 6)}`;
}

export async function evaluateModel(options: EvaluateOptions): Promise<EvaluateResult> {
  const now = options.now ?? (() => new Date());
  if (options.benchmarks.length === 0) throw new EvalTargetError("name at least one benchmark");
  const benches = options.benchmarks.map((spec) => {
    const benchmark = resolveBenchmark(spec);
    return { spec, benchmark, config: resolveBenchmarkConfig(benchmark.defaults, options.overrides ?? {}) };
  });
  const names = benches.map((b) => b.benchmark.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup !== undefined) throw new EvalTargetError(`benchmark ${dup} is named twice`);

  const target = resolveEvalTarget(options.model);
  const extra = { renderer_name: options.rendererName ?? null, judge: options.judgeName ?? null };
  // A checkpoint is keyed by its path, a base model by its name: both known before any sampler opens.
  const configKey = evalConfigKey(target.modelPath ?? target.baseModel!, benches, extra);
  const store = options.store;
  if (options.reuseComplete === true && options.runId === undefined) {
    const done = store.findComplete(configKey);
    if (done !== null) {
      const summaries = names.map((name) => {
        const result = store.readResult(done.run_id, name)!;
        return { benchmark: name, metrics: result.metrics, reused: result.num_examples, fromEarlierRun: true };
      });
      return { run: done, resumed: true, summaries };
    }
  }

  const sampler = await openTargetSampler(options.service, target);
  const baseModel = target.baseModel ?? sampler.baseModel;
  const renderer = options.renderer ?? (await rendererForModel(baseModel, options.rendererName ?? null));
  const caps = await options.service.getServerCapabilities().catch(() => null);
  const contextWindow = caps?.supported_models.find((m) => m.model_name === baseModel)?.max_context_length;

  let run = options.resume === false ? null : options.runId !== undefined ? store.readMetadata(options.runId) : store.findResumable(configKey);
  const resumed = run !== null;
  if (run === null) {
    const created = now();
    run = store.createRun(
      {
        run_id: options.runId ?? newRunId(created, options.model),
        created_at: created.toISOString(),
        model: options.model,
        model_path: target.modelPath,
        base_model: baseModel,
        benchmarks: names,
        config_key: configKey,
        source_run: target.sourceRun,
        step: target.step,
      },
      { benchmarks: Object.fromEntries(benches.map((b) => [b.benchmark.name, { spec: b.spec, ...b.config }])), ...extra },
    );
  } else {
    run = { ...run, status: "running", updated_at: now().toISOString() };
    store.writeMetadata(run);
  }
  const runId = run.run_id;
  const summaries: BenchmarkSummary[] = [];
  try {
    for (const { benchmark, config } of benches) {
      const earlier = store.readResult(runId, benchmark.name);
      // A finished benchmark is reused unless some examples failed (those are sampled again).
      if (earlier !== null && (earlier.metrics["errors"] ?? 0) === 0) {
        summaries.push({ benchmark: benchmark.name, metrics: earlier.metrics, reused: earlier.num_examples, fromEarlierRun: true });
        continue;
      }
      options.onBenchmarkStart?.(benchmark, config);
      const startedAt = now().toISOString();
      const examples = await benchmark.load({ hub: options.hub });
      const result = await runBenchmark({
        benchmark,
        config,
        samplingClient: sampler,
        renderer,
        examples,
        ...(options.judge !== undefined ? { judge: options.judge } : {}),
        ...(contextWindow !== undefined ? { contextWindow } : {}),
        sink: { readFinished: () => store.readTrajectories(runId, benchmark.name), append: (r) => store.appendTrajectory(runId, benchmark.name, r) },
        ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
      });
      store.writeResult({
        benchmark: benchmark.name,
        run_id: runId,
        model: options.model,
        model_path: target.modelPath,
        base_model: baseModel,
        metrics: result.metrics,
        num_examples: result.records.length,
        config: { ...config },
        started_at: startedAt,
        finished_at: now().toISOString(),
      });
      summaries.push({ benchmark: benchmark.name, metrics: result.metrics, reused: result.reused, fromEarlierRun: false });
    }
  } catch (err) {
    store.writeMetadata({ ...run, status: "failed", updated_at: now().toISOString() });
    throw err;
  }
  run = { ...run, status: "complete", updated_at: now().toISOString() };
  store.writeMetadata(run);
  return { run, resumed, summaries };
}
