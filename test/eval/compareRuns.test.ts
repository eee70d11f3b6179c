// `cookbook eval --compare A B`: examples matched by id across two stored runs; a rising score is
// an improvement, a falling one a regression; run ids resolve by unique prefix; the CLI prints it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { compareEvalRuns, formatRunComparison, resolveEvalRunId } from "../../src/eval/compareRuns.ts";
import { EvalStore } from "../../src/eval/store.ts";

/** A run whose examples are right or wrong as given (id → [correct per sample], answer). */
function addRun(store: EvalStore, runId: string, model: string, benchmarks: Record<string, Record<string, [boolean[], string]>>): void {
  store.createRun(
    {
      run_id: runId,
      created_at: "2026-11-26T10:00:00Z",
      model,
      model_path: null,
      base_model: "tiny-chat",
      benchmarks: Object.keys(benchmarks),
      config_key: runId,
    },
    {},
  );
  for (const [bench, examples] of Object.entries(benchmarks)) {
    Object.entries(examples).forEach(([id, [correct, answer]], index) => {
      store.appendTrajectory(runId, bench, {
        example_id: id,
        index,
        prompt: [],
        reference: `ref-${id}`,
        samples: correct.map((c) => ({ response: answer, extracted: answer, correct: c })),
      });
    });
  }
}

function storeWithTwoRuns(): EvalStore {
  const store = new EvalStore(mkdtempSync(join(tmpdir(), "eval-compare-")));
  addRun(store, "20261126-base-aaaa", "tiny-chat", {
    gsm8k: { q1: [[true], "18"], q2: [[false], "7"], q3: [[true, true], "5"], q4: [[false], "1"], only_a: [[true], "3"] },
    arithmetic: { s1: [[true], "9"] },
  });
  addRun(store, "20261126-tuned-bbbb", "tinker://run/sampler_weights/final", {
    gsm8k: { q1: [[false], "17"], q2: [[true], "8"], q3: [[true, false], "5"], q4: [[false], "2"], only_b: [[true], "4"] },
    nll: { n1: [[true], ""] },
  });
  return store;
}

test("examples are matched by id: score rises are improvements, falls regressions; unshared ones counted apart", () => {
  const store = storeWithTwoRuns();
  const c = compareEvalRuns(store, "20261126-base", "20261126-tuned");
  assert.deepEqual([c.runA, c.runB], ["20261126-base-aaaa", "20261126-tuned-bbbb"]);
  assert.equal(c.modelB, "tinker://run/sampler_weights/final");
  assert.deepEqual(
    c.benchmarks.map((b) => b.benchmark),
    ["gsm8k"],
  );
  assert.deepEqual([c.onlyA, c.onlyB], [["arithmetic"], ["nll"]]);
  const g = c.benchmarks[0]!;
  assert.equal(g.shared, 4);
  assert.deepEqual(
    g.regressions.map((e) => [e.exampleId, e.before, e.after, e.beforeAnswer, e.afterAnswer]),
    [
      ["q1", 1, 0, "18", "17"],
      ["q3", 1, 0.5, "5", "5"],
    ],
  );
  assert.deepEqual(
    g.improvements.map((e) => e.exampleId),
    ["q2"],
  );
  assert.equal(g.scoreA, (1 + 0 + 1 + 0) / 4);
  assert.equal(g.scoreB, (0 + 1 + 0.5 + 0) / 4);
  assert.deepEqual([g.onlyA, g.onlyB], [1, 1]);
  const text = formatRunComparison(c, 1);
  assert.match(text, /gsm8k: 50\.0% → 37\.5% on 4 shared examples; 1 improved, 2 regressed/);
  assert.match(text, /q1 {2}reference "ref-q1" {2}A 100\.0% "18" → B 0\.0% "17"/);
  assert.match(text, /… 1 more \(limit=1\)/);
  assert.match(text, /only in A: arithmetic/);
});

test("run ids resolve by unique prefix; unknown or ambiguous ones are refused with the candidates", () => {
  const store = storeWithTwoRuns();
  assert.equal(resolveEvalRunId(store, "20261126-t"), "20261126-tuned-bbbb");
  assert.throws(() => resolveEvalRunId(store, "2026"), /matches 2 runs: 20261126-base-aaaa, 20261126-tuned-bbbb/);
  assert.throws(() => resolveEvalRunId(store, "nope"), /no eval run "nope"/);
});

test("cookbook eval --compare A B prints the comparison", async () => {
  const store = storeWithTwoRuns();
  const REPO = resolve(import.meta.dirname, "../..");
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
    execFile(
      process.execPath,
      [join(REPO, "bin/cookbook.js"), "eval", "--compare", "20261126-base", "20261126-tuned", `store=${store.root}`, "limit=5"],
      { cwd: REPO, env: { ...process.env, CI: "1" }, timeout: 120_000 },
      (err, stdout, stderr) => done({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    ),
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^A = 20261126-base-aaaa \(tiny-chat\)$/m);
  assert.match(r.stdout, /regressions \(right in A, worse in B\):\n {4}q1 /);
  assert.match(r.stdout, /improvements \(better in B\):\n {4}q2 /);
});
