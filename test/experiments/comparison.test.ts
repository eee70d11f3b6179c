// The comparison files from known results: the CSV (a row per model, a column per test set, full
// precision, blanks for failures), the Markdown table (best of each test set in bold: lowest NLL,
// highest accuracy), and the HTML report (charts, the table with the best cells marked, curves of
// every run, escaping, nothing fetched from the network).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bestValues, comparisonCsv, comparisonMarkdown, writeComparisonFiles } from "../../src/experiments/compare.ts";
import { curveMetrics, renderReport } from "../../src/experiments/report/html.ts";
import { niceTicks } from "../../src/experiments/report/svg.ts";
import { readComparison, type BatchState, type Comparison } from "../../src/experiments/state.ts";

const COMPARISON: Comparison = {
  experiment: "demo",
  created_at: "2026-01-02T03:04:05.000Z",
  test_sets: [
    { name: "nll_chats", kind: "nll", metric: "nll", higher_is_better: false },
    { name: "arithmetic", kind: "accuracy", metric: "accuracy", higher_is_better: true },
  ],
  models: [
    { name: "base:tiny-chat", kind: "baseline", base_model: "tiny-chat" },
    { name: "a<b>", kind: "run", base_model: "tiny-chat", run: "a<b>", checkpoint: "tinker://local-1/sampler_weights/final" },
    { name: "c", kind: "run", base_model: "tiny-chat", run: "c", checkpoint: "tinker://local-2/sampler_weights/final" },
  ],
  results: [
    { model: "base:tiny-chat", test_set: "nll_chats", value: 2.5, n: 10 },
    { model: "base:tiny-chat", test_set: "arithmetic", value: 0.4, n: 20 },
    { model: "a<b>", test_set: "nll_chats", value: 1.25, n: 10 },
    { model: "a<b>", test_set: "arithmetic", value: 0.55, n: 20 },
    { model: "c", test_set: "nll_chats", value: null, n: 0, error: "sampler exploded" },
    { model: "c", test_set: "arithmetic", value: 0.55, n: 20 },
  ],
};

test("best values: lowest NLL, highest accuracy, ties shared", () => {
  assert.deepEqual(
    [...bestValues(COMPARISON)],
    [
      ["nll_chats", 1.25],
      ["arithmetic", 0.55],
    ],
  );
});

test("comparison.csv: one row per model, one column per test set, blanks where evaluation failed", () => {
  assert.equal(
    comparisonCsv(COMPARISON),
    [
      "model,kind,base_model,checkpoint,nll_chats/nll,arithmetic/accuracy",
      "base:tiny-chat,baseline,tiny-chat,,2.5,0.4",
      "a<b>,run,tiny-chat,tinker://local-1/sampler_weights/final,1.25,0.55",
      "c,run,tiny-chat,tinker://local-2/sampler_weights/final,,0.55",
      "",
    ].join("\n"),
  );
});

test("comparison.md: the best value of each test set in bold, failures listed", () => {
  assert.equal(
    comparisonMarkdown(COMPARISON),
    [
      "| model | nll_chats (nll ↓) | arithmetic (accuracy ↑) |",
      "|---|---:|---:|",
      "| base:tiny-chat (untrained) | 2.5000 | 40.0% |",
      "| a<b> | **1.2500** | **55.0%** |",
      "| c | — | **55.0%** |",
      "",
      "nll_chats: 10 examples; arithmetic: 20 examples",
      "",
      "Failed:",
      "- c on nll_chats: sampler exploded",
      "",
    ].join("\n"),
  );
});

