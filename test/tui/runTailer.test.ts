// A large run opens from the tail of metrics.jsonl (a quick first frame), then the whole file
// replaces those rows once, and appended rows keep arriving after it, none twice.
import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { setImmediate as tick } from "node:timers/promises";
import { RunTailer } from "../../src/tui/services/runTailer.ts";

const row = (step: number) => `${JSON.stringify({ step, loss: 1 / (step + 1), "time/total": 0.5 })}\n`;

test("a metrics.jsonl over the tail-first size opens with its last rows, then all of them", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tailer-"));
  try {
    writeFileSync(join(dir, "metrics.jsonl"), Array.from({ length: 2000 }, (_, i) => row(i)).join(""));
    const snapshots: { partial: boolean; steps: number[] }[] = [];
    const tailer = new RunTailer(dir, { tailFirstBytes: 4096 });
    const first = tailer.snapshot;
    assert.equal(first.partial, true);
    assert.ok(first.rows.length > 10 && first.rows.length < 200, `${first.rows.length} rows from the tail`);
    assert.equal(first.rows.at(-1)!.step, 1999, "the first frame already ends at the last step");
    assert.deepEqual(first.keys, ["loss", "time/total"]);
    tailer.on("change", (s) => snapshots.push({ partial: s.partial === true, steps: s.rows.map((r) => Number(r.step)) }));
    await tick();
    const full = tailer.snapshot;
    assert.equal(full.partial, false);
    assert.deepEqual(
      full.rows.map((r) => r.step),
      Array.from({ length: 2000 }, (_, i) => i),
    );
    assert.equal(full.elapsed.at(-1), 1000, "the time axis counts from the first row once all are read");
    assert.equal(full.cache.series("loss", "step").y.length, 2000, "the series cache covers every row");
    appendFileSync(join(dir, "metrics.jsonl"), row(2000) + row(2001));
    tailer.poll();
    assert.deepEqual(
      tailer.snapshot.rows.slice(-3).map((r) => r.step),
      [1999, 2000, 2001],
    );
    assert.equal(tailer.snapshot.rows.length, 2002, "no row twice");
    assert.equal(snapshots.filter((s) => s.partial).length, 0, "after the first frame only whole-file snapshots are emitted");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a small metrics.jsonl is read whole at once", () => {
  const dir = mkdtempSync(join(tmpdir(), "tailer-"));
  try {
    writeFileSync(join(dir, "metrics.jsonl"), Array.from({ length: 50 }, (_, i) => row(i)).join(""));
    const tailer = new RunTailer(dir);
    assert.equal(tailer.snapshot.partial, undefined);
    assert.equal(tailer.snapshot.rows.length, 50);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
