import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveBenchmarkConfig, type GenerationBenchmark } from "../../src/eval/benchmark.ts";
import { arithmeticBenchmark } from "../../src/eval/benchmarks/arithmetic.ts";
import { chatNllBenchmark, qaJsonlBenchmark } from "../../src/eval/benchmarks/jsonlFiles.ts";
import { LLMJudge, parseJudgeReply } from "../../src/eval/judge.ts";
import { passAtK } from "../../src/eval/passAtK.ts";
import { MemorySink, exampleSeed, runBenchmark } from "../../src/eval/runner.ts";
import type { SamplingClient } from "../../src/tinker/clients.ts";
import type { ModelInput, SampleResponse, SamplingParams } from "../../src/tinker/types.ts";
import { modelInputToInts } from "../../src/tinker/modelInput.ts";
import { FakeSampler, fakeRenderer } from "./fakes.ts";

function tmp(): string {
  return mkdtempSync(join(tmpdir(), "eval-runner-"));
}

/** How many of the first `n` arithmetic examples the fake gets right: wrong iff (seed + i) % 3 == 0. */
async function expectedCorrect(bench: GenerationBenchmark, n: number, seed: number, samples: number): Promise<number[]> {
  const examples = (await bench.load()).slice(0, n);
  return examples.map((e) => {
    const s = exampleSeed(seed, e.id);
    let c = 0;
    for (let i = 0; i < samples; i++) if ((s + i) % 3 !== 0) c++;
    return c;
  });
}

test("arithmetic accuracy is the fraction of right answers, and concurrency stays under the limit", async () => {
  const bench = arithmeticBenchmark(null);
  let inFlight = 0;
  let peak = 0;
  const inner = new FakeSampler({ delayMs: 2 });
  const sampler: SamplingClient = {
    baseModel: "fake-model",
    async sample(prompt: ModelInput, n: number, params: SamplingParams): Promise<SampleResponse> {
      inFlight++;
      peak = Math.max(peak, inFlight);
      try {
        return await inner.sample(prompt, n, params);
      } finally {
        inFlight--;
      }
    },
    computeLogprobs: (p) => inner.computeLogprobs(p),
  };
  const config = resolveBenchmarkConfig(bench.defaults, { max_examples: 30, concurrency: 4 });
  const result = await runBenchmark({ benchmark: bench, config, samplingClient: sampler, renderer: fakeRenderer });
  const expected = await expectedCorrect(bench, 30, 0, 1);
  assert.equal(result.metrics["num_examples"], 30);
  assert.equal(result.metrics["accuracy"], expected.reduce((a, b) => a + b, 0) / 30);
  assert.ok(expected.some((c) => c === 0) && expected.some((c) => c === 1), "the fake must get some right and some wrong");
  assert.ok(peak <= 4 && peak >= 2, `peak in-flight ${peak}`);
  assert.equal(inner.calls, 30);
  // The prompt carries the one-shot example before the question.
  assert.match(inner.sampledPrompts[0]!, /^user: What is 4 \+ 5\?\nassistant: 9\nuser: What is \d+ \+ \d+\?\nassistant:$/);
  assert.equal(result.metrics["pass@1"], undefined, "pass@k only with several samples");
});

test("num_samples > 1 reports pass@k with the unbiased estimator per example", async () => {
  const bench = arithmeticBenchmark(null);
  const config = resolveBenchmarkConfig(bench.defaults, { max_examples: 12, num_samples: 4, seed: 7 });
  const result = await runBenchmark({ benchmark: bench, config, samplingClient: new FakeSampler(), renderer: fakeRenderer });
  const correct = await expectedCorrect(bench, 12, 7, 4);
  for (const k of [1, 2, 4]) {
    const want = correct.reduce((a, c) => a + passAtK(4, c, k), 0) / 12;
    assert.ok(Math.abs(result.metrics[`pass@${k}`]! - want) < 1e-12, `pass@${k}: ${result.metrics[`pass@${k}`]} vs ${want}`);
  }
  // With 4 samples, (seed + i) % 3 == 0 hits 1 or 2 samples: every example has 2 or 3 right of 4.
  assert.ok(result.metrics["pass@1"]! > 0.5 && result.metrics["pass@1"]! < 0.75);
  assert.equal(result.metrics["pass@4"], 1);
  assert.equal(result.metrics["accuracy"], result.metrics["pass@1"]);
});

