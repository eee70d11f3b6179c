import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  LogTailReader,
  RunLockedError,
  acquireRunLock,
  readCheckpoints,
  readLogTail,
  readMetricTail,
  readRunConfig,
  removeCheckpointRecord,
} from "../../src/runs/index.ts";
import { tempDir } from "./helpers.ts";

test("LogTailReader returns the last lines, then only complete new ones, bounded", () => {
  const dir = tempDir();
  const path = join(dir, "logs.log");
  writeFileSync(path, Array.from({ length: 20 }, (_, i) => `line ${i}`).join("\n") + "\npartial");
  const r = new LogTailReader(path, 5);
  assert.equal(r.read(), true);
  assert.deepEqual(r.lines, ["line 15", "line 16", "line 17", "line 18", "line 19"]);
  assert.equal(r.read(), false);
  appendFileSync(path, " done\nnext\n");
  assert.equal(r.read(), true);
  assert.deepEqual(r.lines.slice(-2), ["partial done", "next"]);
  writeFileSync(path, "fresh\n");
  r.read();
  assert.deepEqual(r.lines, ["fresh"]);
  assert.deepEqual(readLogTail(dir, 1), ["fresh"]);
  assert.deepEqual(readLogTail(join(dir, "none")), []);
});

test("readMetricTail reads only the end of metrics.jsonl; readRunConfig tolerates junk", () => {
  const dir = tempDir();
  const rows = Array.from({ length: 5000 }, (_, i) => JSON.stringify({ step: i, loss: i, other: "x".repeat(20) }));
  writeFileSync(join(dir, "metrics.jsonl"), rows.join("\n") + "\n");
  const tail = readMetricTail(dir, "loss", 4096);
  assert.ok(tail.length > 10 && tail.length < 200);
  assert.equal(tail[tail.length - 1], 4999);
  assert.equal(readRunConfig(dir), undefined);
  writeFileSync(join(dir, "config.json"), '{"model_name":"m"}');
  assert.deepEqual(readRunConfig(dir), { model_name: "m" });
  writeFileSync(join(dir, "config.json"), "[1]");
  assert.equal(readRunConfig(dir), undefined);
});

test("removeCheckpointRecord drops the named record and keeps the rest", () => {
  const dir = tempDir();
  const recs = [
    { name: "000010", state_path: "a" },
    { name: "000020", state_path: "b" },
    { name: "final", final: true, state_path: "c" },
  ];
  writeFileSync(join(dir, "checkpoints.jsonl"), recs.map((r) => JSON.stringify(r)).join("\n") + "\n");
  assert.equal(removeCheckpointRecord(dir, "000020"), 1);
  assert.deepEqual(
    readCheckpoints(dir).map((c) => c.name),
    ["000010", "final"],
  );
  assert.equal(removeCheckpointRecord(dir, "000010", "other"), 0);
  assert.equal(readCheckpoints(dir).length, 2);
});

test("removeCheckpointRecord refuses while a live run holds the directory, and leaves the file as it was", () => {
  const dir = tempDir();
  const text =
    [
      { name: "000010", state_path: "a" },
      { name: "final", final: true, state_path: "c" },
    ]
      .map((r) => JSON.stringify(r))
      .join("\n") + "\n";
  writeFileSync(join(dir, "checkpoints.jsonl"), text);
  const live = acquireRunLock(dir);
  try {
    assert.throws(
      () => removeCheckpointRecord(dir, "000010"),
      (err: unknown) => err instanceof RunLockedError && err.message.includes(`pid ${process.pid}`),
    );
  } finally {
    live.release();
  }
  assert.equal(readFileSync(join(dir, "checkpoints.jsonl"), "utf8"), text);
  assert.equal(removeCheckpointRecord(dir, "000010"), 1, "once the run has ended the removal goes through");
  assert.equal(existsSync(join(dir, "run.lock")), false, "the removal's own lock is released");
});
