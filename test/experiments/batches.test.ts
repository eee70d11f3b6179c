// Reading batches for the Batch screen: listing under several roots with run counts and liveness,
// one batch's runs with their key metric from the run directories, a malformed batch.json named
// as an error, experiment files, and finding the batch a launched file produced.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { batchForFile, experimentsRoots, listBatches, listExperimentFiles, readBatchView, readLaunchLog, runDirOf } from "../../src/experiments/batches.ts";
import { readBatchState, writeBatchState } from "../../src/experiments/state.ts";
import { makeBatch, makeComparison } from "../tui/batchFixtures.ts";
import { appendMetrics, tempRoot } from "../tui/fixtures.ts";

test("listBatches finds batches under every root with run counts; a dead pid is not live", () => {
  const a = join(tempRoot(), "experiments");
  const b = join(tempRoot(), "more");
  const old = makeBatch(a, "old", [{ name: "r1", status: "done", steps: 5 }], { phase: "done" });
  utimesSync(join(old, "batch.json"), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
  makeBatch(
    a,
    "live",
    [
      { name: "r1", status: "done", steps: 5 },
      { name: "r2", status: "running", steps: 2 },
      { name: "r3", status: "queued" },
    ],
    { pid: process.pid },
  );
  makeBatch(b, "gone", [{ name: "r1", status: "running", steps: 2 }], { pid: 2 ** 22 + 12_345 });
  mkdirSync(join(a, "not-a-batch"));
  const batches = listBatches([a, b, join(a, "missing")]);
  assert.deepEqual(batches.map((x) => x.name).sort(), ["gone", "live", "old"]);
  assert.equal(batches.at(-1)!.name, "old", "most recently updated first");
  const live = batches.find((x) => x.name === "live")!;
  assert.equal(live.live, true);
  assert.deepEqual(live.counts, { queued: 1, running: 1, done: 1, failed: 0, stopped: 0 });
  assert.equal(batches.find((x) => x.name === "gone")!.live, false);
  assert.equal(batches.find((x) => x.name === "gone")!.root, b);
});

test("a malformed batch.json is listed with an error naming the file and key", () => {
  const root = join(tempRoot(), "experiments");
  mkdirSync(join(root, "broken"), { recursive: true });
  writeFileSync(
    join(root, "broken", "batch.json"),
    JSON.stringify({
      experiment: "broken",
      file: "x.ts",
      updated_at: "now",
      phase: "training",
      runs: [{ name: "r", recipe: "sl_basic", overrides: {}, log_path: "", status: "sleeping" }],
    }),
  );
  const [listing] = listBatches([root]);
  assert.match(listing!.error!, /broken\/batch\.json: batch state key "runs\.0\.status"/);
  assert.match(readBatchView(join(root, "broken")).error!, /runs\.0\.status/);
});

test("readBatchView gives each run its key metric's latest value and recent values, and the comparison", () => {
  const root = join(tempRoot(), "experiments");
  const dir = makeBatch(root, "grid", [
    { name: "a", status: "done", steps: 30 },
    { name: "b", status: "failed", steps: 4, error: "boom" },
    { name: "c", status: "queued" },
  ]);
  const view = readBatchView(dir);
  assert.equal(view.comparison, undefined);
  const [a, b, c] = view.runs;
  assert.equal(a!.metric, "train_mean_nll");
  assert.equal(a!.lastStep, 29);
  assert.equal(a!.spark.length, 30);
  assert.ok(Math.abs(a!.latest! - (3 * Math.exp(-29 / 10) + 0.5)) < 1e-12);
  assert.ok(a!.spark[0]! > a!.spark[29]!, "oldest first");
  assert.equal(a!.started, true);
  assert.equal(b!.error, "boom");
  assert.deepEqual([c!.started, c!.latest, c!.spark], [false, undefined, []]);
  const comparison = makeComparison(dir, "grid");
  assert.deepEqual(readBatchView(dir).comparison, comparison);
  writeFileSync(join(dir, "comparison.json"), "{");
  assert.match(readBatchView(dir).comparisonError!, /comparison\.json: comparison is not valid JSON/);
});

test("a run's log_path may be relative to the batch's working directory", () => {
  const base = tempRoot();
  const dir = makeBatch(join(base, "experiments"), "rel", [{ name: "r", status: "done", steps: 3 }]);
  assert.equal(runDirOf(dir, { name: "r", log_path: "experiments/rel/r" }), join(dir, "r"));
  assert.equal(runDirOf(dir, { name: "r", log_path: "" }), join(dir, "r"));
  assert.equal(runDirOf(dir, { name: "r", log_path: "/abs/elsewhere" }), "/abs/elsewhere");
});

test("experiment files, roots, the batch a launch produced and the launch log", () => {
  const root = join(tempRoot(), "experiments");
  mkdirSync(root, { recursive: true });
  for (const f of ["b.yaml", "a.ts", "c.json", "notes.md", "types.d.ts"]) writeFileSync(join(root, f), "");
  assert.deepEqual(
    listExperimentFiles([root]).map((f) => f.slice(root.length + 1)),
    ["a.ts", "b.yaml", "c.json"],
  );
  assert.deepEqual(experimentsRoots({}, "/w"), ["/w/experiments"]);
  assert.deepEqual(experimentsRoots({ COOKBOOK_EXPERIMENTS_ROOT: "../x" }, "/w"), ["/w/experiments", "/x"]);
  assert.deepEqual(experimentsRoots({ COOKBOOK_EXPERIMENTS_ROOT: "experiments" }, "/w"), ["/w/experiments"]);
  const dir = makeBatch(root, "a", [{ name: "r", status: "queued" }]);
  const batches = listBatches([root]);
  assert.equal(batchForFile(batches, join(root, "a.ts"), Date.now() - 5000)?.dir, dir);
  assert.equal(batchForFile(batches, join(root, "a.ts"), Date.now() + 5000), undefined, "an older batch.json is not the launched one");
  assert.equal(batchForFile(batches, resolve(root, "b.yaml"), 0), undefined);
  writeFileSync(join(root, "a.ts.batch.log"), "starting\nerror: no such recipe: sl_nope\n");
  assert.deepEqual(readLaunchLog(join(root, "a.ts.batch.log"), 1), ["error: no such recipe: sl_nope"]);
});

test("without key_metric, a run's metric is the first usual one in its recent rows, not only in the last row", () => {
  const root = join(tempRoot(), "experiments");
  const dir = makeBatch(root, "nokey", [{ name: "r", status: "done", steps: 10 }]);
  // The last row is an evaluation: test/nll only.
  appendMetrics(join(dir, "r"), [{ step: 10, "test/nll": 0.75 }]);
  const state = readBatchState(dir)!;
  writeBatchState(dir, { ...state, runs: state.runs.map(({ key_metric: _drop, ...r }) => r) });
  const [run] = readBatchView(dir).runs;
  assert.equal(run!.metric, "train_mean_nll");
  assert.equal(run!.spark.length, 10);
  assert.equal(run!.latest, run!.spark[9], "latest: the newest value of that metric");
  assert.equal(run!.lastStep, 10);
});
