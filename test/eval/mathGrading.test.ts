import { test } from "node:test";
import assert from "node:assert/strict";
import {
  extractBoxed,
  extractLastNumber,
  extractMathAnswer,
  gradeFirstChunk,
  gradeMathResponse,
  gsm8kReference,
  mathAnswersEqual,
  normalizeMathAnswer,
} from "../../src/eval/mathGrading.ts";
import { extractChoiceLetter, gradeChoice } from "../../src/eval/choiceGrading.ts";

test("extractBoxed takes the last box and balances nested braces", () => {
  assert.equal(extractBoxed("first \\boxed{1} then \\boxed{\\frac{1}{2}}."), "\\frac{1}{2}");
  assert.equal(extractBoxed("\\boxed{\\{1,2\\}}"), "\\{1,2\\}");
  assert.equal(extractBoxed("\\fbox{7}"), "7");
  assert.equal(extractBoxed("so \\boxed 42$"), "42");
  assert.equal(extractBoxed("unclosed \\boxed{3"), null);
  assert.equal(extractBoxed("no box"), null);
});

test("final answers: boxed wins, then stated answers, then the last number", () => {
  assert.equal(extractMathAnswer("She has 3 + 4 = 7 apples, so 7 * 2 = 14. #### 14"), "14");
  assert.equal(extractMathAnswer("Costs $1,250 in total. The answer is $1,250."), "1,250");
  assert.equal(extractMathAnswer("Step 1: 12 eggs. Final answer: 18 eggs"), "18");
  assert.equal(extractMathAnswer("The answer is \\frac{3}{4}."), "\\frac{3}{4}");
  assert.equal(extractMathAnswer("2 then 3 and finally -5.5"), "-5.5");
  assert.equal(extractMathAnswer("I think \\boxed{12} although 13 is close"), "12");
  assert.equal(extractMathAnswer("no numbers here"), null);
  assert.equal(extractLastNumber("ratio 3 / 4"), "3/4");
});

test("normalisation: fractions, thousands separators, currency, percent, degrees, units, x =", () => {
  assert.equal(normalizeMathAnswer("\\dfrac{1}{2}"), "(1)/(2)");
  assert.equal(normalizeMathAnswer("\\frac12"), "(1)/(2)");
  assert.equal(normalizeMathAnswer("1,234,567"), "1234567");
  assert.equal(normalizeMathAnswer("\\$5.00"), "5.00");
  assert.equal(normalizeMathAnswer("50\\%"), "50");
  assert.equal(normalizeMathAnswer("90^\\circ"), "90");
  assert.equal(normalizeMathAnswer("10\\text{ cm}"), "10");
  assert.equal(normalizeMathAnswer("12 inches"), "12");
  assert.equal(normalizeMathAnswer("x = 3"), "3");
  assert.equal(normalizeMathAnswer("\\left( 3, 4 \\right)"), "(3,4)");
  // A tuple's comma is not a thousands separator.
  assert.equal(normalizeMathAnswer("(1, 234)"), "(1,234)");
  assert.equal(normalizeMathAnswer("\\sqrt2"), "\\sqrt{2}");
  assert.equal(normalizeMathAnswer("\\text{Monday}"), "monday");
});

test("equality by value for numbers, by text otherwise", () => {
  const equal: [string, string][] = [
    ["\\frac{1}{2}", "0.5"],
    ["1/2", "\\dfrac{1}{2}"],
    ["-\\frac{3}{4}", "-0.75"],
    ["\\frac{-3}{4}", "-0.75"],
    ["1,000", "1000"],
    ["$1,000.00", "1000"],
    ["3.0", "3"],
    [".5", "0.5"],
    ["25%", "25"],
    ["45^\\circ", "45"],
    ["5 dollars", "5"],
    ["\\frac{\\sqrt{3}}{2}", "\\dfrac{\\sqrt3}{2}"],
    ["x=\\frac{2}{3}", "\\frac23"],
    ["(3,4)", "\\left(3, 4\\right)"],
  ];
  for (const [a, b] of equal) assert.ok(mathAnswersEqual(a, b), `${a} should equal ${b}`);
  const different: [string, string][] = [
    ["12", "1/2"],
    ["1,234", "1.234"],
    ["(1,2)", "12"],
    ["0.333", "\\frac{1}{3}"],
    ["-5", "5"],
    ["", "0"],
    ["\\sqrt{2}", "2"],
  ];
  for (const [a, b] of different) assert.ok(!mathAnswersEqual(a, b), `${a} should differ from ${b}`);
});

test("gradeMathResponse reports the extracted answer and correctness", () => {
  assert.deepEqual(gradeMathResponse("so the total is \\boxed{1,440}", "1440"), { correct: true, extracted: "1,440" });
  assert.deepEqual(gradeMathResponse("I get 7, no wait, 8", "7"), { correct: false, extracted: "8" });
  assert.deepEqual(gradeMathResponse("", "7"), { correct: false, extracted: null });
});

test("first-chunk grading (arithmetic) and GSM8K references", () => {
  assert.deepEqual(gradeFirstChunk(" 17 is the answer", "17"), { correct: true, extracted: "17" });
  assert.deepEqual(gradeFirstChunk("The answer is 17", "17"), { correct: false, extracted: "The" });
  assert.deepEqual(gradeFirstChunk("   ", "17"), { correct: false, extracted: null });
  assert.equal(gsm8kReference("Natalia sold 48/2 = <<48/2=24>>24 clips.\n#### 1,072"), "1072");
  assert.equal(gsm8kReference("no marker"), null);
});

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