test("the three comparison files are written and comparison.json reads back", () => {
  const dir = mkdtempSync(join(tmpdir(), "comparison-"));
  try {
    writeComparisonFiles(dir, COMPARISON);
    assert.deepEqual(readComparison(dir), COMPARISON);
    assert.equal(readFileSync(join(dir, "comparison.csv"), "utf8"), comparisonCsv(COMPARISON));
    assert.equal(readFileSync(join(dir, "comparison.md"), "utf8"), comparisonMarkdown(COMPARISON));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const STATE: BatchState = {
  experiment: "demo",
  file: "/x/demo.ts",
  updated_at: "2026-01-02T03:04:05.000Z",
  phase: "done",
  runs: [
    {
      name: "a<b>",
      recipe: "sl_basic",
      overrides: { learning_rate: 0.01, dataset: "/data/persona_train.jsonl" },
      log_path: "/x/demo/a",
      status: "done",
      key_metric: "train_mean_nll",
    },
    { name: "c", recipe: "sl_basic", overrides: {}, log_path: "/x/demo/c", status: "failed", error: "exit code 1: error: out of <memory>" },
  ],
};

const rows = (n: number, scale: number) =>
  Array.from({ length: n }, (_, step) => ({
    step,
    train_mean_nll: scale / (step + 1),
    learning_rate: 0.01 * (1 - step / n),
    ...(step % 5 === 0 ? { "test/nll": scale / (step + 2) } : {}),
    progress: (step + 1) / n,
  }));

test("the report: a bar chart per test set, the table with the best cells marked, curves of every run per metric", () => {
  const metrics = new Map([
    ["a<b>", rows(30, 4)],
    ["c", rows(12, 6)],
  ]);
  const html = renderReport({ state: STATE, comparison: COMPARISON, metrics, description: "two runs & a baseline", generatedAt: "now" });
  assert.match(html, /^<!doctype html>/);
  assert.doesNotMatch(html, /<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/, "self-contained: no script, nothing fetched");
  assert.doesNotMatch(html, /a<b>|out of <memory>/, "names and errors are escaped");
  assert.match(html, /two runs &amp; a baseline/);
  // One bar chart per test set, one bar per model (the failed evaluation has none).
  const bars = [...html.matchAll(/<svg[^>]*class="chart bar-chart" data-test-set="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(bars, ["nll_chats", "arithmetic"]);
  assert.equal([...html.matchAll(/<rect class="bar/g)].length, 5);
  assert.equal([...html.matchAll(/<rect class="bar best"/g)].length, 3, "a<b> on both, c ties on arithmetic");
  // The table: best cells highlighted, the baseline marked untrained.
  assert.equal([...html.matchAll(/<td class="num best"/g)].length, 3);
  assert.match(html, /base:tiny-chat <span class="tag">untrained<\/span>/);
  // Curves: one chart per chosen metric, a line per run in each.
  assert.deepEqual(curveMetrics(metrics), ["train_mean_nll", "test/nll", "learning_rate"]);
  const curves = [...html.matchAll(/<svg[^>]*class="chart line-chart" data-metric="([^"]+)"[\s\S]*?<\/svg>/g)];
  assert.deepEqual(
    curves.map((m) => m[1]),
    ["train_mean_nll", "test/nll", "learning_rate"],
  );
  for (const c of curves) assert.equal([...c[0].matchAll(/<path class="series"/g)].length, 2, c[1]);
  assert.match(html, /<span class="status" style="background:#D55E00">failed<\/span><div class="error">exit code 1: error: out of &lt;memory&gt;<\/div>/);
  assert.match(html, /train_mean_nll 0\.1333/, "the key metric's last value (4 / 30)");
});

test("the report before any evaluation says so and still draws the curves", () => {
  const html = renderReport({ state: { ...STATE, phase: "training" }, metrics: new Map([["a<b>", rows(3, 1)]]), generatedAt: "now" });
  assert.match(html, /Not evaluated yet/);
  assert.equal([...html.matchAll(/class="chart bar-chart"/g)].length, 0);
  assert.ok([...html.matchAll(/class="chart line-chart"/g)].length > 0);
});

test("axis ticks are round numbers covering the range", () => {
  assert.deepEqual(niceTicks(0, 1, 5), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  assert.deepEqual(niceTicks(3, 97, 5), [20, 40, 60, 80]);
  assert.deepEqual(niceTicks(2, 2), [2]);
});
