import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { iterationForStep, listIterations, normalizeTranscript, readTrainingExamples, readTranscripts, withGroupAdvantages } from "../../src/runs/index.ts";
import { tempDir } from "./helpers.ts";

test("iterations are listed in order with their summary files, and steps map to iterations", () => {
  const dir = tempDir();
  for (const it of [3, 0, 10]) {
    const idir = join(dir, `iteration_${String(it).padStart(6, "0")}`);
    mkdirSync(idir);
    writeFileSync(join(idir, "train_rollout_summaries.jsonl"), "");
    if (it === 10) writeFileSync(join(idir, "eval_test_rollout_summaries.jsonl"), "");
  }
  mkdirSync(join(dir, "iteration_x"));
  const its = listIterations(dir);
  assert.deepEqual(
    its.map((i) => i.iteration),
    [0, 3, 10],
  );
  assert.deepEqual(its[2].summaries, ["train", "eval_test"]);
  assert.equal(iterationForStep(its, 5)?.iteration, 3);
  assert.equal(iterationForStep(its, 10)?.iteration, 10);
  assert.deepEqual(listIterations(join(dir, "missing")), []);
});

test("records are read tolerantly and get group advantages when they have none", () => {
  const dir = tempDir();
  const idir = join(dir, "iteration_000001");
  mkdirSync(idir);
  const lines = [
    { group_idx: 0, traj_idx: 0, total_reward: 1, steps: [{ reward: 1 }] },
    { group_idx: 0, traj_idx: 1, total_reward: 0 },
    { group_idx: 1, traj_idx: 0, total_reward: 0.5, advantage: 0.25, tags: ["a", 3] },
  ];
  writeFileSync(join(idir, "train_rollout_summaries.jsonl"), lines.map((l) => JSON.stringify(l)).join("\n") + "\n{torn");
  const recs = withGroupAdvantages(readTranscripts(dir, 1));
  assert.equal(recs.length, 3);
  assert.deepEqual(
    recs.map((r) => r.advantage),
    [0.5, -0.5, 0.25],
  );
  assert.deepEqual(recs[2].tags, ["a"]);
  assert.equal(recs[0].steps[0].step_idx, 0);
  assert.equal(recs[1].prompt, null);
  assert.deepEqual(readTranscripts(dir, 2), []);
  assert.ok(Number.isNaN(normalizeTranscript({}).total_reward));
});

test("training examples are read from train_examples.jsonl", () => {
  const dir = tempDir();
  writeFileSync(join(dir, "train_examples.jsonl"), JSON.stringify({ step: 2, segments: [{ text: "hi", weight: 1 }, { text: 5 }] }) + "\n");
  assert.deepEqual(readTrainingExamples(dir), [
    {
      step: 2,
      segments: [
        { text: "hi", weight: 1 },
        { text: "", weight: 0 },
      ],
    },
  ]);
  assert.deepEqual(readTrainingExamples(join(dir, "nope")), []);
});
