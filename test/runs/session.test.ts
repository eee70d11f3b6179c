import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readManifest } from "../../src/runs/manifest.ts";
import { withRun } from "../../src/runs/session.ts";
import { tempDir } from "./helpers.ts";

const base = { recipe: "demo", config: { lr: 1 }, engine: "none", argv: ["lr=1"], commandLine: "cookbook run demo lr=1", console: false as const };

test("withRun records completed, writes config.json and logs.log, and removes signal handlers", async () => {
  const dir = join(tempDir(), "run");
  const before = process.listenerCount("SIGINT");
  await withRun({ ...base, logPath: dir, behavior: "raise" }, async (run) => {
    assert.equal(run.resumed, false);
    assert.equal(process.listenerCount("SIGINT"), before + 1);
    run.metrics.logMetrics({ loss: 1 }, 0);
  });
  assert.equal(process.listenerCount("SIGINT"), before);
  const manifest = readManifest(dir);
  assert.equal(manifest?.status, "completed");
  assert.deepEqual(manifest?.argv, ["lr=1"]);
  assert.equal(manifest?.command, "cookbook run demo lr=1");
  assert.deepEqual(JSON.parse(readFileSync(join(dir, "config.json"), "utf8")), { lr: 1 });
  assert.match(readFileSync(join(dir, "logs.log"), "utf8").split("\n")[0], /\[INFO\] command: cookbook run demo lr=1$/);
});

test("withRun records failed with the error message and rethrows", async () => {
  const dir = join(tempDir(), "run");
  await assert.rejects(
    withRun({ ...base, logPath: dir, behavior: "raise" }, async () => {
      throw new Error("out of memory");
    }),
    { message: "out of memory" },
  );
  assert.equal(readManifest(dir)?.status, "failed");
  assert.equal(readManifest(dir)?.error, "out of memory");
  assert.match(readFileSync(join(dir, "logs.log"), "utf8"), /\[ERROR\] run failed: Error: out of memory/);
});

test("withRun resumes into an existing directory when asked to", async () => {
  const dir = join(tempDir(), "run");
  await withRun({ ...base, logPath: dir, behavior: "raise" }, async () => {});
  let resumed = false;
  await withRun({ ...base, logPath: dir, behavior: "resume" }, async (run) => {
    resumed = run.resumed;
    return "stopped";
  });
  assert.equal(resumed, true);
  assert.equal(readManifest(dir)?.status, "stopped");
});
