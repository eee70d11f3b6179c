import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { discoverRuns, inferTrainingKind, readLastJsonlRecord } from "../../src/runs/discovery.ts";
import { writeManifest } from "../../src/runs/manifest.ts";
import { tempDir } from "./helpers.ts";

function makeRun(root: string, name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

test("training kind is inferred from config keys", () => {
  assert.equal(inferTrainingKind({ dpo_beta: 0.1, num_epochs: 1 }), "dpo");
  assert.equal(inferTrainingKind({ loss_fn: "ppo" }), "rl");
  assert.equal(inferTrainingKind({ num_epochs: 1 }), "sl");
  assert.equal(inferTrainingKind({ foo: 1 }), undefined);
});

test("discovers the root and its children, with status, recipe, last step and main metrics", () => {
  const root = tempDir();
  writeFileSync(join(root, "config.json"), '{"num_epochs":1}');
  makeRun(root, "sl", {
    "config.json": '{"num_epochs":2,"recipe_name":"sl_basic"}',
    "metrics.jsonl": '{"step":0,"train_mean_nll":2.5}\n{"step":1,"train_mean_nll":2.0,"learning_rate":0.0001}\n{"step":2,"train',
    "checkpoints.jsonl": '{"name":"final","final":true,"state_path":"p"}\n',
  });
  const crashed = makeRun(root, "rl", { "config.json": '{"loss_fn":"importance_sampling"}', "metrics.jsonl": '{"step":5,"env/all/reward/total":0.75}\n' });
  const old = new Date(Date.now() - 10_000).toISOString();
  writeManifest(crashed, {
    recipe: "rl_basic",
    argv: [],
    pid: 2 ** 22 + 12345,
    host: hostname(),
    started_at: old,
    engine: "embedded",
    status: "running",
    heartbeat_at: old,
  });
  makeRun(root, "notes", { "README.md": "not a run" });
  mkdirSync(join(root, "deep", "nested"), { recursive: true });
  writeFileSync(join(root, "deep", "nested", "metrics.jsonl"), "{}\n");

  const runs = discoverRuns(root);
  const byName = Object.fromEntries(runs.map((r) => [r.name, r]));
  assert.deepEqual(Object.keys(byName).sort(), [root.split("/").pop(), "deep/nested", "rl", "sl"].sort(), "a run two levels down is found, named by its path");
  assert.equal(byName.sl.status, "completed");
  assert.equal(byName.sl.recipe, "sl_basic");
  assert.equal(byName.sl.trainingKind, "sl");
  assert.equal(byName.sl.lastStep, 1, "torn final line skipped");
  assert.deepEqual(byName.sl.metrics, { train_mean_nll: 2.0, learning_rate: 0.0001 });
  assert.equal(byName.rl.status, "crashed");
  assert.equal(byName.rl.recipe, "rl_basic");
  assert.equal(byName.rl.trainingKind, "rl");
  assert.deepEqual(byName.rl.metrics, { "env/all/reward/total": 0.75 });
  assert.deepEqual(discoverRuns(join(root, "missing")), []);
});

test("a metrics.jsonl written in the last two minutes without run.json counts as running", () => {
  const root = tempDir();
  makeRun(root, "py", { "metrics.jsonl": '{"step":0}\n' });
  assert.equal(discoverRuns(root)[0].status, "running");
});

test("readLastJsonlRecord reads only the tail, growing the window for long lines", () => {
  const file = join(tempDir(), "m.jsonl");
  const long = "x".repeat(5000);
  writeFileSync(file, `{"step":0}\n{"step":1,"note":"${long}"}\n{"step":2,"no`);
  assert.deepEqual(readLastJsonlRecord(file, 100), { step: 1, note: long });
  assert.equal(readLastJsonlRecord(join(tempDir(), "none.jsonl")), undefined);
});

test("runs nested in a pipeline or a batch are found down to the discovery depth, not below, nor inside a run's own folders", () => {
  const root = tempDir();
  makeRun(root, "rlhf", { "config.json": "{}" });
  makeRun(join(root, "rlhf"), "sft", { "metrics.jsonl": '{"step":0}\n' });
  makeRun(join(root, "rlhf"), "rl", { "metrics.jsonl": '{"step":0}\n' });
  makeRun(join(root, "experiments", "example"), "tiny-arith", { "metrics.jsonl": '{"step":0}\n' });
  makeRun(join(root, "a", "b", "c"), "too-deep", { "metrics.jsonl": '{"step":0}\n' });
  makeRun(join(root, "rlhf", "tensorboard"), "x", { "metrics.jsonl": '{"step":0}\n' });
  // Outside a run those names are ordinary folders: a run may be called "tensorboard".
  makeRun(root, "tensorboard", { "metrics.jsonl": '{"step":0}\n' });
  makeRun(join(root, "checkpoints"), "inner", { "metrics.jsonl": '{"step":0}\n' });
  const names = discoverRuns(root)
    .map((r) => r.name)
    .sort();
  assert.deepEqual(names, ["checkpoints/inner", "experiments/example/tiny-arith", "rlhf", "rlhf/rl", "rlhf/sft", "tensorboard"]);
});
