// TensorBoard event files: the CRC-32C TFRecord framing against published check values, the
// events read back field by field, a torn last record, and a run whose metrics reach both
// metrics.jsonl and the event file (TensorBoard's own reader checks the files in test-e2e/).
import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readdirSync, rmSync, truncateSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { crc32c, maskedCrc32c } from "../../src/log/tensorboard/crc32c.ts";
import { FILE_VERSION, tfRecord } from "../../src/log/tensorboard/events.ts";
import { readEventFile } from "../../src/log/tensorboard/reader.ts";
import { TensorBoardWriter, scalarsOf } from "../../src/log/tensorboard/writer.ts";
import { withRun } from "../../src/runs/session.ts";

const ascii = (s: string) => new TextEncoder().encode(s);

test("CRC-32C matches the standard check values; the mask is TensorFlow's rotate-and-add", () => {
  assert.equal(crc32c(ascii("123456789")), 0xe3069283);
  assert.equal(crc32c(new Uint8Array(32)), 0x8a9136aa, "RFC 3720 B.4: 32 zero bytes");
  assert.equal(crc32c(new Uint8Array(32).fill(0xff)), 0x62a8ab43, "RFC 3720 B.4: 32 0xff bytes");
  const crc = crc32c(ascii("abc"));
  assert.equal(maskedCrc32c(ascii("abc")), ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0);
  const rec = tfRecord(ascii("xy"));
  assert.equal(rec.length, 8 + 4 + 2 + 4);
  assert.equal(new DataView(rec.buffer).getBigUint64(0, true), 2n);
});

test("the writer's file reads back: version record, then one event per step with every finite numeric metric", () => {
  const dir = mkdtempSync(join(tmpdir(), "tb-"));
  try {
    let t = 1_700_000_000_000;
    const w = new TensorBoardWriter(dir, { now: () => (t += 500) });
    w.write({ loss: 2.5, "env/all/reward/total": 0.25, note: "text", nan: Number.NaN }, 0);
    w.write({ loss: 1.25, learning_rate: 1e-4 }, 1);
    w.write({ note: "nothing numeric" }, 2);
    assert.match(w.path, /tensorboard\/events\.out\.tfevents\.\d+\./);
    const events = readEventFile(w.path);
    assert.equal(events.length, 3, "version + two steps (a step with no scalars writes nothing)");
    assert.equal(events[0]!.fileVersion, FILE_VERSION);
    assert.deepEqual(
      events.slice(1).map((e) => e.step),
      [0, 1],
    );
    assert.deepEqual(events[1]!.scalars, { "env/all/reward/total": 0.25, loss: 2.5 });
    assert.ok(Math.abs(events[2]!.scalars["learning_rate"]! - 1e-4) < 1e-10, "float32 precision");
    assert.equal(events[2]!.wallTime, 1_700_000_001.5);
    // A crash mid-append leaves a torn record: the reader (like TensorBoard's) stops before it.
    appendFileSync(w.path, tfRecord(ascii("0123456789")).subarray(0, 15));
    assert.equal(readEventFile(w.path).length, 3);
    truncateSync(w.path, statSync(w.path).size - 15);
    assert.deepEqual(scalarsOf({ b: 1, a: 2, step: 3, s: "x" }), [
      ["a", 2],
      ["b", 1],
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a run with tensorboard on logs every step to metrics.jsonl and the event file; wandb_project turns it on and says how to sync", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tb-run-"));
  const base = { recipe: "demo", config: {}, engine: "none", argv: [], commandLine: "cookbook run demo", console: false as const, behavior: "delete" as const };
  try {
    await withRun({ ...base, logPath: join(dir, "on"), tensorboard: true }, async (run) => {
      for (let step = 0; step < 3; step++) run.metrics.logMetrics({ loss: 3 - step }, step);
    });
    const files = readdirSync(join(dir, "on", "tensorboard"));
    assert.equal(files.length, 1);
    const events = readEventFile(join(dir, "on", "tensorboard", files[0]!)).slice(1);
    assert.deepEqual(
      events.map((e) => [e.step, e.scalars["loss"]]),
      [
        [0, 3],
        [1, 2],
        [2, 1],
      ],
    );

    await withRun({ ...base, logPath: join(dir, "off") }, async (run) => run.metrics.logMetrics({ loss: 1 }, 0));
    assert.ok(!readdirSync(join(dir, "off")).includes("tensorboard"), "off by default");

    await withRun({ ...base, logPath: join(dir, "wandb"), wandbProject: "my-proj", env: {} }, async (run) => run.metrics.logMetrics({ loss: 1 }, 0));
    assert.ok(readdirSync(join(dir, "wandb")).includes("tensorboard"));
    const { readFileSync } = await import("node:fs");
    assert.match(readFileSync(join(dir, "wandb", "logs.log"), "utf8"), /wandb sync --sync-tensorboard --project my-proj .*tensorboard/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
