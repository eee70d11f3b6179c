// The eval store writes through the project's durability layer: whole JSON files by rename (no
// temp file left behind), whole appended lines (a torn tail from a crash is cut off before the next
// append), and a damaged line in the middle of a file is an error naming the file and line, not a
// record silently dropped.
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EvalStore, type EvalRunIndexRecord, type TrajectoryRecord } from "../../src/eval/store.ts";

const record = (runId: string): EvalRunIndexRecord => ({
  run_id: runId,
  created_at: "2026-11-26T00:00:00.000Z",
  model: "tiny-chat",
  model_path: null,
  base_model: "tiny-chat",
  benchmarks: ["arithmetic"],
  config_key: "k",
});

const trajectory = (index: number): TrajectoryRecord => ({
  index,
  example_id: `e${index}`,
  prompt: [{ role: "user", content: `q${index}` }],
  reference: String(index),
  samples: [],
});

test("eval store: atomic JSON, whole lines, a torn tail repaired, a damaged line named", () => {
  const root = mkdtempSync(join(tmpdir(), "eval-store-files-"));
  try {
    const store = new EvalStore(root);
    store.createRun(record("r1"), { seed: 0 });
    assert.deepEqual(readdirSync(store.runDir("r1")).sort(), ["metadata.json"], "no temp file beside metadata.json");

    store.appendTrajectory("r1", "arithmetic", trajectory(0));
    const path = store.trajectoriesPath("r1", "arithmetic");
    // A crash in the middle of an append leaves a fragment without its newline: readers skip it,
    // and the next append cuts it off instead of gluing a record to it.
    appendFileSync(path, '{"index": 1, "prom');
    assert.deepEqual(
      store.readTrajectories("r1", "arithmetic").map((t) => t.index),
      [0],
    );
    store.appendTrajectory("r1", "arithmetic", trajectory(2));
    assert.deepEqual(
      store.readTrajectories("r1", "arithmetic").map((t) => t.index),
      [0, 2],
    );
    assert.equal(readFileSync(path, "utf8").split("\n").filter(Boolean).length, 2);

    // A line damaged in the middle is not a crash's torn tail: it is reported, not skipped.
    const lines = readFileSync(path, "utf8").split("\n");
    writeFileSync(path, [lines[0], "{not json", lines[1], ""].join("\n"));
    assert.throws(() => store.readTrajectories("r1", "arithmetic"), new RegExp(`${path.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:2: malformed JSON line`));

    writeFileSync(join(store.runDir("r1"), "metadata.json"), "{ half");
    assert.throws(() => store.readMetadata("r1"), /metadata\.json: not valid JSON/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
