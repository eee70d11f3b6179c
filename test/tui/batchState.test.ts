// The Batch screen's reducer (levels, cursors, launch dialog, following a launch) and its pure
// views: the comparison grid with each test set's best marked, phase labels and run rows.
import { test } from "node:test";
import assert from "node:assert/strict";
import { keyPress } from "../../src/tui/keys/keymap.ts";
import type { BatchRunView } from "../../src/experiments/batches.ts";
import type { BatchState, Comparison } from "../../src/experiments/state.ts";
import {
  type BatchScreenState,
  batchPlace,
  batchScreenReducer,
  handlesBack,
  initialBatchScreen,
  launchTarget,
} from "../../src/tui/ui/screens/batch/batchState.ts";
import { comparisonGrid, countsLabel, phaseLabel, runLines } from "../../src/tui/ui/screens/batch/batchView.ts";

const key = keyPress;

test("cursors move within the list shown; enter opens a batch; esc closes the dialog, then the batch", () => {
  let s = initialBatchScreen();
  s = batchScreenReducer(s, { type: "move", cmd: "down", count: 3, page: 5 });
  s = batchScreenReducer(s, { type: "move", cmd: "down", count: 3, page: 5 });
  s = batchScreenReducer(s, { type: "move", cmd: "down", count: 3, page: 5 });
  assert.equal(s.batchCursor, 2);
  s = batchScreenReducer(s, { type: "openBatch", dir: "/e/grid" });
  s = batchScreenReducer(s, { type: "move", cmd: "bottom", count: 4, page: 5 });
  assert.deepEqual([s.open, s.runCursor, s.batchCursor], ["/e/grid", 3, 2], "run cursor moves, batch cursor kept");
  assert.deepEqual(initialBatchScreen(batchPlace(s)), { open: "/e/grid", batchCursor: 2, runCursor: 3 }, "a place restores the same view");
  s = batchScreenReducer(s, { type: "openLaunch" });
  assert.ok(handlesBack(s));
  s = batchScreenReducer(s, { type: "back" });
  assert.equal(s.launch, undefined);
  assert.equal(s.open, "/e/grid");
  s = batchScreenReducer(s, { type: "back" });
  assert.equal(s.open, undefined);
  assert.equal(handlesBack(s), false, "esc on the list leaves the screen");
});

test("the launch dialog filters the files by what is typed, picks with arrows, else launches the typed path", () => {
  const files = ["/e/grid.ts", "/e/sweep.yaml", "/e/sweep-big.yaml"];
  let s: BatchScreenState = batchScreenReducer(initialBatchScreen(), { type: "openLaunch" });
  assert.equal(launchTarget(s.launch!, files), "/e/grid.ts");
  for (const c of "sweep") s = batchScreenReducer(s, { type: "launchKey", input: c, key: key(), count: 2 });
  s = batchScreenReducer(s, { type: "launchKey", input: "", key: key({ downArrow: true }), count: 2 });
  s = batchScreenReducer(s, { type: "launchKey", input: "", key: key({ downArrow: true }), count: 2 });
  assert.equal(s.launch!.cursor, 1, "stops at the last match");
  assert.equal(launchTarget(s.launch!, files), "/e/sweep-big.yaml");
  s = batchScreenReducer(s, { type: "launchKey", input: "", key: key({ backspace: true }), count: 2 });
  assert.equal(s.launch!.cursor, 0, "editing resets the pick");
  s = batchScreenReducer(s, { type: "launchKey", input: "", key: key({ ctrl: true }), count: 2 });
  s = batchScreenReducer(initialBatchScreen(), { type: "openLaunch" });
  for (const c of "../other/exp.json") s = batchScreenReducer(s, { type: "launchKey", input: c, key: key(), count: 0 });
  assert.equal(launchTarget(s.launch!, files), "../other/exp.json");
  assert.equal(launchTarget({ text: "  ", cursor: 0 }, []), undefined);
  s = batchScreenReducer(s, { type: "launchError", error: "no experiment file at x" });
  assert.equal(s.launch!.error, "no experiment file at x");
  s = batchScreenReducer(s, { type: "launched", pending: { file: "/e/a.ts", pid: 7, logFile: "/e/a.ts.batch.log", at: 1 } });
  assert.deepEqual([s.launch, s.pending?.pid], [undefined, 7]);
  s = batchScreenReducer(s, { type: "found", dir: "/e/a" });
  assert.deepEqual([s.pending, s.open], [undefined, "/e/a"]);
});

