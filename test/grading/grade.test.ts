import { test } from "node:test";
import assert from "node:assert/strict";
import {
  answersEqual,
  extractBoxed,
  extractLastNumber,
  extractLenient,
  grade,
  gradeFirstChunk,
  gsm8kReference,
  normalizeAnswer,
} from "../../src/grading/index.ts";

test("extractBoxed takes the last box and balances nested braces", () => {
  assert.equal(extractBoxed("first \\boxed{1} then \\boxed{\\frac{1}{2}}."), "\\frac{1}{2}");
  assert.equal(extractBoxed("\\boxed{\\{1,2\\}}"), "\\{1,2\\}");
  assert.equal(extractBoxed("\\fbox{7}"), "7");
  assert.equal(extractBoxed("so \\boxed 42$"), "42");
  assert.equal(extractBoxed("unclosed \\boxed{3"), null);
  assert.equal(extractBoxed("no box"), null);
});

test("final answers: boxed wins, then stated answers, then the last number", () => {
  assert.equal(extractLenient("She has 3 + 4 = 7 apples, so 7 * 2 = 14. #### 14"), "14");
  assert.equal(extractLenient("Costs $1,250 in total. The answer is $1,250."), "$1,250");
  assert.equal(extractLenient("The answer is 79.63."), "79.63");
  assert.equal(extractLenient("Adding up, she pays **$67** in all."), "$67");
  assert.equal(extractLenient("Step 1: 12 eggs. Final answer: 18 eggs"), "18 eggs");
  assert.equal(extractLenient("The answer is $\\frac{3}{4}$."), "\\frac{3}{4}");
  assert.equal(extractLenient("2 then 3 and finally -5.5"), "-5.5");
  assert.equal(extractLenient("I think \\boxed{12} although 13 is close"), "12");
  assert.equal(extractLenient("no numbers here"), null);
  assert.equal(extractLastNumber("ratio 3 / 4"), "3/4");
});

test("normalisation: \\dfrac and \\frac12, thousands separators, currency, percent, degrees, units, x =", () => {
  assert.equal(normalizeAnswer("\\dfrac{1}{2}"), "\\frac{1}{2}");
  assert.equal(normalizeAnswer("\\frac12"), "\\frac{1}{2}");
  assert.equal(normalizeAnswer("1,234,567"), "1234567");
  assert.equal(normalizeAnswer("\\$5.00"), "5");
  assert.equal(normalizeAnswer("50\\%"), "50");
  assert.equal(normalizeAnswer("90^\\circ"), "90");
  assert.equal(normalizeAnswer("10\\text{ cm}"), "10");
  assert.equal(normalizeAnswer("12 inches"), "12");
  assert.equal(normalizeAnswer("x = 3"), "3");
  assert.equal(normalizeAnswer("\\left( 3, 4 \\right)"), "(3,4)");
  // A tuple's comma is not a thousands separator.
  assert.equal(normalizeAnswer("(1, 234)"), "(1,234)");
  assert.equal(normalizeAnswer("\\sqrt2"), "\\sqrt{2}");
  assert.equal(normalizeAnswer("\\text{Monday}"), "monday");
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
  for (const [a, b] of equal) assert.ok(answersEqual(a, b), `${a} should equal ${b}`);
  const different: [string, string][] = [
    ["12", "1/2"],
    ["1,234", "1.234"],
    ["(1,2)", "12"],
    ["0.333", "\\frac{1}{3}"],
    ["-5", "5"],
    ["", "0"],
    ["\\sqrt{2}", "2"],
  ];
  for (const [a, b] of different) assert.ok(!answersEqual(a, b), `${a} should differ from ${b}`);
});

test("grade reports the extracted answer and correctness; boxed mode wants a box", () => {
  assert.deepEqual(grade("so the total is \\boxed{1,440}", "1440", { mode: "lenient" }), { correct: true, extracted: "1,440" });
  assert.deepEqual(grade("I get 7, no wait, 8", "7", { mode: "lenient" }), { correct: false, extracted: "8" });
  assert.deepEqual(grade("", "7", { mode: "lenient" }), { correct: false, extracted: null });
  assert.deepEqual(grade("The answer is 7.", "7", { mode: "boxed" }), { correct: false, extracted: null });
  assert.deepEqual(grade("\\boxed{3} no, \\fbox{7}", "7", { mode: "boxed" }), { correct: true, extracted: "7" });
  // An unevaluated expression is not a number answer, whatever its value (no reward for echoing the question).
  assert.equal(grade("\\boxed{123+456}", "579", { mode: "boxed" }).correct, false);
});

test("first-chunk grading (arithmetic) and GSM8K references", () => {
  assert.deepEqual(gradeFirstChunk(" 17 is the answer", "17"), { correct: true, extracted: "17" });
  assert.deepEqual(gradeFirstChunk("17, since 8 + 9 = 17", "17"), { correct: true, extracted: "17" });
  assert.deepEqual(gradeFirstChunk("1,017.", "1017"), { correct: true, extracted: "1,017" });
  assert.deepEqual(gradeFirstChunk("The answer is 17", "17"), { correct: false, extracted: "The" });
  assert.deepEqual(gradeFirstChunk("   ", "17"), { correct: false, extracted: null });
  assert.equal(gsm8kReference("Natalia sold 48/2 = <<48/2=24>>24 clips.\n#### 1,072"), "1072");
  assert.equal(gsm8kReference("no marker"), null);
});

test("symbolic checks decide equivalence through mathjs within their time budget", () => {
  assert.ok(answersEqual("\\sqrt{12}", "2\\sqrt{3}", 1000));
  assert.ok(answersEqual("(x+1)^2", "x^2+2x+1", 1000));
  assert.ok(!answersEqual("(x+1)^2", "x^2+x+1", 1000));
  // A check out of budget is "not equal", never an exception or a hang.
  assert.equal(answersEqual("\\sqrt{12}", "2\\sqrt{3}", 0), false);
  assert.equal(grade("\\boxed{(x+1)^2}", "x^2+2x+1", { mode: "boxed", timeLimitMs: 0 }).correct, false);
});
