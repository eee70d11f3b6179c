// Estimates from a probe's rows: steps from the progress fraction, the pace from when rows
// appeared (pipelined loops overlap steps), tokens, start-up; the price table's errors; and a real
// probe of example_line_fit, whose whole run is shorter than the probe.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { estimateFromProbe, formatEstimate, priceFor, readPriceTable } from "../../src/estimate/probe.ts";
import { probeRecipe } from "../../src/estimate/runProbe.ts";

test("steps from progress, the pace from the arrival of rows after the first, tokens and start-up", () => {
  const rows = [0, 1, 2, 3, 4].map((step) => ({ step, progress: (step + 1) / 50, num_tokens: 1000 + step, "time/total": step === 0 ? 3 : 0.9 }));
  const e = estimateFromProbe({ firstRowSeconds: 5, rows, rowSeconds: [5, 5.5, 6, 6.5, 7] });
  assert.equal(e.steps, 50);
  assert.equal(e.stepSeconds, 0.5, "(7 − 5.5) / 3 rows: the wall-clock pace, not the loop's 0.9 s step durations");
  assert.equal(e.tokensPerStep, 1002);
  assert.equal(e.totalTokens, 50 * 1002);
  // Start-up 5 − 3 = 2 s, then the first step's 3 s, then 49 steps at 0.5 s.
  assert.equal(e.wallSeconds, 2 + 3 + 49 * 0.5);
  const rl = estimateFromProbe({
    firstRowSeconds: 1,
    rows: [0, 1, 2].map((step) => ({
      step,
      "progress/done_frac": (step + 1) / 10,
      "env/all/total_ac_tokens": 100,
      "env/all/total_ob_tokens": 300,
      "time/total": 2,
    })),
  });
  assert.deepEqual([rl.steps, rl.stepSeconds, rl.tokensPerStep], [10, 2, 400], "RL keys; without arrival times the loop's own durations");
  const none = estimateFromProbe({ firstRowSeconds: 1, rows: [{ step: 0, loss: 1 }] });
  assert.equal(none.steps, null);
  assert.match(none.notes.join(" "), /no progress fraction/);
  assert.match(formatEstimate(e, "demo"), /steps {12}50\n {2}time per step {4}0\.50 s/);
});

test("evaluations after the probed steps are added: every eval_every steps and the last, at the step-0 cost", () => {
  const rows = (evalEvery: number) =>
    [0, 1, 2, 3, 4].map((step) => ({ step, progress: (step + 1) / 40, "time/total": 0.5, ...(step % evalEvery === 0 ? { "time/evals": 0.25 } : {}) }));
  const probe = (evalEvery: number) => ({ firstRowSeconds: 1, rows: rows(evalEvery), rowSeconds: [1, 1.5, 2, 2.5, 3] });
  const base = estimateFromProbe(probe(10)).wallSeconds!;
  // Steps 10, 20 and 30 evaluate, then the final evaluation: 4 × 0.25 s.
  const every10 = estimateFromProbe(probe(10), { evalEvery: 10 });
  assert.equal(every10.wallSeconds! - base, 4 * 0.25);
  assert.match(every10.notes.join(" "), /includes 4 later evaluations \(eval_every 10, and the last\) of 0\.25 s each/);
  // Evaluations inside the paced rows (steps 2 and 4) are already in the pace: only the final one is added.
  assert.equal(estimateFromProbe(probe(2), { evalEvery: 2 }).wallSeconds! - estimateFromProbe(probe(2)).wallSeconds!, 0.25);
  assert.equal(estimateFromProbe(probe(10), { evalEvery: 0 }).wallSeconds, base);
});

test("price tables: a user's file replaces the default, bad entries are named", () => {
  const dir = mkdtempSync(join(tmpdir(), "prices-"));
  try {
    const ok = join(dir, "ok.json");
    writeFileSync(ok, JSON.stringify({ "Qwen/Qwen3-8B": 0.6, "*": 1 }));
    const table = readPriceTable(ok);
    assert.equal(priceFor(table, "Qwen/Qwen3-8B"), 0.6);
    assert.equal(priceFor(table, "other"), 1);
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ "Qwen/Qwen3-8B": "cheap" }));
    assert.throws(() => readPriceTable(bad), /bad\.json: key "Qwen\/Qwen3-8B" must be a non-negative number/);
    assert.throws(() => readPriceTable(join(dir, "missing.json")), /missing\.json.*expected JSON/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a real probe: example_line_fit finishes within the probe, and its rows are the whole run", async () => {
  const probe = await probeRecipe("example_line_fit", [], { steps: 1000, timeoutMs: 60_000 });
  assert.ok(probe.rows.length > 10, `${probe.rows.length} rows`);
  assert.ok(probe.firstRowSeconds > 0);
  const e = estimateFromProbe(probe);
  assert.equal(e.steps, probe.rows.length, "progress says the run is done at its last row");
  assert.ok(probe.finishedSeconds !== undefined && e.wallSeconds === probe.finishedSeconds, "a run that ended within the probe is its own measurement");
  assert.ok(e.stepSeconds !== null && e.stepSeconds >= 0, "the loop's time/step gives the pace when rows arrived all at once");
});