test("a failed example is recorded with its error, counted wrong, and re-sampled on the next run", async () => {
  const bench = arithmeticBenchmark(null);
  const examples = (await bench.load()).slice(0, 5);
  const victim = examples[2]!.prompt[examples[2]!.prompt.length - 1]!.content as string;
  const sink = new MemorySink();
  const config = resolveBenchmarkConfig(bench.defaults, { max_examples: 5 });
  const first = await runBenchmark({ benchmark: bench, config, samplingClient: new FakeSampler({ failOn: victim }), renderer: fakeRenderer, sink });
  assert.equal(first.metrics["errors"], 1);
  assert.match(first.records[2]!.error!, /sampler exploded/);
  const retry = new FakeSampler();
  const second = await runBenchmark({ benchmark: bench, config, samplingClient: retry, renderer: fakeRenderer, sink });
  assert.equal(retry.calls, 1, "only the failed example is sampled again");
  assert.equal(second.metrics["errors"], 0);
  assert.equal(second.reused, 4);
});

test("a per-example timeout becomes an error instead of hanging the run", async () => {
  const bench = arithmeticBenchmark(null);
  const config = resolveBenchmarkConfig(bench.defaults, { max_examples: 2, timeout_seconds: 0.05 });
  const result = await runBenchmark({ benchmark: bench, config, samplingClient: new FakeSampler({ delayMs: 500 }), renderer: fakeRenderer });
  assert.equal(result.metrics["errors"], 2);
  assert.match(result.records[0]!.error!, /timed out after 0.05s/);
  assert.equal(result.metrics["accuracy"], 0);
});

test("NLL benchmark: token-weighted NLL of the assistant turns through computeLogprobs", async () => {
  const dir = tmp();
  const file = join(dir, "chats.jsonl");
  writeFileSync(
    file,
    [
      JSON.stringify({
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: "hello" },
        ],
      }),
      JSON.stringify({
        messages: [
          { role: "user", content: "x" },
          { role: "assistant", content: "yz" },
        ],
      }),
    ].join("\n"),
  );
  const bench = chatNllBenchmark(file);
  assert.equal(bench.name, "nll_chats");
  const result = await runBenchmark({
    benchmark: bench,
    config: resolveBenchmarkConfig(bench.defaults),
    samplingClient: new FakeSampler(),
    renderer: fakeRenderer,
  });
  // Every scored token has logprob log(0.5); assistant tokens: "assistant: hello\n" (17) + "assistant: yz\n" (14).
  assert.ok(Math.abs(result.metrics["nll"]! - Math.log(2)) < 1e-12);
  assert.equal(result.metrics["num_tokens"], 31);
});

test("LLM judge: replaces grading for open-ended benchmarks and reads GRADE/SCORE lines", async () => {
  assert.deepEqual(parseJudgeReply("Matches.\nSCORE: 8\nGRADE: CORRECT"), { correct: true, score: 0.8, explanation: "Matches.\nSCORE: 8\nGRADE: CORRECT" });
  assert.equal(parseJudgeReply("GRADE: CORRECT ... actually GRADE: INCORRECT").correct, false);
  assert.equal(parseJudgeReply("no verdict").correct, false);
  const dir = tmp();
  const file = join(dir, "open.jsonl");
  writeFileSync(
    file,
    [JSON.stringify({ question: "Name a primary colour", answer: "red" }), JSON.stringify({ question: "Capital of France?", answer: "Paris" })].join("\n"),
  );
  const bench = qaJsonlBenchmark(file);
  // The policy always says "blue"; the judge calls it correct only for the colour question.
  const policy: SamplingClient = {
    baseModel: "fake-model",
    sample: async (_p, n) => ({
      sequences: Array.from({ length: n }, () => ({ stop_reason: "stop" as const, tokens: [..."blue"].map((c) => c.charCodeAt(0)) })),
    }),
    computeLogprobs: async () => [],
  };
  const judgePrompts: string[] = [];
  const judgeSampler: SamplingClient = {
    baseModel: "judge",
    async sample(prompt) {
      const text = String.fromCharCode(...modelInputToInts(prompt));
      judgePrompts.push(text);
      const reply = text.includes("primary colour") ? "Blue is a primary colour. SCORE: 9\nGRADE: CORRECT" : "Wrong city. SCORE: 0\nGRADE: INCORRECT";
      return { sequences: [{ stop_reason: "stop" as const, tokens: [...reply].map((c) => c.charCodeAt(0)) }] };
    },
    computeLogprobs: async () => [],
  };
  const judge = new LLMJudge({ samplingClient: judgeSampler, renderer: fakeRenderer });
  const config = resolveBenchmarkConfig(bench.defaults);
  const judged = await runBenchmark({ benchmark: bench, config, samplingClient: policy, renderer: fakeRenderer, judge });
  assert.equal(judged.metrics["accuracy"], 0.5);
  assert.ok(Math.abs(judged.metrics["judge_score"]! - 0.45) < 1e-12);
  assert.match(judgePrompts[0]!, /\[Reference answer\]\n(red|Paris)\n\n\[Model answer\]\nblue/);
  // Off by default: without a judge the math/text grader says "blue" is neither "red" nor "Paris".
  const plain = await runBenchmark({ benchmark: bench, config, samplingClient: policy, renderer: fakeRenderer });
  assert.equal(plain.metrics["accuracy"], 0);
});

