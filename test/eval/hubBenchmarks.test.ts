// The cookbook's offline benchmarks, loaded from small parquet files with the real datasets'
// column names and types (local folders in the hub's layout, or the HF cache by hub id), run
// end to end through runBenchmark with scripted answers: known-right answers score 1, known-wrong 0.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveBenchmark } from "../../src/eval/registry.ts";
import { resolveBenchmarkConfig, type GenerationBenchmark } from "../../src/eval/benchmark.ts";
import { runBenchmark } from "../../src/eval/runner.ts";
import { formatMetricValue } from "../../src/eval/summary.ts";
import { fakeRenderer } from "./fakes.ts";
import { scriptedSampler, userText, writeParquet } from "./parquetFixtures.ts";

const tmp = (): string => mkdtempSync(join(tmpdir(), "hub-bench-"));

async function run(bench: GenerationBenchmark, answer: (user: string) => string) {
  const config = resolveBenchmarkConfig(bench.defaults, { concurrency: 2 });
  return runBenchmark({ benchmark: bench, config, samplingClient: scriptedSampler(answer), renderer: fakeRenderer });
}

test("aime_2025 by hub id from the HF cache (MathArena columns); prompt and integer grading", async () => {
  const cache = tmp();
  const repo = join(cache, "datasets--MathArena--aime_2025");
  mkdirSync(join(repo, "refs"), { recursive: true });
  writeFileSync(join(repo, "refs", "main"), "c0ffee");
  writeParquet(join(repo, "snapshots", "c0ffee", "data", "train-00000-of-00001.parquet"), [
    { name: "problem_idx", type: "int64", data: [1, 2, 3] },
    { name: "problem", type: "string", data: ["Find 6 times 7.", "Find 2 to the 10th modulo 1000.", "Find 0 plus 5."] },
    { name: "answer", type: "int64", data: [42, 24, 5] },
  ]);
  const bench = resolveBenchmark("aime_2025") as GenerationBenchmark;
  const examples = await bench.load({ hub: { env: { HF_HUB_CACHE: cache, HF_HUB_OFFLINE: "1" } } });
  assert.deepEqual(
    examples.map((e) => [e.id, e.reference]),
    [
      ["1", "42"],
      ["2", "24"],
      ["3", "5"],
    ],
  );
  assert.equal(
    userText(examples[0]!.prompt),
    "Find 6 times 7.\n\nThis is an AIME problem. The answer is an integer from 000 to 999. Show your work step by step, then put your final answer in \\boxed{}.",
  );
  assert.equal(resolveBenchmarkConfig(bench.defaults).max_tokens, 32768);
  assert.equal((await bench.grade("so \\boxed{042}", examples[0]!)).correct, true, "leading zeros");
  assert.equal((await bench.grade("\\boxed{24}", examples[0]!)).correct, false);
  // The same benchmark from a local file, run end to end: two right, one wrong.
  const local = resolveBenchmark(`aime_2025:${join(repo, "snapshots", "c0ffee", "data", "train-00000-of-00001.parquet")}`) as GenerationBenchmark;
  const result = await run(local, (u) => (u.startsWith("Find 6") ? "6*7 = \\boxed{42}" : u.startsWith("Find 2") ? "The answer is 24." : "\\boxed{6}"));
  assert.equal(result.metrics["accuracy"], 2 / 3);
});

test("aime_2024 reads HuggingFaceH4/aime_2024's columns (id, problem, answer as text)", async () => {
  const dir = tmp();
  writeParquet(join(dir, "data", "train-00000-of-00001.parquet"), [
    { name: "id", type: "int64", data: [60, 61] },
    { name: "problem", type: "string", data: ["P1", "P2"] },
    { name: "solution", type: "string", data: ["...", "..."] },
    { name: "answer", type: "string", data: ["204", "025"] },
    { name: "url", type: "string", data: ["u", "u"] },
    { name: "year", type: "int64", data: [2024, 2024] },
  ]);
  const bench = resolveBenchmark(`aime_2024:${dir}`) as GenerationBenchmark;
  const result = await run(bench, (u) => (u.startsWith("P1") ? "\\boxed{204}" : "\\boxed{26}"));
  assert.deepEqual(
    result.records.map((r) => r.reference),
    ["204", "25"],
  );
  assert.equal(result.metrics["accuracy"], 0.5);
});