const comparison: Comparison = {
  experiment: "x",
  created_at: "2026-01-01T00:00:00Z",
  test_sets: [
    { name: "arith", kind: "accuracy", metric: "accuracy", higher_is_better: true },
    { name: "chat", kind: "nll", metric: "nll", higher_is_better: false },
  ],
  models: [
    { name: "base:tiny", kind: "baseline", base_model: "tiny" },
    { name: "a", kind: "run", base_model: "tiny", run: "a" },
    { name: "b", kind: "run", base_model: "tiny", run: "b" },
  ],
  results: [
    { model: "base:tiny", test_set: "arith", value: 0.1, n: 10 },
    { model: "base:tiny", test_set: "chat", value: 2.5, n: 10 },
    { model: "a", test_set: "arith", value: 0.7, n: 10 },
    { model: "a", test_set: "chat", value: null, n: 0, error: "sampler crashed" },
    { model: "b", test_set: "arith", value: 0.7, n: 10 },
    { model: "b", test_set: "chat", value: 1.25, n: 10 },
  ],
};

test("comparison grid: models × test sets, best per test set by its direction (ties all best), failures shown", () => {
  const g = comparisonGrid(comparison);
  assert.deepEqual(g.columns, ["arith (accuracy ↑)", "chat (nll ↓)"]);
  assert.deepEqual(
    g.rows.map((r) => [r.model, ...r.cells.map((c) => c.text)]),
    [
      ["base:tiny", "10.0%", "2.5"],
      ["a", "70.0% *", "error"],
      ["b", "70.0% *", "1.25 *"],
    ],
  );
  assert.equal(g.rows[1]!.cells[1]!.error, "sampler crashed");
  assert.deepEqual(
    g.rows.map((r) => r.cells.filter((c) => c.best).length),
    [0, 1, 2],
  );
});

test("phase labels, counts and run rows", () => {
  const state = (phase: BatchState["phase"]): BatchState => ({ experiment: "x", file: "/x.ts", updated_at: "2026-01-01T00:00:00Z", phase, runs: [] });
  assert.equal(phaseLabel({ live: false, state: state("training") }), "interrupted", "its process is gone");
  assert.equal(phaseLabel({ live: true, state: state("evaluating") }), "evaluating");
  assert.equal(phaseLabel({ live: false, state: state("done") }), "done");
  assert.equal(phaseLabel({ live: false, state: undefined, error: "bad" }), "unreadable");
  assert.equal(countsLabel({ queued: 2, running: 1, done: 3, failed: 0, stopped: 0 }), "3 done · 1 running · 2 queued");
  const run = (over: Partial<BatchRunView>): BatchRunView => ({
    name: "r",
    recipe: "sl_basic",
    overrides: {},
    log_path: "",
    status: "done",
    dir: "/r",
    started: true,
    spark: [],
    ...over,
  });
  const t = runLines([run({ metric: "loss", latest: 0.25, lastStep: 9, spark: [3, 2, 1] }), run({ status: "failed", error: "oom\nat line 3" })], 120);
  assert.match(t.header, /^status\s+run\s+recipe\s+step\s+key metric\s+latest\s+trend$/);
  assert.match(t.row(0), /^done\s+r\s+sl_basic\s+9\s+loss\s+0\.25\s+█▅▁$/);
  assert.match(t.row(1), /^failed .* error: oom$/);
  assert.ok(t.row(0).length <= 120);
});
