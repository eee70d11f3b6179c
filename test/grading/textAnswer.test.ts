// Short text answers graded as the cookbook's search_tool grades them (SQuAD's normalisation):
// the text after the last "Answer:", exact match after normalising, best word-overlap F1.
import { test } from "node:test";
import assert from "node:assert/strict";
import { exactMatch, extractAnswerLine, gradeTextAnswer, normalizeTextAnswer, tokenF1 } from "../../src/grading/index.ts";

test("normalisation drops case, punctuation, articles and extra spaces", () => {
  assert.equal(normalizeTextAnswer("  The Eiffel-Tower, Paris! "), "eiffeltower paris");
  assert.equal(normalizeTextAnswer("a cat and an owl"), "cat and owl");
  assert.equal(normalizeTextAnswer("Theatre"), "theatre", "only whole-word articles go");
});

test("the answer is what follows the last Answer:", () => {
  assert.equal(extractAnswerLine("I searched. Answer: x. Answer:  Melkan "), "Melkan");
  assert.equal(extractAnswerLine("Melkan"), null);
  assert.equal(extractAnswerLine("answer: Melkan"), null, "the marker is case-sensitive, as in the cookbook");
});

test("exact match against any gold answer; F1 by word overlap", () => {
  assert.equal(exactMatch("the Rekros.", ["Rekros"]), true);
  assert.equal(exactMatch("Rekros river", ["Rekros"]), false);
  assert.equal(exactMatch("Kabi", ["Rekros", "kabi"]), true);
  assert.equal(tokenF1("Rekros river", ["Rekros"]), 2 / 3);
  assert.equal(tokenF1("New York City", ["new york"]), 0.8);
  assert.equal(tokenF1("", ["x"]), 0);
  assert.equal(tokenF1("x y", ["z"]), 0);
});

test("a reply without Answer: is unformatted and wrong even if it names the gold answer", () => {
  assert.deepEqual(gradeTextAnswer("Rekros", ["Rekros"]), { format: 0, correct: 0, f1: 0 });
  assert.deepEqual(gradeTextAnswer("Answer: Rekros", ["Rekros"]), { format: 1, correct: 1, f1: 1 });
  assert.deepEqual(gradeTextAnswer("Answer: Kabi", ["Rekros"]), { format: 1, correct: 0, f1: 0 });
});
