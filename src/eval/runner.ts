// Runs one benchmark against a sampler: examples sampled `concurrency` at a time, each with a
// seed derived from (config seed, example id) so the tokens drawn do not depend on order,
// concurrency or interruptions; every finished example is appended to the store at once, and a
// rerun skips what is already there. Metrics are computed from the stored records, so a resumed
// run reports exactly what an uninterrupted one would.
import { getTextContent } from "../renderers/content.ts";
import { stringSeed } from "../random/seeds.ts";
import type { SamplingClient } from "../tinker/clients.ts";
import { modelInputLength } from "../tinker/modelInput.ts";
import type { Benchmark, EvalExample, GenerationBenchmark, NllExample, ResolvedBenchmarkConfig } from "./benchmark.ts";
import type { LLMJudge } from "./judge.ts";
import { meanPassAtK, reportedKs } from "./passAtK.ts";
import type { EvalRenderer } from "./renderer.ts";
import { finishedExamples, type SampleRecord, type TrajectoryRecord } from "./store.ts";
import { mapWithConcurrency } from "../async/concurrency.ts";

/** Where finished examples go and come back from (the eval store, or memory for inline evals). */
export interface TrajectorySink {
  readFinished(): TrajectoryRecord[];
  append(record: TrajectoryRecord): void;
}

export class MemorySink implements TrajectorySink {
  readonly records: TrajectoryRecord[] = [];
  readFinished(): TrajectoryRecord[] {
    return this.records;
  }
  append(record: TrajectoryRecord): void {
    this.records.push(record);
  }
}

export interface ProgressUpdate {
  benchmark: string;
  done: number;
  total: number;
  /** Examples reused from an earlier, interrupted run. */
  reused: number;
  /** Mean correctness so far (NLL benchmarks: mean NLL so far). */
  score: number;
  errors: number;
}

export interface RunBenchmarkOptions {
  benchmark: Benchmark;
  config: ResolvedBenchmarkConfig;
  samplingClient: SamplingClient;
  renderer: EvalRenderer;
  sink?: TrajectorySink;
  /** Replaces the benchmark's grader for open-ended (judgeable) benchmarks. */
  judge?: LLMJudge;
  /** Model context window: max_tokens shrinks so prompt + response fit. */
  contextWindow?: number;
  onProgress?: (update: ProgressUpdate) => void;
  /** Examples already loaded (saves reloading a dataset for every inline evaluation). */
  examples?: readonly (EvalExample | NllExample)[];
}

export interface BenchmarkRunResult {
  benchmark: string;
  metrics: Record<string, number>;
  records: TrajectoryRecord[];
  reused: number;
}

/** FNV-1a of a string: a stable per-example seed component. */
/** A 31-bit seed from the run seed and an example id. */
export const exampleSeed = stringSeed;

