import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { execaSync } from "execa";
import { watchSnapshot } from "../../src/commands/watch.ts";
import { METRIC_COLUMNS_FILE } from "../../src/log/metricColumns.ts";
import { MetricsLogger } from "../../src/log/metrics.ts";
import { stripAnsi } from "../../src/tui/core/format.ts";
import { RunTailer } from "../../src/tui/services/runTailer.ts";
import { appendMetrics, makeRlRun, makeSlRun, tempRoot } from "./fixtures.ts";

test("watch --once snapshot has the header, the kind's charts, checkpoints and log tail", () => {
  const root = tempRoot();
  const sl = makeSlRun(root);
  const text = watchSnapshot(sl, { width: 80, chartRows: 8, color: false });
  assert.match(text, /^sl-run {2}completed {2}sl_basic · supervised/);
  assert.match(text, /step 29 {2}\[█+\] 100%/);
  for (const k of ["train_mean_nll", "test/nll", "learning_rate"]) assert.ok(text.includes(`${k}  last`), k);
  assert.ok(text.includes("checkpoints (2):") && text.includes("tinker://sl/weights/final"));
  assert.ok(text.includes("step 29 done"));
  for (const line of text.split("\n")) assert.ok(line.length <= 80 || line.startsWith("  "), line);
  const rl = watchSnapshot(makeRlRun(root), { width: 80, chartRows: 8, color: true, extra: ["time/sampling"] });
  assert.ok(stripAnsi(rl).includes("optim/kl_sample_train_v1  last"));
  assert.ok(stripAnsi(rl).includes("time/sampling  last"));
  assert.ok(rl.includes("\x1b["), "colour when asked");
});

test("cookbook watch <dir> --once prints the snapshot from the CLI", () => {
  const root = tempRoot();
  const sl = makeSlRun(root);
  const bin = resolve(import.meta.dirname, "../../bin/cookbook.js");
  const r = execaSync(process.execPath, [bin, "watch", sl, "--once", "--width", "70", "--height", "6"], { reject: false });
  assert.equal(r.exitCode, 0, r.stderr);
  assert.ok(r.stdout.includes("train_mean_nll  last"));
  const bad = execaSync(process.execPath, [bin, "watch", root + "/missing", "--once"], { reject: false });
  assert.notEqual(bad.exitCode, 0);
  assert.match(bad.stderr, /does not exist/);
});

test("cookbook watch --once prints the same snapshot from metrics.columns as from metrics.jsonl alone", () => {
  const root = tempRoot();
  const dir = join(root, "logged");
  const logger = new MetricsLogger(dir, { console: false });
  logger.logHyperparams({ model_name: "tiny-chat", num_epochs: 1 });
  for (let step = 0; step < 300; step++)
    logger.logMetrics({ train_mean_nll: 3 / (step + 1), learning_rate: 1e-4, progress: (step + 1) / 300, "time/total": 0.5 }, step);
  assert.ok(existsSync(join(dir, METRIC_COLUMNS_FILE)), "the writer keeps metrics.columns");
  const bin = resolve(import.meta.dirname, "../../bin/cookbook.js");
  const once = (): string => {
    const r = execaSync(process.execPath, [bin, "watch", dir, "--once", "--width", "80"], { reject: false });
    assert.equal(r.exitCode, 0, r.stderr);
    return r.stdout;
  };
  const fromColumns = once();
  assert.match(fromColumns, /step 299 /);
  rmSync(join(dir, METRIC_COLUMNS_FILE));
  assert.equal(once(), fromColumns);
});

test("the tailer reads only what was appended and batches changes per poll", () => {
  const root = tempRoot();
  const dir = makeSlRun(root, "tail", 10);
  const t = new RunTailer(dir);
  let changes = 0;
  t.on("change", () => changes++);
  assert.equal(t.snapshot.rows.length, 10);
  assert.equal(t.snapshot.kind, "sl");
  for (let i = 0; i < 100; i++) appendMetrics(dir, [{ step: 10 + i, train_mean_nll: 1, "time/total": 1 }]);
  assert.equal(t.poll(), true);
  assert.equal(changes, 1, "one change event for a hundred appended rows");
  assert.equal(t.snapshot.rows.length, 110);
  assert.equal(t.snapshot.elapsed[109], t.snapshot.elapsed[9] + 100);
  assert.equal(t.poll(), false);
});
