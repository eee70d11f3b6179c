import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compareByBenchmark, latestEvalScoresForRun, listEvalRuns, readEvalTrajectories } from "../../src/eval/reader.ts";
import { EvalStore } from "../../src/eval/store.ts";

function tmp(): string {
  return mkdtempSync(join(tmpdir(), "eval-reader-"));
}

function addRun(
  store: EvalStore,
  runId: string,
  createdAt: string,
  model: string,
  modelPath: string | null,
  results: Record<string, Record<string, number> | null>,
  sourceRun: string | null = null,
): void {
  store.createRun(
    {
      run_id: runId,
      created_at: createdAt,
      model,
      model_path: modelPath,
      base_model: "tiny-chat",
      benchmarks: Object.keys(results),
      config_key: runId,
      source_run: sourceRun,
      step: 60,
    },
    {},
  );
  for (const [bench, metrics] of Object.entries(results)) {
    store.appendTrajectory(runId, bench, {
      example_id: "b",
      index: 1,
      prompt: [],
      reference: "2",
      samples: [{ response: "2", extracted: "2", correct: true }],
    });
    store.appendTrajectory(runId, bench, {
      example_id: "a",
      index: 0,
      prompt: [],
      reference: "1",
      samples: [{ response: "3", extracted: "3", correct: false }],
    });
    if (metrics !== null)
      store.writeResult({
        benchmark: bench,
        run_id: runId,
        model,
        model_path: modelPath,
        base_model: "tiny-chat",
        metrics,
        num_examples: 2,
        config: {},
        started_at: createdAt,
        finished_at: createdAt,
      });
  }
  if (Object.values(results).every((m) => m !== null)) store.writeMetadata({ ...store.readMetadata(runId)!, status: "complete" });
}

test("the reader lists runs newest first, compares models per benchmark and finds a training run's latest scores", () => {
  const root = tmp();
  const store = new EvalStore(root);
  const trainDir = tmp();
  writeFileSync(join(trainDir, "checkpoints.jsonl"), `${JSON.stringify({ name: "final", sampler_path: "tinker://m/sampler_weights/final", final: true })}\n`);
  addRun(store, "base", "2026-11-23T20:00:00Z", "tiny-chat", null, {
    arithmetic: { accuracy: 0.38, num_examples: 200 },
    nll_chats: { nll: 2.5, num_examples: 10 },
  });
  addRun(store, "trained-old", "2026-11-23T20:30:00Z", "tinker://m/sampler_weights/final", "tinker://m/sampler_weights/final", {
    arithmetic: { accuracy: 0.5, num_examples: 200 },
  });
  addRun(
    store,
    "trained-new",
    "2026-11-23T21:00:00Z",
    trainDir,
    "tinker://m/sampler_weights/final",
    { arithmetic: { accuracy: 0.55, num_examples: 200 }, gsm8k: null },
    trainDir,
  );
  addRun(store, "other", "2026-11-23T21:10:00Z", "tinker://x/sampler_weights/final", "tinker://x/sampler_weights/final", {
    arithmetic: { accuracy: 0.9, num_examples: 200 },
    nll_chats: { nll: 2.0, num_examples: 10 },
  });

  const runs = listEvalRuns(root);
  assert.deepEqual(
    runs.map((r) => r.runId),
    ["other", "trained-new", "trained-old", "base"],
  );
  const newest = runs[1]!;
  assert.equal(newest.status, "running");
  assert.deepEqual(newest.progress, { gsm8k: 2 });
  assert.equal(newest.results["arithmetic"]!["accuracy"], 0.55);

  const cmp = compareByBenchmark(runs);
  assert.deepEqual(
    cmp.map((c) => c.benchmark),
    ["arithmetic", "nll_chats"],
  );
  assert.deepEqual(
    cmp[0]!.entries.map((e) => e.runId),
    ["other", "trained-new", "trained-old", "base"],
  );
  assert.deepEqual(
    cmp[1]!.entries.map((e) => e.runId),
    ["other", "base"],
    "NLL: lower first",
  );

  assert.deepEqual(latestEvalScoresForRun(trainDir, runs), { arithmetic: { metric: "accuracy", value: 0.55, step: 60 } });
  assert.deepEqual(latestEvalScoresForRun(tmp(), runs), {});
  assert.deepEqual(
    readEvalTrajectories(root, "base", "arithmetic").map((r) => r.example_id),
    ["a", "b"],
    "examples in benchmark order",
  );
  assert.deepEqual(listEvalRuns(tmp()), []);
});