function withTimeout<T>(promise: Promise<T>, seconds: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${seconds}s`)), seconds * 1000);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function lastUserText(example: EvalExample): string {
  for (let i = example.prompt.length - 1; i >= 0; i--) if (example.prompt[i]!.role === "user") return getTextContent(example.prompt[i]!);
  return "";
}

async function sampleExample(options: RunBenchmarkOptions, benchmark: GenerationBenchmark, example: EvalExample): Promise<SampleRecord[]> {
  const { config, samplingClient, renderer } = options;
  const prompt = renderer.buildGenerationPrompt(example.prompt);
  let maxTokens = config.max_tokens;
  if (options.contextWindow !== undefined) {
    maxTokens = Math.min(maxTokens, options.contextWindow - modelInputLength(prompt));
    if (maxTokens < 1) throw new Error(`prompt of ${modelInputLength(prompt)} tokens fills the context window (${options.contextWindow})`);
  }
  const response = await samplingClient.sample(prompt, config.num_samples, {
    stop: renderer.getStopSequences(),
    max_tokens: maxTokens,
    temperature: config.temperature,
    seed: exampleSeed(config.seed, example.id),
  });
  if (response.sequences.length !== config.num_samples) {
    throw new Error(`sampler returned ${response.sequences.length} sequences for ${config.num_samples} requested`);
  }
  const judge = benchmark.judgeable === true ? options.judge : undefined;
  return Promise.all(
    response.sequences.map(async (seq): Promise<SampleRecord> => {
      const text = getTextContent(renderer.parseResponse(seq.tokens).message);
      const base = { response: text, stop_reason: seq.stop_reason, num_tokens: seq.tokens.length };
      if (judge !== undefined) {
        const verdict = await judge.judge(lastUserText(example), example.reference, text);
        return { ...base, extracted: null, correct: verdict.correct, score: verdict.score, judge_explanation: verdict.explanation };
      }
      const grade = await benchmark.grade(text, example);
      return { ...base, extracted: grade.extracted, correct: grade.correct, ...(grade.details !== undefined ? { details: grade.details } : {}) };
    }),
  );
}

async function scoreNll(options: RunBenchmarkOptions, example: NllExample): Promise<{ sum: number; weight: number }> {
  const build = options.renderer.buildSupervisedExamples;
  if (build === undefined) throw new Error("NLL benchmarks need a renderer with buildSupervisedExamples");
  let sum = 0;
  let weight = 0;
  for (const sup of build.call(options.renderer, example.messages, "all_assistant_messages")) {
    const logprobs = await options.samplingClient.computeLogprobs(sup.modelInput);
    if (logprobs.length !== sup.weights.length) throw new Error(`computeLogprobs returned ${logprobs.length} values for ${sup.weights.length} tokens`);
    for (let i = 0; i < logprobs.length; i++) {
      const w = sup.weights[i]!;
      const lp = logprobs[i];
      if (w === 0 || lp === null || lp === undefined) continue;
      sum -= lp * w;
      weight += w;
    }
  }
  return { sum, weight };
}

function sampleAccuracy(r: TrajectoryRecord): number {
  if (r.error !== undefined || r.samples.length === 0) return 0;
  return r.samples.filter((s) => s.correct).length / r.samples.length;
}

/** The metrics of a benchmark from its records (one per example, in example order). */
export function computeBenchmarkMetrics(
  benchmark: Benchmark,
  records: readonly TrajectoryRecord[],
  numSamples: number,
  groups?: ReadonlyMap<string, string>,
): Record<string, number> {
  const n = records.length;
  const errors = records.filter((r) => r.error !== undefined).length;
  if (benchmark.kind === "nll") {
    const ok = records.filter((r) => r.error === undefined);
    const sum = ok.reduce((a, r) => a + (r.nll_sum ?? 0), 0);
    const weight = ok.reduce((a, r) => a + (r.nll_weight ?? 0), 0);
    return { nll: weight > 0 ? sum / weight : Number.NaN, num_tokens: weight, num_examples: n, errors };
  }
  const metrics: Record<string, number> = {
    accuracy: n > 0 ? records.reduce((a, r) => a + sampleAccuracy(r), 0) / n : 0,
    num_examples: n,
    errors,
  };
  const samples = records.flatMap((r) => r.samples);
  if (samples.length > 0) {
    metrics["extracted_rate"] = samples.filter((s) => s.extracted !== null || s.score !== undefined).length / samples.length;
    metrics["mean_response_tokens"] = samples.reduce((a, s) => a + (s.num_tokens ?? 0), 0) / samples.length;
    const scored = samples.filter((s) => s.score !== undefined);
    if (scored.length > 0) metrics["judge_score"] = scored.reduce((a, s) => a + s.score!, 0) / scored.length;
  }
  if (groups !== undefined && groups.size > 0) {
    const byGroup = new Map<string, number[]>();
    for (const r of records) {
      const g = groups.get(r.example_id);
      if (g === undefined) continue;
      const list = byGroup.get(g) ?? [];
      list.push(sampleAccuracy(r));
      byGroup.set(g, list);
    }
    for (const [g, accs] of [...byGroup].sort(([a], [b]) => a.localeCompare(b))) metrics[`accuracy/${g}`] = accs.reduce((a, b) => a + b, 0) / accs.length;
  }
  if (benchmark.extraMetrics !== undefined) {
    Object.assign(metrics, benchmark.extraMetrics(records.map((r) => (r.error !== undefined ? [] : r.samples.map((s) => s.details)))));
  }
  if (numSamples > 1) {
    // Failed examples count as 0 correct out of num_samples.
    const perExample = records.map((r) => ({ n: numSamples, c: r.error !== undefined ? 0 : r.samples.filter((s) => s.correct).length }));
    for (const k of reportedKs(numSamples)) metrics[`pass@${k}`] = meanPassAtK(perExample, k);
  }
  return metrics;
}

function promptOf(item: EvalExample | NllExample): { role: string; content: unknown }[] {
  return ("prompt" in item ? item.prompt : item.messages).map((m) => ({ role: m.role, content: m.content }));
}

export async function runBenchmark(options: RunBenchmarkOptions): Promise<BenchmarkRunResult> {
  const { benchmark, config } = options;
  const sink = options.sink ?? new MemorySink();
  let examples: readonly (EvalExample | NllExample)[] = options.examples ?? (await benchmark.load());
  if (config.max_examples !== null) examples = examples.slice(0, config.max_examples);
  const ids = new Set<string>();
  for (const e of examples) {
    if (ids.has(e.id)) throw new Error(`benchmark ${benchmark.name}: two examples have id ${JSON.stringify(e.id)}; ids must be unique for resume`);
    ids.add(e.id);
  }
  const done = finishedExamples(sink.readFinished());
  const byId = new Map<string, TrajectoryRecord>();
  for (const e of examples) {
    const prev = done.get(e.id);
    if (prev !== undefined) byId.set(e.id, prev);
  }
  const reused = byId.size;
  const todo = examples.map((e, index) => ({ e, index })).filter(({ e }) => !byId.has(e.id));
  let scoreSum = 0;
  let errors = 0;
  for (const r of byId.values()) scoreSum += benchmark.kind === "nll" ? (r.nll_sum ?? 0) / Math.max(1, r.nll_weight ?? 0) : sampleAccuracy(r);
  const report = (): void =>
    options.onProgress?.({
      benchmark: benchmark.name,
      done: byId.size,
      total: examples.length,
      reused,
      score: byId.size > 0 ? scoreSum / byId.size : 0,
      errors,
    });
  report();
  await mapWithConcurrency(todo, Math.max(1, config.concurrency), async ({ e, index }) => {
    const record: TrajectoryRecord = { example_id: e.id, index, prompt: promptOf(e), reference: "reference" in e ? e.reference : "", samples: [] };
    try {
      if (benchmark.kind === "nll") {
        const { sum, weight } = await withTimeout(scoreNll(options, e as NllExample), config.timeout_seconds, `example ${e.id}`);
        record.nll_sum = sum;
        record.nll_weight = weight;
        scoreSum += weight > 0 ? sum / weight : 0;
      } else {
        record.samples = await withTimeout(sampleExample(options, benchmark, e as EvalExample), config.timeout_seconds, `example ${e.id}`);
        scoreSum += sampleAccuracy(record);
      }
    } catch (err) {
      record.error = (err as Error).message;
      errors += 1;
    }
    sink.append(record);
    byId.set(e.id, record);
    report();
  });
  const records = examples.map((e) => byId.get(e.id)!);
  const groups = new Map<string, string>();
  for (const e of examples) if ("group" in e && e.group !== undefined) groups.set(e.id, e.group);
  return { benchmark: benchmark.name, metrics: computeBenchmarkMetrics(benchmark, records, config.num_samples, groups), records, reused };
}
