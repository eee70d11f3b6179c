import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { watchSnapshot } from "../../src/commands/watch.ts";
import { METRIC_COLUMNS_FILE, type MetricColumns, dropMetricColumns, readMetricColumns } from "../../src/log/metricColumns.ts";

import { MetricsLogger, readMetrics } from "../../src/log/metrics.ts";
import { truncateMetricsFrom } from "../../src/runs/resume.ts";
import { ColumnSeries, buildSeries, elapsedSeconds, numericKeys, progressOf } from "../../src/tui/core/series.ts";

function runDir(): string {
  return mkdtempSync(join(tmpdir(), "metric-columns-"));
}

/** A run's rows as the loops log them: train rows, eval rows every 5 steps, a string, a null. */
function logRows(logger: MetricsLogger, from: number, to: number): void {
  for (let step = from; step < to; step++) {
    logger.logMetrics(
      {
        train_mean_nll: 2 / (step + 1) + 0.001 * Math.sin(step),
        learning_rate: 1e-4 * (1 - step / 100),
        progress: ((step % 100) + 1) / 100,
        "time/total": 0.25 + (step % 3) * 0.125,
        ...(step % 5 === 4 ? { "test/nll": 1.5 - step / 200, phase: "eval" } : {}),
      },
      step,
    );
  }
}

function quietLogger(dir: string): MetricsLogger {
  return new MetricsLogger(dir, { console: false });
}

/** The columns a reader builds from metrics.jsonl alone, to compare the cache against. */
function fromJsonlAlone(dir: string): MetricColumns {
  const saved = join(dir, METRIC_COLUMNS_FILE);
  const bytes = existsSync(saved) ? readFileSync(saved) : undefined;
  dropMetricColumns(dir);
  const m = readMetricColumns(dir);
  if (bytes !== undefined) writeFileSync(saved, bytes);
  assert.equal(m.source, "jsonl");
  return m;
}

function plain(m: MetricColumns): unknown {
  return {
    length: m.length,
    step: Array.from(m.step),
    columns: [...m.keys].sort().map((k) => [k, Array.from(m.column(k)?.rows ?? []), Array.from(m.column(k)?.values ?? [])]),
  };
}

test("the writer keeps metrics.columns equal to what parsing metrics.jsonl gives", () => {
  const dir = runDir();
  logRows(quietLogger(dir), 0, 40);
  const m = readMetricColumns(dir);
  assert.equal(m.source, "columns");
  assert.equal(m.length, 40);
  assert.equal(m.column("test/nll")?.rows.length, 8);
  assert.equal(m.keys.includes("phase"), false, "strings are not columns");
  assert.equal(m.column("phase"), undefined);
  assert.deepEqual(plain(m), plain(fromJsonlAlone(dir)));
});

test("lines appended after the cache (by another writer) are parsed and added", () => {
  const dir = runDir();
  logRows(quietLogger(dir), 0, 10);
  appendFileSync(
    join(dir, "metrics.jsonl"),
    `${JSON.stringify({ step: 10, train_mean_nll: 0.5, extra_key: 3 })}\n\n${JSON.stringify({ step: 11, note: "x" })}\n{"step": 12, "train_me`,
  );
  const m = readMetricColumns(dir);
  assert.equal(m.source, "columns");
  assert.equal(m.length, 12);
  assert.deepEqual(Array.from(m.column("extra_key")!.rows), [10]);
  assert.deepEqual(plain(m), plain(fromJsonlAlone(dir)));
});

test("a rewritten metrics.jsonl is not described by a stale cache: readers fall back, writers rebuild", () => {
  const dir = runDir();
  logRows(quietLogger(dir), 0, 20);
  const jsonl = join(dir, "metrics.jsonl");
  // Same length, different numbers: only the content check can tell.
  const original = readFileSync(jsonl, "utf8");
  const changed = original.replace(/"learning_rate":(\d)/g, (_, d: string) => `"learning_rate":${(Number(d) + 1) % 10}`);
  assert.equal(changed.length, original.length);
  writeFileSync(jsonl, changed);
  assert.equal(readMetricColumns(dir).source, "jsonl");
  // A new writer (a resumed run) rebuilds the cache before appending.
  logRows(quietLogger(dir), 20, 25);
  const m = readMetricColumns(dir);
  assert.equal(m.source, "columns");
  assert.deepEqual(plain(m), plain(fromJsonlAlone(dir)));
});

test("resume truncation drops the cache and the resumed writer rebuilds it", () => {
  const dir = runDir();
  logRows(quietLogger(dir), 0, 30);
  assert.equal(truncateMetricsFrom(dir, 12), 18);
  assert.equal(existsSync(join(dir, METRIC_COLUMNS_FILE)), false);
  assert.equal(readMetricColumns(dir).length, 12);
  logRows(quietLogger(dir), 12, 16);
  const m = readMetricColumns(dir);
  assert.equal(m.source, "columns");
  assert.deepEqual(
    Array.from(m.step),
    Array.from({ length: 16 }, (_, i) => i),
  );
  assert.deepEqual(plain(m), plain(fromJsonlAlone(dir)));
});

