import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { DiskFullError } from "../../src/files/diskErrors.ts";
import { appendCheckpoint, readCheckpoints } from "../../src/runs/checkpoints.ts";
import { readManifest, startManifest } from "../../src/runs/manifest.ts";
import { withRun } from "../../src/runs/session.ts";
import { failWritesTo } from "../files/faults.ts";
import { tempDir } from "./helpers.ts";

const base = { recipe: "demo", config: { lr: 1 }, engine: "none", argv: [], commandLine: "cookbook run demo", console: false as const };

test("run.json on a full disk: heartbeat and finish never throw, warn once, and leave no temp file", () => {
  const dir = tempDir();
  const warnings: string[] = [];
  const handle = startManifest(dir, { recipe: "demo", argv: [], engine: "none" }, 60_000, (m) => warnings.push(m));
  const restore = failWritesTo((p) => p.startsWith(dir), 0);
  try {
    handle.beat();
    handle.beat();
    handle.finish("failed", "disk full");
  } finally {
    restore();
  }
  assert.equal(warnings.length, 2, warnings.join("\n"));
  assert.match(warnings[0]!, /^cookbook: heartbeat not recorded: no space left on device writing .*run\.json \(run status "running"\)/);
  assert.match(warnings[1]!, /^cookbook: run status "failed" not recorded: no space left on device/);
  assert.deepEqual(readdirSync(dir), ["run.json"]);
  assert.equal(readManifest(dir)?.status, "running", "the earlier run.json is intact");
});

test("a run whose disk fills up fails with the file and step, keeps earlier rows, and can resume", async () => {
  const dir = join(tempDir(), "run");
  let restore = (): void => {};
  await assert.rejects(
    withRun({ ...base, logPath: dir, behavior: "raise" }, async (run) => {
      run.metrics.logMetrics({ loss: 3 }, 0);
      appendCheckpoint(dir, { name: "000001", batch: 1 });
      run.metrics.logMetrics({ loss: 2 }, 1);
      restore = failWritesTo((p) => p.startsWith(dir), 4);
      run.metrics.logMetrics({ loss: 1 }, 2);
    }),
    (err: unknown) => err instanceof DiskFullError && err.message.includes(join(dir, "metrics.jsonl")) && err.message.includes("metrics of step 2"),
  );
  restore();
  assert.deepEqual(
    readFileSync(join(dir, "metrics.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).step),
    [0, 1],
  );
  assert.deepEqual(
    readCheckpoints(dir).map((c) => c.name),
    ["000001"],
  );
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.includes("tmp")),
    [],
  );
  await withRun({ ...base, logPath: dir, behavior: "resume" }, async (run) => {
    assert.equal(run.resumed, true);
    run.metrics.logMetrics({ loss: 1 }, 2);
  });
  assert.equal(readManifest(dir)?.status, "completed");
});
