// The grader on the independent corpus (fixtures/grading/independent-{boxed,lenient}.jsonl, written by
// scripts/makeGradingIndependentCorpus.ts apart from corpus.jsonl: other answers, other response
// shapes): accuracy against the labels per path (math / GSM8K × boxed / lenient) is at least 0.99,
// every category of the issue is present in both modes, and near misses make up a good share.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { grade } from "../../src/grading/index.ts";
import { GRADING_CATEGORIES } from "./categories.ts";

interface Row {
  id: string;
  path: "math" | "gsm8k";
  mode: "boxed" | "lenient";
  category: string;
  shape: string;
  response: string;
  reference: string;
  correct: boolean;
}

const rows: Row[] = (["boxed", "lenient"] as const).flatMap((mode) => {
  const name = `independent-${mode}.jsonl`;
  return readFileSync(fileURLToPath(new URL(`../../fixtures/grading/${name}`, import.meta.url)), "utf8")
    .split("\n")
    .map((l, i) => ({ l, i }))
    .filter(({ l }) => l.trim() !== "")
    .map(({ l, i }) => ({ ...(JSON.parse(l) as Omit<Row, "id">), id: `${name}:${i + 1}` }));
});

test("the independent corpus: ≥ 600 cases over every category, both modes, near misses and format failures", () => {
  assert.ok(rows.length >= 600, `${rows.length} rows`);
  for (const c of GRADING_CATEGORIES) {
    for (const mode of ["boxed", "lenient"] as const)
      assert.ok(
        rows.some((r) => r.path === "math" && r.category === c && r.mode === mode),
        `math/${c} ${mode}`,
      );
  }
  for (const path of ["math", "gsm8k"] as const) {
    for (const mode of ["boxed", "lenient"] as const) {
      const some = rows.filter((r) => r.path === path && r.mode === mode);
      assert.ok(some.filter((r) => !r.correct).length >= 20, `${path} ${mode}: near misses`);
      assert.ok(some.filter((r) => r.correct).length >= 20, `${path} ${mode}: accepted answers`);
    }
  }
  // The shapes the cookbook's grader gets wrong are all there.
  for (const shape of ["decoy_box_first", "right_then_wrong_box", "fbox", "stray_brace_before", "no_box"])
    assert.ok(
      rows.some((r) => r.shape === shape),
      shape,
    );
});

test("accuracy on the independent corpus is at least 0.99 on each path", (t) => {
  for (const path of ["math", "gsm8k"] as const) {
    for (const mode of ["boxed", "lenient"] as const) {
      const some = rows.filter((r) => r.path === path && r.mode === mode);
      const wrong = some.filter((r) => grade(r.response, r.reference, { mode }).correct !== r.correct);
      const accuracy = 1 - wrong.length / some.length;
      t.diagnostic(`${path} ${mode}: ${accuracy.toFixed(4)} on ${some.length}`);
      assert.ok(
        accuracy >= 0.99,
        `${path} ${mode}: accuracy ${accuracy.toFixed(3)}; wrong: ${wrong
          .slice(0, 5)
          .map((r) => `${r.id} (${r.category}/${r.shape})`)
          .join(", ")}`,
      );
    }
  }
});
