import { test } from "node:test";
import assert from "node:assert/strict";
import { bucketByX } from "../../src/tui/core/bucket.ts";
import { CHART_OVERHEAD, renderChart, sparkline } from "../../src/tui/core/chart.ts";
import { fmtNum, progressBar, stripAnsi, eta } from "../../src/tui/core/format.ts";
import { histogram, renderHistogram } from "../../src/tui/core/histogram.ts";
import { buildSeries, chartsFor, elapsedSeconds, filterKeys, numericKeys, progressOf } from "../../src/tui/core/series.ts";
import { ema } from "../../src/tui/core/smoothing.ts";
import { renderTimingBars, timingBreakdown } from "../../src/tui/core/timing.ts";
import { parseTranscriptFilter, selectTranscripts, splitRoles, wrapText } from "../../src/tui/core/transcripts.ts";
import { normalizeTranscript } from "../../src/runs/index.ts";

test("ema is debiased: a constant series stays constant and weight 0 is the identity", () => {
  assert.deepEqual(
    ema([5, 5, 5], 0.9).map((v) => Number(v.toFixed(9))),
    [5, 5, 5],
  );
  assert.deepEqual(ema([1, 2, 3], 0), [1, 2, 3]);
  const s = ema([0, 10, 10, 10], 0.5);
  assert.ok(s[1] > 0 && s[1] < 10 && s[3] > s[1]);
});

test("bucketByX keeps a spike as the max of its bucket and reduces to the width", () => {
  const x = Array.from({ length: 1000 }, (_, i) => i);
  const y = x.map((i) => (i === 500 ? 100 : 1));
  const b = bucketByX(x, y, 50);
  assert.equal(b.last.length, 50);
  assert.equal(Math.max(...b.max), 100);
  assert.equal(Math.min(...b.min), 1);
  assert.equal(
    b.count.reduce((a, c) => a + c, 0),
    1000,
  );
});

test("bucketByX fills empty buckets with the previous value and keeps short series as they are", () => {
  const b = bucketByX([0, 1, 100], [1, 2, 3], 10, { min: 0, max: 100 });
  assert.equal(b.last.length, 10);
  assert.ok(b.last.every((v) => Number.isFinite(v)));
  assert.equal(b.last[5], 2);
  assert.deepEqual(bucketByX([0, 1, 2], [4, 5, 6], 10).last, [4, 5, 6]);
});

test("renderChart returns exactly the requested rows, fits the width and survives NaN/Infinity", () => {
  const x = Array.from({ length: 500 }, (_, i) => i);
  const y = x.map((i) => (i === 7 ? Number.NaN : i === 9 ? Infinity : Math.sin(i / 20)));
  const chart = renderChart([{ x, y, color: "" }], { width: 60, rows: 10, color: false });
  assert.equal(chart.lines.length, 10);
  for (const line of chart.lines) assert.ok(stripAnsi(line).length <= 60, `too wide: ${line}`);
  assert.equal(chart.columns, 60 - CHART_OVERHEAD);
  assert.match(chart.lines[9], /0\s+499/);
});

test("renderChart marks the cursor and handles empty and constant input", () => {
  const empty = renderChart([{ x: [], y: [], color: "" }], { width: 40, rows: 6, color: false });
  assert.equal(empty.lines.length, 6);
  assert.ok(empty.lines.join("\n").includes("no data"));
  const flat = renderChart([{ x: [0, 1, 2, 3], y: [2, 2, 2, 2], color: "" }], { width: 40, rows: 6, color: false, cursorX: 2 });
  assert.equal(flat.lines.length, 6);
  assert.ok(flat.lines[5].includes("▲"));
});

test("renderChart overlays align on a common x range", () => {
  const a = { x: [0, 1, 2, 3], y: [1, 2, 3, 4], color: "" };
  const b = { x: [0, 10, 20], y: [4, 3, 2], color: "" };
  const chart = renderChart([a, b], { width: 40, rows: 8, color: false });
  assert.equal(chart.x0, 0);
  assert.equal(chart.x1, 20);
  assert.equal(chart.columns, 40 - CHART_OVERHEAD);
});

test("sparkline uses the full range of block characters", () => {
  const s = sparkline([0, 1, 2, 3, 4, 5, 6, 7], 8);
  assert.equal(s, "▁▂▃▄▅▆▇█");
  assert.equal(sparkline([], 5), "");
  assert.equal(
    sparkline(
      Array.from({ length: 100 }, (_, i) => i),
      10,
    ).length,
    10,
  );
});