test("inline benchmark evaluators report test/<benchmark>/<metric> and run with the loops' runEvaluators", async () => {
  const { benchmarkEvaluators, benchmarkEvalFields } = await import("../../src/eval/inline.ts");
  const { runEvaluators } = await import("../../src/eval/evaluators.ts");
  const { z } = await import("zod");
  const evaluators = benchmarkEvaluators(["arithmetic", "arithmetic:9"], { renderer: fakeRenderer, overrides: { max_examples: 9 } });
  assert.deepEqual(
    evaluators.map((e) => e.name),
    ["test/arithmetic", "test/arithmetic_max9"],
  );
  const sampler = new FakeSampler();
  let snapshots = 0;
  const trainingClient = {
    saveWeightsAndGetSamplingClient: async () => {
      snapshots++;
      return sampler;
    },
  } as unknown as Parameters<typeof runEvaluators>[1];
  const metrics = await runEvaluators(evaluators, trainingClient);
  assert.equal(snapshots, 1, "one sampler snapshot shared by both benchmarks");
  const expected = await expectedCorrect(arithmeticBenchmark(null), 9, 0, 1);
  assert.equal(metrics["test/arithmetic/accuracy"], expected.reduce((a, b) => a + b, 0) / 9);
  assert.equal(metrics["test/arithmetic/num_examples"], 9);
  assert.equal(metrics["test/arithmetic_max9/num_examples"], 9);
  // A second evaluation samples the same seeds: same score for the same weights.
  const again = await runEvaluators(evaluators, trainingClient);
  assert.equal(again["test/arithmetic/accuracy"], metrics["test/arithmetic/accuracy"]);
  assert.throws(() => benchmarkEvaluators(["arithmetic:100", "arithmetic:100"]), /arithmetic_max100 is named twice/);
  const schema = z.object(benchmarkEvalFields);
  assert.deepEqual(schema.parse({}), { benchmarks: [], infrequent_benchmarks: [], benchmark_config: {} });
  assert.equal(schema.parse({ benchmark_config: { max_examples: 5 } }).benchmark_config.max_examples, 5);
});

test("the judge's max_tokens shrinks to fit its context window", async () => {
  const seen: number[] = [];
  const judgeSampler: SamplingClient = {
    baseModel: "judge",
    async sample(_prompt, _n, params) {
      seen.push(params.max_tokens ?? -1);
      return { sequences: [{ stop_reason: "stop" as const, tokens: [..."GRADE: CORRECT"].map((c) => c.charCodeAt(0)) }] };
    },
    computeLogprobs: async () => [],
  };
  const { judgePrompt, DEFAULT_RUBRIC } = await import("../../src/eval/judge.ts");
  const prompt = fakeRenderer.buildGenerationPrompt([{ role: "user", content: judgePrompt(DEFAULT_RUBRIC, "q", "r", "a") }]);
  const used = (prompt.chunks[0] as { tokens: number[] }).tokens.length;
  const roomy = new LLMJudge({ samplingClient: judgeSampler, renderer: fakeRenderer, maxTokens: 100 });
  assert.equal((await roomy.judge("q", "r", "a")).correct, true);
  const tight = new LLMJudge({ samplingClient: judgeSampler, renderer: fakeRenderer, maxTokens: 100, contextWindow: used + 40 });
  await tight.judge("q", "r", "a");
  assert.deepEqual(seen, [100, 40]);
  await assert.rejects(
    new LLMJudge({ samplingClient: judgeSampler, renderer: fakeRenderer, contextWindow: 10 }).judge("q", "r", "a"),
    /fills the judge's context window \(10\)/,
  );
});
