import { test } from "node:test";
import assert from "node:assert/strict";
import { extractChoiceLetter, gradeChoice } from "../../src/eval/choiceGrading.ts";

test("multiple-choice letters from explicit statements, boxes, leading letters and parentheses", () => {
  assert.equal(extractChoiceLetter("Answer: B", 4), "B");
  assert.equal(extractChoiceLetter("The answer is (c).", 4), "C");
  assert.equal(extractChoiceLetter("\\boxed{D}", 4), "D");
  assert.equal(extractChoiceLetter("A. because ...", 4), "A");
  assert.equal(extractChoiceLetter("I would say a) is wrong; answer is B", 4), "B");
  assert.equal(extractChoiceLetter("Between (A) and (C), (C) fits.", 4), "C");
  // E is not an option among four.
  assert.equal(extractChoiceLetter("Answer: E", 4), null);
  assert.equal(extractChoiceLetter("I don't know", 4), null);
  assert.deepEqual(gradeChoice("answer: b", "B", 4), { correct: true, extracted: "B" });
  assert.deepEqual(gradeChoice("Answer: A", "B", 4), { correct: false, extracted: "A" });
});