test("math500: the cookbook's prompt; reference from `answer`, else the boxed answer of `solution`", async () => {
  const dir = tmp();
  writeParquet(join(dir, "test.parquet"), [
    { name: "problem", type: "string", data: ["Simplify $\\sqrt{12}$.", "Compute $1/2+1/4$."] },
    { name: "solution", type: "string", data: ["$\\sqrt{12}=\\boxed{2\\sqrt3}$", "It is $\\boxed{\\frac34}$."] },
    { name: "answer", type: "string", data: ["2\\sqrt{3}", null] },
    { name: "subject", type: "string", data: ["Algebra", "Prealgebra"] },
    { name: "level", type: "int64", data: [2, 1] },
    { name: "unique_id", type: "string", data: ["test/algebra/1.json", "test/prealgebra/2.json"] },
  ]);
  const bench = resolveBenchmark(`math500:${dir}`) as GenerationBenchmark;
  const examples = await bench.load();
  assert.equal(userText(examples[0]!.prompt), "Simplify $\\sqrt{12}$. Put your final answer in \\boxed{}.");
  assert.deepEqual(
    examples.map((e) => e.reference),
    ["2\\sqrt{3}", "\\frac34"],
  );
  const result = await run(bench, (u) => (u.startsWith("Simplify") ? "\\boxed{\\sqrt{12}}" : "\\boxed{0.7}"));
  assert.equal(result.metrics["accuracy"], 0.5, "√12 = 2√3 is right; 0.7 ≠ 3/4");
});

test("mmlu_pro: options list, answer_index, (A)…(J) prompt, accuracy per category", async () => {
  const dir = tmp();
  const options = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];
  writeParquet(join(dir, "data", "test-00000-of-00001.parquet"), [
    { name: "question_id", type: "int64", data: [70, 71, 72] },
    { name: "question", type: "string", data: ["Which is nine?", "Which is one?", "Which is two?"] },
    { name: "options", type: "string_list", data: [options, options, options.slice(0, 4)] },
    { name: "answer", type: "string", data: ["J", "B", "C"] },
    { name: "answer_index", type: "int64", data: [9, 1, 2] },
    { name: "cot_content", type: "string", data: ["", "", ""] },
    { name: "category", type: "string", data: ["math", "math", "law"] },
    { name: "src", type: "string", data: ["ori", "ori", "ori"] },
  ]);
  const bench = resolveBenchmark(`mmlu_pro:${dir}`) as GenerationBenchmark;
  const examples = await bench.load();
  assert.deepEqual(
    examples.map((e) => [e.id, e.reference, e.group]),
    [
      ["70", "J", "math"],
      ["71", "B", "math"],
      ["72", "C", "law"],
    ],
  );
  assert.match(
    userText(examples[0]!.prompt),
    /^Which is nine\?\n\n\(A\) zero\n\(B\) one[\s\S]*\(J\) nine\n\nAnswer with just the letter \(A, B, C, D, etc\.\)\.$/,
  );
  const result = await run(bench, (u) => (u.startsWith("Which is nine") ? "The answer is (J)." : u.startsWith("Which is one") ? "A" : "\\boxed{C}"));
  assert.equal(result.metrics["accuracy"], 2 / 3);
  assert.equal(result.metrics["accuracy/math"], 0.5);
  assert.equal(result.metrics["accuracy/law"], 1);
});

