// Writes fixtures/grading/independent-{boxed,lenient}.jsonl (one file per mode keeps each
// fixture small; a row's id is its file and line): a second labelled grading corpus, written apart from
// corpus.jsonl (other answers, other response shapes, generated here rather than by
// makeGradingCorpus.ts) so that the grader is measured on cases it was not tuned on
// (docs/eval.md#the-independent-corpus). Each item is a reference with answers a careful human
// grader accepts (`same`) and near misses they reject (`differ`); every answer is written into
// responses shaped like real model output, in the RL reward's mode (`boxed`: only the last
// \boxed{}/\fbox{} counts, no box is a format failure) and the benchmarks' (`lenient`). Labels come
// from the items and the response shapes, never from a grader.
// Run: node --import tsx scripts/makeGradingIndependentCorpus.ts
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeFileAtomic } from "../src/files/durable.ts";

interface Item {
  category: string;
  reference: string;
  same: string[];
  differ: string[];
  /** Plain numbers may also be read as a response's last number. */
  numeric?: boolean;
}

const MATH: Item[] = [
  {
    category: "units_text",
    reference: "36",
    same: ["36 \\text{ inches}", "36\\text{in}", "36 \\mbox{ inches}", "36\\ \\text{inches}"],
    differ: ["36 \\text{ in}^2 + 4", "63 \\text{ inches}", "3.6"],
  },
  {
    category: "units_text",
    reference: "9\\text{ cm}",
    same: ["9", "9 \\text{cm}", "9\\,\\text{cm}", "9 \\text{ centimeters}"],
    differ: ["8\\text{ cm}", "81"],
  },
  { category: "units_text", reference: "4", same: ["4 \\text{ hours}", "4\\text{ hr}"], differ: ["4.5 \\text{ hours}", "40 \\text{ minutes}"] },
  { category: "money", reference: "349", same: ["\\$349", "\\$349.00", "\\$ 349", "349 \\text{ dollars}"], differ: ["\\$3.49", "\\$34.90", "348"] },
  { category: "money", reference: "12.50", same: ["\\$12.50", "12.5", "\\$12.5"], differ: ["\\$1.25", "\\$125"] },
  { category: "percent", reference: "35", same: ["35\\%", "35 \\%", "35\\text{\\%}"], differ: ["3.5\\%", "65\\%", "53"] },
  { category: "percent", reference: "62.5\\%", same: ["62.5", "62.5 \\%"], differ: ["6.25\\%", "37.5\\%"] },
  { category: "degrees", reference: "45", same: ["45^\\circ", "45°", "45^{\\circ}", "45 \\text{ degrees}"], differ: ["135^\\circ", "4.5"] },
  { category: "degrees", reference: "120^\\circ", same: ["120", "120°", "120^{\\circ}"], differ: ["60^\\circ", "12^\\circ"] },
  { category: "thousands", reference: "2024", same: ["2{,}024", "2\\,024", "2,024"], differ: ["2{,}042", "2023"] },
  { category: "thousands", reference: "3000000", same: ["3{,}000{,}000", "3,000,000", "3\\,000\\,000"], differ: ["300{,}000", "3,000,001"] },
  { category: "thousands", reference: "45{,}360", same: ["45360", "45,360"], differ: ["4536", "45,630"] },
  {
    category: "left_right",
    reference: "\\frac{5}{7}",
    same: ["\\left(\\frac{5}{7}\\right)", "\\left( \\dfrac{5}{7} \\right)"],
    differ: ["\\left(\\frac{7}{5}\\right)"],
  },
  {
    category: "left_right",
    reference: "(4,-1)",
    same: ["\\left(4, -1\\right)", "\\left( 4,-1 \\right)"],
    differ: ["\\left(-1,4\\right)", "\\left(4,1\\right)"],
  },
  { category: "spacing", reference: "5\\sqrt{2}", same: ["5 \\sqrt{2}", "5\\,\\sqrt{2}", "5\\!\\sqrt2", "\\sqrt{50}"], differ: ["2\\sqrt{5}", "5\\sqrt{3}"] },
  { category: "spacing", reference: "\\frac{9}{4}", same: ["\\frac{9}{4}\\,", "\\; \\frac{9}{4}", "\\frac{9}{4}\\!"], differ: ["\\frac{4}{9}\\,"] },
  { category: "dfrac", reference: "\\frac{3}{8}", same: ["\\dfrac{3}{8}", "\\tfrac38", "3/8", "0.375"], differ: ["\\dfrac{8}{3}", "\\frac{3}{7}", "0.38"] },
  { category: "bold", reference: "27", same: ["\\mathbf{27}", "\\textbf{27}", "\\boldsymbol{27}"], differ: ["\\mathbf{72}", "\\textbf{2.7}"] },
  { category: "braces", reference: "64", same: ["{64}", "{{64}}", "{{{64}}}"], differ: ["{{46}}", "{65}"] },
  { category: "leading_zeros", reference: "9", same: ["009", "09", "9.0", "9.00"], differ: ["90", "0.9", "900"], numeric: true },
  { category: "leading_zeros", reference: "0.25", same: [".25", "0.250", "00.25"], differ: ["2.5", "0.025"], numeric: true },
  { category: "x_prefix", reference: "14", same: ["x = 14", "x=14", "n = 14", "t=14"], differ: ["x = 41", "x = 14 + 1"] },
  { category: "x_prefix", reference: "-6", same: ["x = -6", "y=-6"], differ: ["x = 6", "-\\frac{1}{6}"] },
  { category: "x_prefix", reference: "\\frac{5}{2}", same: ["x = \\frac{5}{2}", "a=2.5"], differ: ["x = \\frac{2}{5}"] },
  { category: "choice", reference: "D", same: ["D", "(D)", "\\text{(D)}", "\\textbf{(D)}"], differ: ["B", "(C)"] },
  { category: "choice", reference: "\\text{(A)}", same: ["A", "(A)"], differ: ["E", "\\text{(B)}"] },
  { category: "trailing_period", reference: "41.25", same: ["41.25.", "41.25 ."], differ: ["41.2", "4125"] },
  { category: "trailing_period", reference: "8", same: ["8.", "8 ."], differ: ["88.", "0.8."] },
  { category: "fractions", reference: "\\frac{1}{4}", same: ["0.25", "\\frac{3}{12}", "1/4", "\\frac14"], differ: ["\\frac{1}{5}", "4", "0.025"] },
  { category: "fractions", reference: "-\\frac{5}{3}", same: ["\\frac{-5}{3}", "-5/3", "\\frac{5}{-3}"], differ: ["\\frac{5}{3}", "-\\frac{3}{5}"] },
  {
    category: "fractions",
    reference: "\\frac{\\sqrt{5}}{3}",
    same: ["\\frac{1}{3}\\sqrt{5}", "\\sqrt{5}/3", "\\frac{\\sqrt5}3"],
    differ: ["\\frac{\\sqrt{3}}{5}", "\\frac{5}{3}"],
  },
  { category: "radicals", reference: "3\\sqrt{3}", same: ["\\sqrt{27}", "3 \\sqrt 3"], differ: ["\\sqrt{9}", "9\\sqrt{3}"] },
  {
    category: "radicals",
    reference: "\\frac{\\sqrt{3}}{3}",
    same: ["\\frac{1}{\\sqrt{3}}", "\\frac{\\sqrt3}{3}"],
    differ: ["\\sqrt{3}", "\\frac{3}{\\sqrt{2}}"],
  },
  { category: "radicals", reference: "\\sqrt[3]{5}", same: ["5^{1/3}", "5^{\\frac{1}{3}}"], differ: ["\\sqrt{5}", "5^{1/2}"] },
  { category: "pi", reference: "\\frac{\\pi}{6}", same: ["\\pi/6", "\\frac16\\pi", "\\frac{1}{6}\\pi"], differ: ["\\frac{\\pi}{3}", "6\\pi", "\\pi"] },
  { category: "pi", reference: "18\\pi", same: ["18 \\pi", "\\pi \\cdot 18", "18\\cdot\\pi"], differ: ["18", "9\\pi"] },
  { category: "pi", reference: "3\\pi - 6", same: ["-6 + 3\\pi", "3(\\pi - 2)"], differ: ["3\\pi + 6", "6 - 3\\pi"] },
  { category: "polynomials", reference: "x^2-6x+9", same: ["(x-3)^2", "x^{2}-6x+9", "9-6x+x^2"], differ: ["x^2-6x-9", "(x+3)^2", "x^2+9"] },
  { category: "polynomials", reference: "4x+7", same: ["7+4x", "4x + 7"], differ: ["4x-7", "7x+4"] },
  { category: "polynomials", reference: "(x-4)(x+1)", same: ["x^2-3x-4", "(x+1)(x-4)"], differ: ["(x+4)(x-1)", "x^2+3x-4"] },
  { category: "polynomials", reference: "y = 3x - 2", same: ["y=3x-2", "y = -2 + 3x"], differ: ["y = 3x + 2", "y = 2x - 3"] },
  { category: "mixed_numbers", reference: "\\frac{9}{2}", same: ["4\\frac{1}{2}", "4 \\frac12", "4.5"], differ: ["4\\frac{1}{3}", "\\frac{2}{9}", "41/2"] },
  { category: "mixed_numbers", reference: "5\\frac{2}{3}", same: ["\\frac{17}{3}", "5 \\frac{2}{3}"], differ: ["\\frac{10}{3}", "5.23"] },
  { category: "complex", reference: "2+5i", same: ["5i+2", "2 + 5i", "2+5\\,i"], differ: ["2-5i", "5+2i"] },
  { category: "complex", reference: "-2i", same: ["0-2i", "-2 i"], differ: ["2i", "-2"] },
  {
    category: "complex",
    reference: "\\frac{1}{2}+\\frac{\\sqrt{3}}{2}i",
    same: ["\\frac{1+i\\sqrt{3}}{2}", "0.5 + \\frac{\\sqrt3}{2} i"],
    differ: ["\\frac{1}{2}-\\frac{\\sqrt{3}}{2}i"],
  },
  {
    category: "scientific",
    reference: "0.00047",
    same: ["4.7\\times 10^{-4}", "4.7 \\times 10^{-4}", "4.7e-4", "4.7\\cdot10^{-4}"],
    differ: ["4.7\\times 10^{-3}", "4.7\\times 10^{4}"],
  },
  { category: "scientific", reference: "1.6\\times10^{-19}", same: ["1.6 \\times 10^{-19}", "1.6e-19"], differ: ["1.6\\times 10^{-18}", "6.1\\times10^{-19}"] },
  { category: "tuples", reference: "(3, -2)", same: ["(3,-2)", "\\left(3,-2\\right)", "(3, -2.0)"], differ: ["(-2, 3)", "(3, 2)"] },
  { category: "tuples", reference: "(\\frac{1}{4}, 2, 0)", same: ["(0.25, 2, 0)"], differ: ["(0.25, 0, 2)"] },
  { category: "intervals", reference: "[1, 4)", same: ["[1,4)", "\\left[1, 4\\right)"], differ: ["(1, 4]", "[1, 4]", "(1,4)"] },
  { category: "intervals", reference: "(-\\infty, 7]", same: ["(-\\infty,7]", "\\left(-\\infty, 7\\right]"], differ: ["(-\\infty, 7)", "[7, \\infty)"] },
  {
    category: "intervals",
    reference: "(-\\infty,-3)\\cup(3,\\infty)",
    same: ["(-\\infty, -3) \\cup (3, \\infty)"],
    differ: ["(-3,3)", "(-\\infty,-3]\\cup[3,\\infty)"],
  },
  { category: "sets", reference: "\\{2, 4, 6\\}", same: ["\\{6, 4, 2\\}", "\\{2,4,6\\}"], differ: ["\\{2, 4\\}", "\\{2,4,8\\}"] },
  { category: "sets", reference: "-4, 1", same: ["1, -4", "-4,1"], differ: ["4, -1", "-4"] },
  {
    category: "matrices",
    reference: "\\begin{pmatrix} 2 & 0 \\\\ -1 & 3 \\end{pmatrix}",
    same: ["\\begin{pmatrix}2&0\\\\-1&3\\end{pmatrix}", "\\begin{bmatrix} 2 & 0 \\\\ -1 & 3 \\end{bmatrix}"],
    differ: ["\\begin{pmatrix} 2 & -1 \\\\ 0 & 3 \\end{pmatrix}"],
  },
  {
    category: "matrices",
    reference: "\\begin{pmatrix} 3 \\\\ \\frac{1}{2} \\end{pmatrix}",
    same: ["\\begin{pmatrix} 3 \\\\ 0.5 \\end{pmatrix}"],
    differ: ["\\begin{pmatrix} -3 \\\\ 0.5 \\end{pmatrix}"],
  },
  { category: "text", reference: "\\text{Friday}", same: ["Friday", "\\textbf{Friday}"], differ: ["Thursday"] },
  { category: "text", reference: "\\text{even}", same: ["even", "\\text{ even }"], differ: ["odd"] },
  { category: "integers", reference: "-11", same: ["-11", "−11"], differ: ["11"], numeric: true },
  // Not "2^9": for a plain-number reference an unevaluated expression is not a final answer
  // (src/grading/grade.ts), a policy choice rather than a fact, so it is left out of the labels.
  { category: "integers", reference: "512", same: ["512", "512.0"], differ: ["215", "256"] },
  { category: "decimals", reference: "0.6", same: ["\\frac{3}{5}", "0.60", ".6"], differ: ["0.06", "6.0"] },
  { category: "decimals", reference: "2.718", same: ["2.7180"], differ: ["e", "2.71"] },
];

