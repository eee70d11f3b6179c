// The run's Chrome trace: every logged step's spans reach trace.json when the run ends, as valid
// trace-event JSON (the shape ui.perfetto.dev and chrome://tracing read), with concurrent spans of
// one name on separate tracks so no track holds two overlapping siblings; a failing run and a run
// ended by a signal leave theirs too, without their own error replaced.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { MetricsLogger } from "../../src/log/metrics.ts";
import { StepTimer } from "../../src/log/timing.ts";
import { TRACE_EVENTS_FILE, TRACE_FILE, chromeTrace } from "../../src/log/trace.ts";
import { readManifest } from "../../src/runs/manifest.ts";
import { withRun } from "../../src/runs/session.ts";
import { spawnTs, waitForExit, waitForOutput } from "../runs/helpers.ts";
import { assertValidTrace, tempDir } from "./helpers.ts";

test("logStep puts each step's spans in trace.json at close: a step span holding its spans, overlapping spans on tracks of their own", async () => {
  const dir = mkdtempSync(join(tmpdir(), "trace-"));
  try {
    const logger = new MetricsLogger(dir, { console: false });
    for (const step of [0, 1]) {
      const timer = new StepTimer();
      await timer.span("sample", () => sleep(5));
      // Two rollouts at once, as the RL loops run them.
      await Promise.all([timer.span("rollout", () => sleep(8)), timer.span("rollout", () => sleep(8))]);
      timer.spanSync("train_step", () => {
        for (let i = 0; i < 1e5; i++);
      });
      logger.logStep({ loss: 1 - step }, step, timer);
    }
    assert.ok(existsSync(join(dir, TRACE_EVENTS_FILE)));
    assert.equal(existsSync(join(dir, TRACE_FILE)), false, "trace.json is written when the run ends");
    await logger.close(0);
    const spans = assertValidTrace(JSON.parse(readFileSync(join(dir, TRACE_FILE), "utf8")));
    assert.deepEqual(
      spans.filter((e) => e.cat === "step").map((e) => e.name),
      ["step 0", "step 1"],
    );
    for (const step of [0, 1]) {
      const outer = spans.find((e) => e.name === `step ${step}`)!;
      const inner = spans.filter((e) => e.args?.["step"] === step && e.cat === "span");
      assert.deepEqual(inner.map((e) => e.name).sort(), ["rollout", "rollout", "sample", "train_step"]);
      for (const e of inner) assert.ok(e.ts! >= outer.ts! && e.ts! + e.dur! <= outer.ts! + outer.dur! + 1, `${e.name} inside step ${step}`);
      const rollouts = inner.filter((e) => e.name === "rollout");
      assert.notEqual(rollouts[0].tid, rollouts[1].tid, "concurrent rollouts on separate tracks");
      assert.ok(inner.find((e) => e.name === "sample")!.dur! >= 4000, "durations in microseconds");
    }
    // The metrics row still carries the time/* keys.
    const rows = readFileSync(join(dir, "metrics.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, number>);
    assert.equal(rows[1]["time/rollout:count"], 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("chromeTrace names the process after the run, starts the timeline at the first span, and a run without spans writes no trace", async () => {
  const trace = chromeTrace(
    [
      { step: 3, name: "step", ts: 1_000_000, dur: 500 },
      { step: 3, name: "train_step", ts: 1_000_100, dur: 200 },
    ],
    "myrun",
  );
  assert.deepEqual(trace.traceEvents.find((e) => e.name === "process_name")?.args, { name: "myrun" });
  assert.deepEqual(
    trace.traceEvents.filter((e) => e.ph === "X").map((e) => [e.name, e.ts, e.dur]),
    [
      ["step 3", 0, 500],
      ["train_step", 100, 200],
    ],
  );
  assert.equal(trace.otherData["origin_epoch_us"], 1_000_000);
  const dir = mkdtempSync(join(tmpdir(), "trace-"));
  try {
    const logger = new MetricsLogger(dir, { console: false });
    logger.logMetrics({ loss: 1 }, 0);
    await logger.close(0);
    assert.equal(existsSync(join(dir, TRACE_FILE)), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a failing run still writes trace.json, and neither a sink's nor the trace's error replaces the run's own", async () => {
  const dir = join(tempDir(), "run");
  await assert.rejects(
    withRun({ recipe: "demo", config: {}, engine: "none", argv: [], commandLine: "demo", console: false, logPath: dir, behavior: "raise" }, async (run) => {
      for (const step of [0, 1, 2]) {
        const timer = new StepTimer();
        timer.spanSync("train_step", () => {});
        run.metrics.logStep({ loss: 1 }, step, timer);
      }
      throw new Error("boom at step 3");
    }),
    /boom at step 3/,
  );
  const spans = assertValidTrace(JSON.parse(readFileSync(join(dir, TRACE_FILE), "utf8")));
  assert.deepEqual(
    spans.filter((e) => e.cat === "step").map((e) => e.name),
    ["step 0", "step 1", "step 2"],
  );
  assert.equal(readManifest(dir)?.status, "failed");

  // A sink that fails to close: on a failing run close() resolves and trace.json is written; on a
  // completed run its error is thrown, after trace.json is written all the same.
  for (const exitCode of [1, 0]) {
    const other = tempDir();
    const logger = new MetricsLogger(other, { console: false, sinks: [{ write: () => {}, close: () => Promise.reject(new Error("upload failed")) }] });
    const timer = new StepTimer();
    timer.spanSync("train_step", () => {});
    logger.logStep({ loss: 1 }, 0, timer);
    if (exitCode === 0) await assert.rejects(logger.close(0), /upload failed/);
    else await logger.close(1);
    assert.ok(existsSync(join(other, TRACE_FILE)), `trace.json after close(${exitCode})`);
  }
});

test("a run ended by SIGTERM (forced exit) leaves trace.json of the steps it logged", async () => {
  const dir = join(tempDir(), "run");
  const child = spawnTs("test/runs/fixtures/tracedRunChild.ts", [dir]);
  try {
    await waitForOutput(child, /ready/);
    assert.equal(existsSync(join(dir, TRACE_FILE)), false);
    child.kill("SIGTERM");
    assert.equal((await waitForExit(child)).code, 143);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
  const spans = assertValidTrace(JSON.parse(readFileSync(join(dir, TRACE_FILE), "utf8")));
  assert.deepEqual(
    spans.filter((e) => e.cat === "step").map((e) => e.name),
    ["step 0", "step 1"],
  );
  assert.equal(readManifest(dir)?.status, "stopped");
});