test("a cache record cut short by a crash is ignored, then cut by the next writer", () => {
  const dir = runDir();
  logRows(quietLogger(dir), 0, 10);
  const cache = join(dir, METRIC_COLUMNS_FILE);
  truncateSync(cache, statSync(cache).size - 7);
  const torn = readMetricColumns(dir);
  assert.equal(torn.source, "columns");
  assert.deepEqual(plain(torn), plain(fromJsonlAlone(dir)));
  logRows(quietLogger(dir), 10, 12);
  const m = readMetricColumns(dir);
  assert.equal(m.source, "columns");
  assert.deepEqual(plain(m), plain(fromJsonlAlone(dir)));
});

test("a cache that is not ours (bad magic) is rebuilt by the writer and ignored by readers", () => {
  const dir = runDir();
  logRows(quietLogger(dir), 0, 5);
  writeFileSync(join(dir, METRIC_COLUMNS_FILE), "not a columns file");
  assert.equal(readMetricColumns(dir).source, "jsonl");
  logRows(quietLogger(dir), 5, 6);
  assert.equal(readMetricColumns(dir).source, "columns");
  assert.deepEqual(plain(readMetricColumns(dir)), plain(fromJsonlAlone(dir)));
});

test("watch --once draws the same snapshot from the cache as from metrics.jsonl", () => {
  const dir = runDir();
  writeFileSync(join(dir, "config.json"), JSON.stringify({ model_name: "tiny-chat", num_epochs: 1 }));
  // Steps from 100, so a chart that used row numbers for x would differ.
  logRows(quietLogger(dir), 100, 160);
  for (const smooth of [false, true]) {
    const options = { width: 90, chartRows: 8, color: false, smooth, extra: ["time/total"] };
    const cached = watchSnapshot(dir, options);
    const saved = readFileSync(join(dir, METRIC_COLUMNS_FILE));
    dropMetricColumns(dir);
    const parsed = watchSnapshot(dir, options);
    writeFileSync(join(dir, METRIC_COLUMNS_FILE), saved);
    assert.equal(cached, parsed);
    assert.match(cached, /step 159 /);
    assert.match(cached, /\n\s+100\s+159\n/, "x runs over the steps");
    assert.match(cached, /test\/nll {2}last/);
  }
});

test("series from columns equal the dashboard's series from rows, on both axes", () => {
  const dir = runDir();
  logRows(quietLogger(dir), 100, 150);
  appendFileSync(join(dir, "metrics.jsonl"), `${JSON.stringify({ train_mean_nll: 9, note: "a row without a step" })}\n`);
  const rows = readMetrics(dir);
  const columns = new ColumnSeries(readMetricColumns(dir));
  assert.deepEqual(columns.keys(), numericKeys(rows));
  assert.equal(columns.totalElapsed(), elapsedSeconds(rows).at(-1));
  assert.deepEqual(columns.elapsed(), elapsedSeconds(rows));
  assert.equal(columns.progress(), progressOf(rows));
  // Columns hand out their Float64Arrays as they are; the numbers must be the rows' numbers.
  const plainSeries = (s: { key: string; x: ArrayLike<number>; y: ArrayLike<number> }) => ({ key: s.key, x: Array.from(s.x), y: Array.from(s.y) });
  for (const key of numericKeys(rows)) {
    for (const axis of ["step", "time"] as const) {
      const fromColumns = columns.series(key, axis);
      assert.equal(fromColumns.finite, true);
      assert.deepEqual(plainSeries(fromColumns), plainSeries(buildSeries(rows, key, axis)), `${key} by ${axis}`);
    }
  }
});

test("valueAt reads one row's number from the cache, the parsed tail and metrics.jsonl alike", () => {
  const dir = runDir();
  logRows(quietLogger(dir), 0, 23);
  // Lines the cache does not describe yet: a row without a step, then one with a string value.
  appendFileSync(join(dir, "metrics.jsonl"), `${JSON.stringify({ train_mean_nll: 9, note: "no step" })}\n${JSON.stringify({ step: 23, progress: "x" })}\n`);
  const rows = readMetrics(dir);
  const keys = [...numericKeys(rows), "step", "absent"];
  for (const m of [readMetricColumns(dir), fromJsonlAlone(dir)]) {
    assert.equal(m.length, rows.length);
    for (let r = -1; r <= rows.length; r++) {
      for (const key of keys) {
        const v = rows[r]?.[key];
        assert.equal(m.valueAt(r, key), typeof v === "number" ? v : undefined, `${m.source}: row ${r}, ${key}`);
      }
    }
  }
});

test("a key in every row is one run of the cache: its rows are 0..n-1 and step is that column", () => {
  const dir = runDir();
  const logger = quietLogger(dir);
  for (let step = 0; step < 50; step++) logger.logMetrics({ loss: 1 / (step + 1), ...(step === 30 ? { extra: 1 } : {}) }, step);
  const m = readMetricColumns(dir);
  assert.equal(m.source, "columns");
  assert.deepEqual(
    Array.from(m.column("loss")?.rows ?? []),
    Array.from({ length: 50 }, (_, i) => i),
  );
  assert.deepEqual(Array.from(m.column("extra")?.rows ?? []), [30]);
  assert.deepEqual(
    Array.from(m.step),
    Array.from({ length: 50 }, (_, i) => i),
  );
  assert.deepEqual(plain(m), plain(fromJsonlAlone(dir)));
});