const GSM8K: Item[] = [
  { category: "integers", reference: "23", same: ["23", "\\$23", "23 dollars", "23.00"], differ: ["32", "230"], numeric: true },
  { category: "thousands", reference: "2400", same: ["2,400", "\\$2,400", "2400.0"], differ: ["2,040", "240"], numeric: true },
  { category: "units_text", reference: "9", same: ["9 marbles", "9\\text{ marbles}"], differ: ["8 marbles"] },
  { category: "fractions", reference: "0.25", same: [".25", "\\frac{1}{4}"], differ: ["25", "4"] },
  { category: "percent", reference: "60", same: ["60\\%", "60%"], differ: ["40\\%", "0.6"] },
  { category: "integers", reference: "738", same: ["738 cookies"], differ: ["783"] },
  { category: "decimals", reference: "14", same: ["14 hours", "14.0"], differ: ["1.4", "41"] },
  { category: "thousands", reference: "1015", same: ["1{,}015", "1,015"], differ: ["1,105"] },
  { category: "money", reference: "48", same: ["\\$48.00", "48"], differ: ["\\$4.80"], numeric: true },
  { category: "bold", reference: "300", same: ["300", "\\textbf{300}"], differ: ["3000", "30"] },
  { category: "money", reference: "7.5", same: ["\\$7.50", "7.50 dollars"], differ: ["\\$75", "\\$7.05"], numeric: true },
  { category: "integers", reference: "16", same: ["16 pages", "x = 16"], differ: ["61", "15 pages", "1.6"] },
  { category: "thousands", reference: "12000", same: ["12,000", "12{,}000", "\\$12,000"], differ: ["1,200", "120,000"] },
  { category: "units_text", reference: "45", same: ["45 minutes", "45\\text{ min}"], differ: ["54 minutes", "4.5"] },
  { category: "percent", reference: "15", same: ["15\\%", "15 percent"], differ: ["85\\%", "1.5\\%"] },
  { category: "integers", reference: "1", same: ["1", "1.0", "one"], differ: ["0", "11", "-1"] },
  { category: "decimals", reference: "3.25", same: ["3.250", "\\frac{13}{4}"], differ: ["3.52", "325"] },
  { category: "money", reference: "1080", same: ["\\$1,080", "1080 dollars", "\\$1{,}080.00"], differ: ["\\$1,800", "\\$108"] },
];

