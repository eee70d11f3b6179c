import { test } from "node:test";
import assert from "node:assert/strict";
import { evalsReducer, handlesBack, initialEvals, moveCursor } from "../../src/tui/ui/screens/evals/evalsState.ts";
import {
  compareLines,
  exampleDetailLines,
  exampleLine,
  filterExamples,
  resultRows,
  resultTableLines,
  shortModel,
} from "../../src/tui/ui/screens/evals/evalsView.ts";
import type { EvalRunView } from "../../src/eval/reader.ts";
import { compareByBenchmark } from "../../src/eval/reader.ts";
import type { TrajectoryRecord } from "../../src/eval/store.ts";

test("evals reducer: levels, cursors, filter and back", () => {
  let s = initialEvals();
  assert.equal(handlesBack(s), false);
  s = evalsReducer(s, { type: "move", cmd: "down", count: 3, page: 10 });
  s = evalsReducer(s, { type: "move", cmd: "down", count: 3, page: 10 });
  s = evalsReducer(s, { type: "move", cmd: "down", count: 3, page: 10 });
  assert.equal(s.resultCursor, 2, "stops at the last row");
  s = evalsReducer(s, { type: "toggleCompare" });
  assert.equal(s.level, "compare");
  s = evalsReducer(s, { type: "move", cmd: "bottom", count: 5, page: 2 });
  assert.equal(s.compareCursor, 4);
  assert.equal(s.resultCursor, 2, "each level keeps its own cursor");
  s = evalsReducer(s, { type: "back" });
  assert.equal(s.level, "results");
  s = evalsReducer(s, { type: "openResult", runId: "r1", benchmark: "arithmetic" });
  assert.deepEqual([s.level, s.open], ["examples", { runId: "r1", benchmark: "arithmetic" }]);
  assert.equal(handlesBack(s), true);
  s = evalsReducer(s, { type: "move", cmd: "pageDown", count: 100, page: 20 });
  assert.equal(s.exampleCursor, 20);
  s = evalsReducer(s, { type: "cycleFilter" });
  assert.deepEqual([s.filter, s.exampleCursor], ["wrong", 0], "a new filter starts at the top");
  s = evalsReducer(s, { type: "openExample" });
  assert.equal(s.level, "example");
  s = evalsReducer(s, { type: "move", cmd: "down", count: 40, page: 10 });
  assert.equal(s.detailScroll, 1);
  s = evalsReducer(s, { type: "cycleFilter" });
  assert.equal(s.filter, "wrong", "the filter only changes in the examples list");
  s = evalsReducer(s, { type: "back" });
  assert.equal(s.level, "examples");
  s = evalsReducer(s, { type: "back" });
  assert.deepEqual([s.level, s.open], ["results", undefined]);
  assert.equal(moveCursor(5, "up", 0, 3), 0);
  assert.equal(moveCursor(9, "up", 4, 3), 2, "a cursor past a shrunken list comes back inside");
});

const runs: EvalRunView[] = [
  {
    runId: "new",
    createdAt: "2026-11-23T21:01:12.000Z",
    updatedAt: "",
    status: "complete",
    model: "tinker://local-1/sampler_weights/final",
    modelPath: "tinker://local-1/sampler_weights/final",
    baseModel: "tiny-chat",
    sourceRun: null,
    step: null,
    results: { arithmetic: { accuracy: 0.55, num_examples: 100, errors: 0, "pass@1": 0.55, "pass@4": 0.9 } },
    progress: {},
  },
  {
    runId: "old",
    createdAt: "2026-11-23T21:00:53.000Z",
    updatedAt: "",
    status: "running",
    model: "tiny-chat",
    modelPath: null,
    baseModel: "tiny-chat",
    sourceRun: null,
    step: null,
    results: { arithmetic: { accuracy: 0.24, num_examples: 100, errors: 2 } },
    progress: { gsm8k: 12 },
  },
];

