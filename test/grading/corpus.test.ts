// The grader against the labelled corpus (fixtures/grading/corpus.jsonl, written by
// scripts/makeGradingCorpus.ts, and heldout.jsonl, hand-written responses first graded after the
// grader was done): accuracy per path (math / GSM8K × boxed / lenient) must stay at or above
// 0.99, every category is present in both modes, and grading never throws on junk.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { grade } from "../../src/grading/index.ts";
import { GRADING_CATEGORIES } from "./categories.ts";

interface Row {
  id: string;
  path: "math" | "gsm8k";
  mode: "boxed" | "lenient";
  category: string;
  response: string;
  reference: string;
  correct: boolean;
}

function readRows(name: string): Row[] {
  return readFileSync(join(fileURLToPath(new URL("../../fixtures/grading/", import.meta.url)), name), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Row);
}
const rows = readRows("corpus.jsonl");
const heldout = readRows("heldout.jsonl");

test("the corpus covers every category in both modes, near misses included", () => {
  assert.ok(rows.length >= 600, `${rows.length} rows`);
  const categories = new Set(rows.map((r) => `${r.path}/${r.category}`));
  for (const c of GRADING_CATEGORIES) {
    assert.ok(categories.has(`math/${c}`), c);
  }
  for (const path of ["math", "gsm8k"] as const) {
    for (const mode of ["boxed", "lenient"] as const) {
      const some = rows.filter((r) => r.path === path && r.mode === mode);
      assert.ok(some.filter((r) => !r.correct).length >= 20, `${path} ${mode}: near misses`);
      assert.ok(some.filter((r) => r.correct).length >= 20, `${path} ${mode}: correct answers`);
    }
  }
});

test("accuracy against the labels is at least 0.99 on each path", () => {
  const report: string[] = [];
  for (const path of ["math", "gsm8k"] as const) {
    for (const mode of ["boxed", "lenient"] as const) {
      const some = [...rows, ...heldout].filter((r) => r.path === path && r.mode === mode);
      const wrong = some.filter((r) => grade(r.response, r.reference, { mode }).correct !== r.correct);
      const accuracy = 1 - wrong.length / some.length;
      report.push(`${path} ${mode}: ${accuracy.toFixed(3)} (${some.length})`);
      assert.ok(
        accuracy >= 0.99,
        `${path} ${mode}: accuracy ${accuracy.toFixed(3)}; wrong: ${wrong
          .slice(0, 5)
          .map((r) => r.id)
          .join(", ")}`,
      );
    }
  }
  assert.equal(report.length, 4);
});

test("grading never throws and bounds the symbolic work on hostile input", () => {
  const junk = [
    "\\boxed{",
    "\\boxed{}}}}",
    "}".repeat(1000) + "\\boxed{1}",
    "\\boxed{" + "(".repeat(500) + "x" + ")".repeat(500) + "}",
    "\\boxed{10^{10^{10^{10}}}}",
    "\\boxed{\\frac{1}{0}}",
    "\\boxed{x^{x^{x^{x}}}}",
    "\\boxed{\\sqrt{-1}}",
    "\u0000\\boxed{\u0000}",
  ];
  for (const response of junk) {
    for (const mode of ["boxed", "lenient"] as const) {
      const start = performance.now();
      const g = grade(response, "x^2+1", { mode, timeLimitMs: 50 });
      assert.equal(typeof g.correct, "boolean");
      assert.ok(performance.now() - start < 2000, `${JSON.stringify(response.slice(0, 40))} took too long`);
    }
  }
  assert.equal(grade("\\boxed{\\frac{1}{0}}", "1", { mode: "boxed" }).correct, false);
});