interface Row {
  path: "math" | "gsm8k";
  mode: "boxed" | "lenient";
  category: string;
  shape: string;
  response: string;
  reference: string;
  correct: boolean;
}

/** Response shapes that carry the answer in a box (both modes read them the same way). */
const BOXED_SHAPES: { name: string; write: (answer: string, decoy: string) => string }[] = [
  { name: "final_answer_block", write: (a) => `Simplifying each term.\n\n**Final Answer**\n\\[\\boxed{${a}}\\]` },
  { name: "inline_dollar", write: (a) => `Combining both, we get $\\boxed{${a}}$.` },
  { name: "decoy_box_first", write: (a, d) => `First try: $\\boxed{${d}}$, which breaks a condition. Fixed: $\\boxed{${a}}$.` },
  { name: "fbox", write: (a) => `Altogether:\n$$\\fbox{${a}}$$` },
  { name: "stray_brace_before", write: (a) => `With \\{x : x > 0\\}} settled, it is \\(\\boxed{${a}}\\).` },
  { name: "box_then_words", write: (a) => `Thus \\(\\boxed{${a}}\\). Substituting back confirms it.` },
];

/** Shapes without a box: a format failure in boxed mode; lenient mode reads the stated answer. */
const STATED_SHAPES: { name: string; write: (answer: string) => string; numericOnly?: boolean }[] = [
  { name: "answer_is", write: (a) => `Adding the cases.\n\nTherefore, the answer is $${a}$.` },
  { name: "bold_answer", write: (a) => `Case by case.\n\n**Answer:** $${a}$` },
  { name: "hashes", write: (a) => `Daily amount times days.\n#### ${a}` },
  { name: "last_number", write: (a) => `She has 4 + 6 = 10 before the trade; after it, ${a}`, numericOnly: true },
];