test("mmlu_redux: subject configs, rows not marked ok are dropped, accuracy per subject", async () => {
  const dir = tmp();
  const write = (subject: string, questions: string[], answers: number[], errors: (string | null)[]) =>
    writeParquet(join(dir, subject, "test-00000-of-00001.parquet"), [
      { name: "question", type: "string", data: questions },
      { name: "choices", type: "string_list", data: questions.map(() => ["red", "green", "blue", "black"]) },
      { name: "answer", type: "int64", data: answers },
      { name: "error_type", type: "string", data: errors },
      { name: "source", type: "string", data: questions.map(() => "x") },
      { name: "correct_answer", type: "string", data: questions.map(() => null) },
      { name: "potential_reason", type: "string", data: questions.map(() => null) },
    ]);
  write("anatomy", ["Sky?", "Grass?", "Broken?"], [2, 1, 0], ["ok", "ok", "wrong_groundtruth"]);
  write("virology", ["Coal?"], [3], ["ok"]);
  const bench = resolveBenchmark(`mmlu_redux:${dir}`) as GenerationBenchmark;
  const examples = await bench.load();
  assert.deepEqual(
    examples.map((e) => [e.id, e.reference, e.group]),
    [
      ["anatomy/0", "C", "anatomy"],
      ["anatomy/1", "B", "anatomy"],
      ["virology/0", "D", "virology"],
    ],
  );
  assert.match(userText(examples[0]!.prompt), /^Sky\?\n\n\(A\) red\n\(B\) green\n\(C\) blue\n\(D\) black\n\nAnswer with just the letter \(A, B, C, or D\)\.$/);
  const result = await run(bench, (u) => (u.startsWith("Sky") ? "Answer: C" : u.startsWith("Grass") ? "Answer: A" : "D"));
  assert.equal(result.metrics["accuracy"], 2 / 3);
  assert.equal(result.metrics["accuracy/anatomy"], 0.5);
  assert.equal(result.metrics["accuracy/virology"], 1);
  assert.equal(formatMetricValue("accuracy/anatomy", result.metrics["accuracy/anatomy"]!), "50.0%");
  assert.equal(formatMetricValue("instruction_loose_accuracy", 0.75), "75.0%");
  await assert.rejects(resolveBenchmark(`mmlu_redux:${tmp()}`).load() as Promise<unknown>, /no MMLU-Redux subject folders/);
});

test("gpqa: options shuffled by a fixed seed (same order every load, correct answer not always A)", async () => {
  const dir = tmp();
  const n = 12;
  const qs = Array.from({ length: n }, (_, i) => `Question ${i}?`);
  writeParquet(join(dir, "gpqa_diamond", "train", "0000.parquet"), [
    { name: "Question", type: "string", data: qs },
    { name: "Correct Answer", type: "string", data: qs.map((_, i) => `right ${i}`) },
    { name: "Incorrect Answer 1", type: "string", data: qs.map((_, i) => `wrong a${i}`) },
    { name: "Incorrect Answer 2", type: "string", data: qs.map((_, i) => `wrong b${i}`) },
    { name: "Incorrect Answer 3", type: "string", data: qs.map((_, i) => `wrong c${i}`) },
    { name: "Record ID", type: "string", data: qs.map((_, i) => `rec${i}`) },
  ]);
  const bench = resolveBenchmark(`gpqa:${dir}`) as GenerationBenchmark;
  const examples = await bench.load();
  const again = await resolveBenchmark(`gpqa:${dir}`).load();
  assert.deepEqual(examples, again, "the shuffle is deterministic");
  assert.ok(new Set(examples.map((e) => e.reference)).size >= 3, `letters used: ${examples.map((e) => e.reference).join("")}`);
  for (const e of examples) assert.equal(e.choices![["A", "B", "C", "D"].indexOf(e.reference)], `right ${e.id.slice(3)}`);
  assert.match(userText(examples[0]!.prompt), /\n\nThink step by step, then give your final answer as a single letter \(A, B, C, or D\)\.$/);
  // Answering with the letter of the "right" option scores 1; always answering A does not.
  const right = await run(bench, (u) => {
    const m = /\(([A-D])\) right/.exec(u);
    return `The answer is ${m![1]}`;
  });
  assert.equal(right.metrics["accuracy"], 1);
  const alwaysA = await run(bench, () => "The answer is A");
  assert.ok(alwaysA.metrics["accuracy"]! < 0.6, `always-A scores ${alwaysA.metrics["accuracy"]}`);
});