test("series: step and elapsed-time axes, numeric keys, defaults per kind, filter, progress", () => {
  const rows = [
    { step: 0, loss: 3, "time/total": 2, note: "x" },
    { step: 1, "time/total": 1 },
    { step: 2, loss: 1, "time/total": 3, progress: 0.5 },
  ];
  assert.deepEqual(buildSeries(rows, "loss"), { key: "loss", x: [0, 2], y: [3, 1] });
  assert.deepEqual(buildSeries(rows, "loss", "time").x, [2, 6]);
  assert.deepEqual(elapsedSeconds(rows), [2, 3, 6]);
  assert.deepEqual(numericKeys(rows), ["loss", "progress", "time/total"]);
  assert.deepEqual(chartsFor("rl", ["env/all/reward/total", "optim/entropy", "x"]), ["env/all/reward/total", "optim/entropy"]);
  // A tool-using run opens with its tool-call share next to the reward.
  assert.deepEqual(chartsFor("rl", ["optim/entropy", "env/all/called_tool", "env/all/reward/total"]), [
    "env/all/reward/total",
    "env/all/called_tool",
    "optim/entropy",
  ]);
  assert.deepEqual(chartsFor("sl", ["train_mean_nll", "learning_rate"]), ["train_mean_nll", "learning_rate"]);
  // Distillation: teacher_kl first, then per-dataset series only when there are several datasets.
  assert.deepEqual(chartsFor("rl", ["env/all/reward/total", "teacher_kl", "teacher_kl/dataset_0"]), ["teacher_kl", "env/all/reward/total"]);
  assert.deepEqual(chartsFor("rl", ["env/all/reward/total", "teacher_kl", "teacher_kl/dataset_0", "teacher_kl/dataset_1"]), [
    "teacher_kl",
    "teacher_kl/dataset_0",
    "teacher_kl/dataset_1",
    "env/all/reward/total",
  ]);
  // Mixtures: each source's loss (SL) or reward (RL, when there are several sources) after the kind's charts.
  assert.deepEqual(chartsFor("sl", ["train_mean_nll", "source/a/train_mean_nll", "source/a/num_sequences", "source/b/train_mean_nll"]), [
    "train_mean_nll",
    "source/a/train_mean_nll",
    "source/b/train_mean_nll",
  ]);
  assert.deepEqual(chartsFor("rl", ["env/all/reward/total", "env/arithmetic/reward/total", "env/file/reward/total"]), [
    "env/all/reward/total",
    "env/arithmetic/reward/total",
    "env/file/reward/total",
  ]);
  assert.deepEqual(chartsFor("rl", ["env/all/reward/total", "env/search/reward/total"]), ["env/all/reward/total"], "one tag is no mixture");
  assert.deepEqual(filterKeys(["env/all/reward/total", "env/all/correct", "optim/kl"], "env !correct"), ["env/all/reward/total"]);
  assert.equal(progressOf(rows), 0.5);
});

test("format helpers", () => {
  assert.equal(fmtNum(0.000012), "1.20e-5");
  assert.equal(fmtNum(3), "3");
  assert.equal(fmtNum(undefined), "–");
  assert.equal(progressBar(0.5, 20).length, 20);
  assert.equal(eta(10, 0.5), 10);
  assert.equal(eta(10, undefined), undefined);
});

test("histogram counts every finite value once", () => {
  const h = histogram([0, 0.1, 0.5, 1, 1, Number.NaN], 4);
  assert.equal(
    h.counts.reduce((a, b) => a + b, 0),
    5,
  );
  assert.equal(h.counts[3], 2);
  assert.equal(renderHistogram(h, 10).length, 4);
});

test("timing breakdown reads single spans and :total aggregates, sorted by time", () => {
  const b = timingBreakdown({ step: 1, "time/total": 2, "time/sampling": 1.2, "time/train:total": 0.6, "time/train:count": 3, "time/train:max": 0.3, loss: 1 });
  assert.equal(b.total, 2);
  assert.deepEqual(
    b.entries.map((e) => e.name),
    ["sampling", "train"],
  );
  assert.equal(b.entries[1].count, 3);
  const lines = renderTimingBars(b, 80);
  assert.match(lines[0], /^sampling\s+█+\s+1\.200s 60%/);
});

test("transcript filtering, sorting, role splitting and wrapping", () => {
  const recs = [0.1, 0.9, 0.5].map((r, i) => normalizeTranscript({ group_idx: 0, traj_idx: i, total_reward: r, tags: i === 2 ? ["math"] : [] }));
  assert.deepEqual(
    selectTranscripts(recs, "desc", {}).map((r) => r.traj_idx),
    [1, 2, 0],
  );
  assert.deepEqual(
    selectTranscripts(recs, "asc", parseTranscriptFilter("reward>0.2")).map((r) => r.traj_idx),
    [2, 1],
  );
  assert.deepEqual(
    selectTranscripts(recs, "index", parseTranscriptFilter("tag:math")).map((r) => r.traj_idx),
    [2],
  );
  assert.deepEqual(parseTranscriptFilter("r>=0.5 reward<1 tag:x junk"), { min: 0.5, max: 1, tag: "x" });
  assert.deepEqual(splitRoles("system: be brief\n\nuser: hi\nthere", "user"), [
    { role: "system", text: "be brief" },
    { role: "user", text: "hi\nthere" },
  ]);
  assert.deepEqual(splitRoles("plain answer", "assistant"), [{ role: "assistant", text: "plain answer" }]);
  assert.deepEqual(wrapText("aaaa bbbb cccc", 9), ["aaaa bbbb", "cccc"]);
  assert.ok(wrapText("x".repeat(25), 10).every((l) => l.length <= 10));
});

test("mergeColorRuns keeps the text and colours but drops redundant escapes", async () => {
  const { mergeColorRuns } = await import("../../src/tui/core/chart.ts");
  const line = "  1.0 ┤\x1b[36m╭\x1b[0m\x1b[36m─\x1b[0m \x1b[36m╮\x1b[0m\x1b[33m│\x1b[0m x";
  const merged = mergeColorRuns(line);
  assert.equal(stripAnsi(merged), stripAnsi(line));
  assert.equal(merged, "  1.0 ┤\x1b[36m╭─ ╮\x1b[33m│\x1b[0m x");
});