function isPlainNumber(s: string): boolean {
  return /^-?[\d,]*\.?\d+$/.test(s);
}

function build(): Row[] {
  const rows: Row[] = [];
  const push = (path: Row["path"], mode: Row["mode"], item: Item, shape: string, response: string, correct: boolean): void => {
    rows.push({ path, mode, category: item.category, shape, response, reference: item.reference, correct });
  };
  for (const [path, items] of [
    ["math", MATH],
    ["gsm8k", GSM8K],
  ] as const) {
    let boxedTurn = 0;
    let statedTurn = 0;
    for (const item of items) {
      const decoy = item.differ[0]!;
      const answers: [string, boolean][] = [...item.same.map((s): [string, boolean] => [s, true]), ...item.differ.map((s): [string, boolean] => [s, false])];
      for (const [given, correct] of answers) {
        for (const mode of ["boxed", "lenient"] as const) {
          // Rotate through the shapes so each answer appears in a different one per mode.
          const shape = BOXED_SHAPES[boxedTurn++ % BOXED_SHAPES.length]!;
          // A decoy equal to the answer would not be a decoy; the right answer then serves.
          const d = given === decoy ? item.same[0]! : decoy;
          push(path, mode, item, shape.name, shape.write(given, d), correct);
        }
        // The lenient readers of stated answers (GSM8K answers end with ####; MATH ones do not).
        const stated = STATED_SHAPES.filter(
          (s) => (path === "gsm8k" || s.name !== "hashes") && (!s.numericOnly || (item.numeric === true && isPlainNumber(given.replace("−", "-")))),
        );
        const shape = stated[statedTurn++ % stated.length]!;
        push(path, "lenient", item, shape.name, shape.write(given), correct);
      }
      // The right answer with no box: lenient reads it, the RL reward calls it a format failure.
      const right = item.same[0]!;
      const unboxed = `So the result is $${right}$.`;
      push(path, "boxed", item, "no_box", unboxed, false);
      push(path, "lenient", item, "answer_stated_no_box", `The answer is $${right}$.`, true);
      // The right answer boxed first, a wrong one last: the last box is the answer in both modes.
      const lastWrong = `I found $\\boxed{${right}}$; the constraint rules it out, so $\\boxed{${decoy}}$.`;
      push(path, "boxed", item, "right_then_wrong_box", lastWrong, false);
      push(path, "lenient", item, "right_then_wrong_box", lastWrong, false);
    }
  }
  return rows;
}

const rows = build();
const dir = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "grading");
mkdirSync(dir, { recursive: true });
for (const mode of ["boxed", "lenient"] as const) {
  const some = rows.filter((r) => r.mode === mode);
  const out = join(dir, `independent-${mode}.jsonl`);
  writeFileAtomic(out, some.map((r) => JSON.stringify(r)).join("\n") + "\n");
  console.log(`wrote ${some.length} rows to ${out}`);
}
