import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";
import { arithmeticBenchmark } from "../../src/eval/benchmarks/arithmetic.ts";
import { gsm8kBenchmark, math500Benchmark } from "../../src/eval/benchmarks/hubMath.ts";
import { multipleChoiceBenchmark, qaJsonlBenchmark } from "../../src/eval/benchmarks/jsonlFiles.ts";
import { resolveBenchmark } from "../../src/eval/registry.ts";
import { resolveBenchmarkConfig } from "../../src/eval/benchmark.ts";

function tmp(): string {
  return mkdtempSync(join(tmpdir(), "eval-bench-"));
}

function parquet(columns: Record<string, string[]>): Uint8Array {
  return new Uint8Array(parquetWriteBuffer({ columnData: Object.entries(columns).map(([name, data]) => ({ name, data, type: "STRING" as const })) }));
}

test("gsm8k reads a local parquet folder in the hub's layout and grades boxed or final numbers", async () => {
  const dir = tmp();
  mkdirSync(join(dir, "main"));
  writeFileSync(
    join(dir, "main", "test-00000-of-00001.parquet"),
    parquet({
      question: ["Tom has 3 apples and buys 4. How many?", "A car costs $1,200 and a bike $300. Total?"],
      answer: ["3 + 4 = <<3+4=7>>7\n#### 7", "1200 + 300 = 1500\n#### 1,500"],
    }),
  );
  const bench = gsm8kBenchmark(dir);
  const examples = await bench.load();
  assert.equal(examples.length, 2);
  assert.deepEqual(
    examples.map((e) => e.reference),
    ["7", "1500"],
  );
  assert.match(
    examples[0]!.prompt[0]!.content as string,
    /^Tom has 3 apples.*\n\nSolve the problem step by step, then write the final answer inside \\boxed\{\}\.$/s,
  );
  assert.equal((await bench.grade("so \\boxed{1,500}", examples[1]!)).correct, true);
  assert.equal((await bench.grade("The total is $1500.", examples[1]!)).correct, true);
  assert.equal((await bench.grade("\\boxed{1,200}", examples[1]!)).correct, false);
  assert.equal(resolveBenchmarkConfig(bench.defaults).temperature, 0.6);
});

test("math500 by hub id comes from the HF cache offline, answers compared after normalisation", async () => {
  const cache = tmp();
  const repo = join(cache, "datasets--HuggingFaceH4--MATH-500");
  mkdirSync(join(repo, "refs"), { recursive: true });
  writeFileSync(join(repo, "refs", "main"), "abc123");
  mkdirSync(join(repo, "snapshots", "abc123"), { recursive: true });
  writeFileSync(
    join(repo, "snapshots", "abc123", "test.parquet"),
    parquet({
      problem: ["Compute $\\frac{2}{4}$.", "Find the angle."],
      answer: ["\\frac{1}{2}", "90^\\circ"],
      unique_id: ["test/algebra/1.json", "test/geometry/2.json"],
    }),
  );
  const bench = math500Benchmark(null);
  const examples = await bench.load({ hub: { env: { HF_HUB_CACHE: cache, HF_HUB_OFFLINE: "1" } } });
  assert.deepEqual(
    examples.map((e) => e.id),
    ["test/algebra/1.json", "test/geometry/2.json"],
  );
  assert.equal((await bench.grade("It is \\boxed{0.5}", examples[0]!)).correct, true);
  assert.equal((await bench.grade("\\boxed{\\dfrac12}", examples[0]!)).correct, true);
  assert.equal((await bench.grade("\\boxed{90}", examples[1]!)).correct, true);
  assert.equal((await bench.grade("\\boxed{2}", examples[0]!)).correct, false);
  // Not cached and offline: the error says where it looked.
  await assert.rejects(
    gsm8kBenchmark(null).load({ hub: { env: { HF_HUB_CACHE: cache, HF_HUB_OFFLINE: "1" } } }),
    /openai\/gsm8k split test not found[\s\S]*offline/,
  );
});

test("arithmetic: held-out pairs by default, every pair for small ranges; ids unique", async () => {
  const full = await arithmeticBenchmark("100").load();
  assert.ok(full.length > 900, `${full.length} held-out pairs`);
  assert.equal(arithmeticBenchmark(null).name, "arithmetic");
  assert.deepEqual(
    (await arithmeticBenchmark(null).load()).map((e) => e.id),
    (await arithmeticBenchmark("9").load()).map((e) => e.id),
    "the default is rl_basic's range, 0..9",
  );
  assert.equal(new Set(full.map((e) => e.id)).size, full.length);
  const small = arithmeticBenchmark("9");
  assert.equal(small.name, "arithmetic_max9");
  assert.equal((await small.load()).length, 100);
  const e = full[0]!;
  const [x, y] = e.id.split("+").map(Number);
  assert.equal(e.reference, String(x! + y!));
  assert.throws(() => arithmeticBenchmark("ten"), /arithmetic:ten: expected a positive integer/);
});

test("multiple-choice JSONL: letter, index or text answers; errors name file and line", async () => {
  const dir = tmp();
  const file = join(dir, "quiz.jsonl");
  writeFileSync(
    file,
    [
      JSON.stringify({ question: "2+2?", choices: ["3", "4", "5"], answer: "B" }),
      JSON.stringify({ question: "Sky?", choices: ["green", "blue"], answer: 1 }),
      JSON.stringify({ question: "Cat says?", choices: ["woof", "meow"], answer: "meow" }),
    ].join("\n"),
  );
  const bench = multipleChoiceBenchmark(file);
  const ex = await bench.load();
  assert.deepEqual(
    ex.map((e) => e.reference),
    ["B", "B", "B"],
  );
  assert.match(ex[0]!.prompt[0]!.content as string, /2\+2\?\n\nA\. 3\nB\. 4\nC\. 5\n\nAnswer with the letter/);
  assert.equal((await bench.grade("Answer: B", ex[0]!)).correct, true);
  assert.equal((await bench.grade("C", ex[0]!)).correct, false);
  const bad = join(dir, "bad.jsonl");
  writeFileSync(bad, `${JSON.stringify({ question: "q", choices: ["a", "b"], answer: "D" })}\n`);
  await assert.rejects(multipleChoiceBenchmark(bad).load(), new RegExp(`${bad}:1: "answer" "D" is not a letter A–B`));
});

test("question/answer JSONL and registry errors", async () => {
  const dir = tmp();
  const file = join(dir, "qa.jsonl");
  writeFileSync(file, `${JSON.stringify({ question: "Half of 3?", answer: "3/2" })}\n\nnot json\n`);
  await assert.rejects(qaJsonlBenchmark(file).load(), new RegExp(`${file}:3: not valid JSON`));
  writeFileSync(file, `${JSON.stringify({ question: "Half of 3?", answer: "3/2" })}\n`);
  const [e] = await qaJsonlBenchmark(file).load();
  assert.equal((await qaJsonlBenchmark(file).grade("That is 1.5", e!)).correct, true);
  assert.equal(resolveBenchmark(`qa:${file}`).name, "qa_qa");
  assert.throws(
    () => resolveBenchmark("gsm9k"),
    /unknown benchmark "gsm9k".*known: arithmetic, gsm8k, math500, aime_2024, aime_2025, aime, aime_2026, mmlu_pro, mmlu_redux, gpqa, ifeval, mbpp, humaneval, livecodebench, qa, mc, nll/,
  );
  assert.throws(() => resolveBenchmark("qa"), /qa needs a file: qa:<path to \.jsonl>/);
});