test("evals view: result rows, comparison best first, examples filtered and shown", () => {
  const rows = resultRows(runs);
  assert.deepEqual(
    rows.map((r) => [r.runId, r.benchmark, r.model, r.score, r.status]),
    [
      ["new", "arithmetic", "local-1/final", "accuracy 55.0%", "done"],
      ["old", "arithmetic", "tiny-chat", "accuracy 24.0%", "done"],
      ["old", "gsm8k", "tiny-chat", "12 done", "running"],
    ],
  );
  assert.equal(rows[0]!.extra, "n=100  pass@4 90.0%");
  assert.equal(rows[1]!.extra, "n=100  2 errors");
  const table = resultTableLines(rows, 120);
  assert.match(table.header, /^status\s+benchmark\s+model\s+score\s+when\s+details$/);
  assert.match(table.lines[0]!, /^done\s+arithmetic\s+local-1\/final\s+accuracy 55\.0%\s+2026-11-23 21:01/);
  const cmp = compareLines(compareByBenchmark(runs), 80);
  assert.equal(cmp[0], "arithmetic");
  assert.match(cmp[1]!, /^ {2}local-1\/final\s+55\.0%/);
  assert.match(cmp[2]!, /^ {2}tiny-chat\s+24\.0%/);
  assert.ok(cmp[1]!.split("█").length > cmp[2]!.split("█").length, "the better model has the longer bar");
  assert.equal(shortModel("tiny-chat"), "tiny-chat");

  const recs: TrajectoryRecord[] = [
    {
      example_id: "3+4",
      index: 0,
      prompt: [{ role: "user", content: "What is 3 + 4?" }],
      reference: "7",
      samples: [{ response: "7", extracted: "7", correct: true, num_tokens: 2, stop_reason: "stop" }],
    },
    {
      example_id: "5+5",
      index: 1,
      prompt: [{ role: "user", content: "What is 5 + 5?" }],
      reference: "10",
      samples: [{ response: "11 apples", extracted: "11", correct: false }],
    },
    { example_id: "9+9", index: 2, prompt: [{ role: "user", content: "What is 9 + 9?" }], reference: "18", samples: [], error: "timed out" },
  ];
  assert.deepEqual(
    filterExamples(recs, "wrong").map((r) => r.index),
    [1],
  );
  assert.deepEqual(
    filterExamples(recs, "right").map((r) => r.index),
    [0],
  );
  assert.deepEqual(
    filterExamples(recs, "errors").map((r) => r.index),
    [2],
  );
  assert.equal(filterExamples(recs, "all").length, 3);
  assert.match(exampleLine(recs[0]!, 80), /^ {3}0 ✓ {2}ref 7 +got 7 +│ What is 3 \+ 4\?$/);
  assert.match(exampleLine(recs[1]!, 80), /^ {3}1 ✗ {2}ref 10 +got 11 +│ What is 5 \+ 5\?$/);
  assert.match(exampleLine(recs[2]!, 80), /^ {3}2 ! {2}ref 18 +got error/);
  const detail = exampleDetailLines(recs[1]!, 60);
  assert.deepEqual(detail.slice(0, 4), ["example 5+5 (#1)   reference: 10", "── prompt", "[user]", "  What is 5 + 5?"]);
  assert.match(detail[4]!, /^── sample 1\/1: WRONG {2}extracted: 11/);
  assert.equal(detail[5], "  11 apples");
});

test("examples header columns line up with the rows", async () => {
  const { EXAMPLE_HEADER } = await import("../../src/tui/ui/screens/evals/evalsView.ts");
  const row = exampleLine(
    { example_id: "x", index: 7, prompt: [{ role: "user", content: "q" }], reference: "12", samples: [{ response: "3", extracted: "3", correct: false }] },
    80,
  );
  assert.equal(EXAMPLE_HEADER.indexOf("│"), row.indexOf("│"));
  assert.equal(EXAMPLE_HEADER.indexOf("reference"), row.indexOf("ref "));
  assert.equal(EXAMPLE_HEADER.indexOf("extracted"), row.indexOf("got "));
});
