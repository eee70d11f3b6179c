// The Evals screen in the whole app: results table, models side by side, examples with the
// filter, one example in full; and the runs table's latest eval scores.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { EvalStore } from "../../src/eval/store.ts";
import { makeSlRun, tempRoot } from "./fixtures.ts";
import { renderApp } from "./harness.tsx";

function seedStore(root: string): void {
  const store = new EvalStore(join(root, "evals"));
  const add = (runId: string, at: string, model: string, modelPath: string | null, accuracy: number, answers: string[]) => {
    store.createRun(
      { run_id: runId, created_at: at, model, model_path: modelPath, base_model: "tiny-chat", benchmarks: ["arithmetic"], config_key: runId },
      {},
    );
    answers.forEach((a, i) => {
      const ref = String(10 + i);
      store.appendTrajectory(runId, "arithmetic", {
        example_id: `${i}+10`,
        index: i,
        prompt: [{ role: "user", content: `What is ${i} + 10?` }],
        reference: ref,
        samples: [{ response: `${a} is it`, extracted: a, correct: a === ref, num_tokens: 3, stop_reason: "stop" }],
      });
    });
    store.writeResult({
      benchmark: "arithmetic",
      run_id: runId,
      model,
      model_path: modelPath,
      base_model: "tiny-chat",
      metrics: { accuracy, num_examples: answers.length, errors: 0 },
      num_examples: answers.length,
      config: {},
      started_at: at,
      finished_at: at,
    });
    store.writeMetadata({ ...store.readMetadata(runId)!, status: "complete" });
  };
  add("base-run", "2026-11-23T21:00:00.000Z", "tiny-chat", null, 1 / 3, ["10", "99", "98"]);
  add("trained-run", "2026-11-23T21:05:00.000Z", "tinker://sl/sampler_weights/final", "tinker://sl/sampler_weights/final", 2 / 3, ["10", "11", "77"]);
}

test("Evals screen: results, side by side, examples filtered to wrong ones, an example in full", async () => {
  const root = tempRoot();
  seedStore(root);
  const h = renderApp(root, { first: { name: "evals" }, columns: 130, rows: 30 });
  try {
    const results = await h.waitFor((f) => f.includes("2 results"), "results table");
    const lines = results.split("\n");
    const trained = lines.findIndex((l) => l.includes("sl/final") && l.includes("accuracy 66.7%"));
    const base = lines.findIndex((l) => l.includes("tiny-chat") && l.includes("accuracy 33.3%"));
    assert.ok(trained > 0 && base > trained, `newest first:\n${results}`);
    await h.press("\t");
    const cmp = await h.waitFor((f) => f.includes("side by side"), "comparison");
    const cl = cmp.split("\n");
    assert.ok(cl.findIndex((l) => /sl\/final\s+66\.7%/.test(l)) < cl.findIndex((l) => /tiny-chat\s+33\.3%/.test(l)), `best first:\n${cmp}`);
    await h.press("\t");
    await h.waitFor((f) => f.includes("2 results"), "back to results");
    await h.press("\r");
    await h.waitFor((f) => f.includes("examples 3/3") && f.includes("filter: all"), "examples of the newest result");
    await h.press("f");
    const wrong = await h.waitFor((f) => f.includes("examples 1/3") && f.includes("filter: wrong"), "wrong ones");
    assert.match(wrong, /2 ✗ {2}ref 12 +got 77 +│ What is 2 \+ 10\?/);
    await h.press("\r");
    const detail = await h.waitFor((f) => f.includes("── sample 1/1: WRONG"), "example detail");
    assert.match(detail, /example 2\+10 \(#2\) {3}reference: 12/);
    assert.match(detail, /\[user\]\n {2}What is 2 \+ 10\?/);
    assert.match(detail, /extracted: 77/);
    assert.match(detail, / {2}77 is it/);
    await h.press("\x1b");
    await h.waitFor((f) => f.includes("filter: wrong"), "esc: back to the list");
    await h.press("\x1b");
    await h.waitFor((f) => f.includes("2 results"), "esc: back to the results");
    await h.press("?");
    const help = await h.waitFor((f) => f.includes("Results list ↔ models side by side"), "help lists the screen's keys");
    assert.match(help, /Examples: show all, wrong, right or failed ones/);
  } finally {
    h.unmount();
  }
});

test("home: E opens the Evals screen and the runs table shows a run's latest eval scores", async () => {
  const root = tempRoot();
  makeSlRun(root);
  seedStore(root);
  const h = renderApp(root, { columns: 170, rows: 30 });
  try {
    const home = await h.waitFor((f) => f.includes("sl-run"), "runs table");
    assert.match(home, /evals/);
    // The trained eval ran on sl-run's final sampler checkpoint.
    assert.match(home.split("\n").find((l) => l.includes("sl-run"))!, /arithmetic 66\.7%/);
    await h.press("E");
    await h.waitFor((f) => f.includes("2 results"), "Evals screen");
  } finally {
    h.unmount();
  }
});

test("Evals screen: m marks run A, d compares it with the run under the cursor example by example", async () => {
  const root = tempRoot();
  seedStore(root);
  const h = renderApp(root, { first: { name: "evals" }, columns: 130, rows: 30 });
  try {
    await h.waitFor((f) => f.includes("2 results"), "results table");
    await h.press("d");
    assert.ok(!h.frame().includes("example by example"), "d without a marked run does nothing");
    await h.press("m");
    await h.waitFor((f) => f.includes("A = trained-run"), "the newest run marked as A");
    await h.press("j");
    await h.press("d");
    const diff = await h.waitFor(
      (f) => f.includes("trained-run (A) vs base-run (B), example by example") && !f.includes("comparing the two runs…"),
      "the comparison",
    );
    assert.match(diff, /arithmetic: 66\.7% → 33\.3% on 3 shared examples; 0 improved, 1 regressed/);
    assert.match(diff, /regressions \(right in A, worse in B\):\n {4}1\+10 {2}reference "11" {2}A 100\.0% "11" → B 0\.0% "99"/);
    await h.press("\x1b");
    await h.waitFor((f) => f.includes("2 results") && f.includes("A = trained-run"), "esc: back to the results, A still marked");
  } finally {
    h.unmount();
  }
});
