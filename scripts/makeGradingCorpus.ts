// Writes fixtures/grading/corpus.jsonl: labelled responses for the grader's accuracy test and
// for comparing with other graders (docs/eval.md). Each answer pair (what the model wrote, the
// reference, whether a careful human grader accepts it) is written into responses the way models
// answer: boxed (the RL reward's format, also with a wrong earlier box, \fbox, stray braces, or no
// box at all) and lenient (benchmarks: boxed, "The answer is", "####", a bold final answer, the
// last number). Labels come from the pairs and templates here, never from a grader.
// Run: node --import tsx scripts/makeGradingCorpus.ts
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeFileAtomic } from "../src/files/durable.ts";

type Pair = [given: string, reference: string, correct: boolean];

/** MATH-style answers by category. */
const MATH: Record<string, Pair[]> = {
  units_text: [
    ["155 \\text{ apples}", "155", true],
    ["12 \\text{ cm}", "12", true],
    ["12 \\text{ cm}^2", "12", true],
    ["5\\text{ hours}", "5", true],
    ["7 \\mbox{ inches}", "7", true],
    ["12 \\text{ cm}^2 + 1", "12", false],
    ["15 \\text{ meters}", "51", false],
    ["8 \\text{ feet}", "8", true],
  ],
  money: [
    ["\\$199", "199", true],
    ["\\$1,250.00", "1250", true],
    ["$\\$ 5.50$", "5.5", true],
    ["199 dollars", "199", true],
    ["\\$19.90", "199", false],
    ["\\$0.75", "0.75", true],
  ],
  percent: [
    ["25\\%", "25", true],
    ["25 \\%", "25", true],
    ["12.5\\%", "12.5", true],
    ["40\\%", "4", false],
    ["0.25\\%", "25", false],
  ],
  degrees: [
    ["30^\\circ", "30", true],
    ["30°", "30", true],
    ["45^{\\circ}", "45", true],
    ["120 \\text{ degrees}", "120", true],
    ["60^\\circ", "30", false],
  ],
  thousands: [
    ["2{,}019", "2019", true],
    ["2\\,019", "2019", true],
    ["1,234,567", "1234567", true],
    ["10{,}000", "10000", true],
    ["1,234", "1.234", false],
    ["2\\,019", "2.019", false],
  ],
  left_right: [
    ["\\left(\\frac{3}{4}\\right)", "\\frac{3}{4}", true],
    ["\\left( 3, 4 \\right)", "(3,4)", true],
    ["\\left[ 0, 1 \\right)", "[0,1)", true],
    ["\\left(\\frac{3}{5}\\right)", "\\frac{3}{4}", false],
  ],
  spacing: [
    ["3\\!\\cdot\\! 4", "12", false],
    ["\\frac{1}{2}\\,", "\\frac{1}{2}", true],
    ["x \\; = \\; 5", "5", true],
    ["2 \\sqrt{ 3 }", "2\\sqrt{3}", true],
  ],
  dfrac: [
    ["\\dfrac{3}{4}", "\\frac{3}{4}", true],
    ["\\tfrac{1}{2}", "\\frac{1}{2}", true],
    ["\\dfrac{5}{6}", "\\frac{6}{5}", false],
    ["\\frac34", "\\frac{3}{4}", true],
    ["\\dfrac{\\sqrt{3}}{2}", "\\frac{\\sqrt3}{2}", true],
  ],
  bold: [
    ["\\mathbf{18}", "18", true],
    ["\\textbf{18}", "18", true],
    ["\\boldsymbol{7}", "7", true],
    ["\\mathbf{17}", "18", false],
  ],
  braces: [
    ["{{42}}", "42", true],
    ["{42}", "42", true],
    ["x^{2}+2x+1", "x^2+2x+1", true],
    ["\\sqrt2", "\\sqrt{2}", true],
    ["{43}", "42", false],
  ],
  leading_zeros: [
    ["007", "7", true],
    [".5", "0.5", true],
    ["0.50", "\\frac{1}{2}", true],
    ["18.00", "18", true],
    ["0.05", "0.5", false],
  ],
  x_prefix: [
    ["x = 18", "18", true],
    ["x=\\frac{2}{3}", "\\frac{2}{3}", true],
    ["a = 5", "5", true],
    ["y = -3", "-3", true],
    ["x = 1, y = 2", "(1,2)", true],
    ["x = 4", "-4", false],
    ["k=7", "7", true],
  ],
  choice: [
    ["(C)", "C", true],
    ["\\text{(C)}", "C", true],
    ["C", "(C)", true],
    ["B", "C", false],
    ["\\text{(A)}", "(B)", false],
    ["(d)", "D", true],
  ],
  trailing_period: [
    ["79.63.", "79.63", true],
    ["12.", "12", true],
    ["3.5.", "3.5", true],
    ["79.6.", "79.63", false],
  ],
  fractions: [
    ["\\frac{1}{2}", "0.5", true],
    ["1/2", "\\frac{1}{2}", true],
    ["-\\frac{3}{4}", "-0.75", true],
    ["\\frac{-3}{4}", "-\\frac{3}{4}", true],
    ["\\frac{2}{4}", "\\frac{1}{2}", true],
    ["\\frac{1}{3}", "0.333", false],
    ["\\frac{3}{4}", "\\frac{4}{3}", false],
    ["\\frac{7}{12}", "\\frac{7}{12}", true],
    ["0.3333", "\\frac{1}{3}", false],
    ["\\frac{5}{8}", "0.625", true],
  ],
  radicals: [
    ["\\sqrt{12}", "2\\sqrt{3}", true],
    ["2\\sqrt{3}", "\\sqrt{12}", true],
    ["\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}", true],
    ["\\sqrt{8}", "2\\sqrt{2}", true],
    ["3\\sqrt{2}", "\\sqrt{18}", true],
    ["\\sqrt{3}", "3", false],
    ["2\\sqrt{3}", "3\\sqrt{2}", false],
    ["\\sqrt[3]{8}", "2", false],
    ["4\\sqrt{5}", "\\sqrt{80}", true],
    ["\\sqrt{50}", "5\\sqrt{3}", false],
  ],
  pi: [
    ["\\pi/4", "\\frac{\\pi}{4}", true],
    ["\\frac{\\pi}{4}", "\\frac{1}{4}\\pi", true],
    ["2\\pi", "\\pi \\cdot 2", true],
    ["\\frac{3\\pi}{2}", "\\frac{2\\pi}{3}", false],
    ["0.785", "\\frac{\\pi}{4}", false],
    ["16\\pi", "16\\pi", true],
    ["4\\pi+4", "4(\\pi+1)", true],
    ["\\pi", "3.14", false],
  ],
  polynomials: [
    ["x^2+2x+1", "(x+1)^2", true],
    ["(x+1)^2", "x^2+2x+1", true],
    ["2x+1", "1+2x", true],
    ["x^2-1", "(x-1)(x+1)", true],
    ["x^2+1", "(x+1)^2", false],
    ["2x+1", "2x+2", false],
    ["3x^2-6x", "3x(x-2)", true],
    ["a^2-b^2", "(a-b)(a+b)", true],
    ["x^3", "x^2", false],
    ["(x-2)(x+3)", "x^2+x-6", true],
  ],
  mixed_numbers: [
    ["3\\frac{1}{2}", "\\frac{7}{2}", true],
    ["2\\frac{3}{4}", "2.75", true],
    ["1\\frac{1}{3}", "\\frac{4}{3}", true],
    ["3\\frac{1}{2}", "\\frac{5}{2}", false],
    ["-1\\frac{1}{2}", "-\\frac{3}{2}", true],
  ],
  complex: [
    ["4i+3", "3+4i", true],
    ["3+4i", "3+4i", true],
    ["1-i", "-i+1", true],
    ["2i", "2i", true],
    ["3-4i", "3+4i", false],
    ["\\frac{1+i}{2}", "\\frac{1}{2}+\\frac{1}{2}i", true],
    ["i", "-i", false],
  ],
  scientific: [
    ["3.2\\times 10^{-4}", "0.00032", true],
    ["3.2 \\times 10^4", "32000", true],
    ["1.5\\cdot 10^{3}", "1500", true],
    ["3.2\\times 10^{-3}", "0.00032", false],
    ["6.02\\times10^{23}", "6.02\\times 10^{23}", true],
  ],
  tuples: [
    ["(1, 2)", "(1,2)", true],
    ["(3,-1)", "(3, -1)", true],
    ["(2,1)", "(1,2)", false],
    ["(\\frac{1}{2}, 3)", "(0.5,3)", true],
    ["(1,2,3)", "(1,2)", false],
    ["(-2, 5)", "(-2,5)", true],
  ],
  intervals: [
    ["[1,2)", "[1,2)", true],
    ["[1,2)", "[1,2]", false],
    ["(-\\infty, 3]", "(-\\infty,3]", true],
    ["(0, \\infty)", "(0,\\infty)", true],
    ["(-\\infty,-2) \\cup (2,\\infty)", "(-\\infty,-2)\\cup(2,\\infty)", true],
    ["(-2,2)", "[-2,2]", false],
  ],
  sets: [
    ["\\{1, 2\\}", "\\{2,1\\}", true],
    ["\\{1,2,3\\}", "\\{1,2\\}", false],
    ["1, 2", "2, 1", true],
    ["-3, 3", "3,-3", true],
    ["1, 3", "1, 2", false],
  ],
  matrices: [
    ["\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", true],
    ["\\begin{pmatrix} \\frac{1}{2} \\\\ 1 \\end{pmatrix}", "\\begin{pmatrix}0.5\\\\1\\end{pmatrix}", true],
    ["\\begin{pmatrix} 1 & 2 \\\\ 4 & 3 \\end{pmatrix}", "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", false],
  ],
  text: [
    ["\\text{Monday}", "Monday", true],
    ["\\text{even}", "\\text{odd}", false],
    ["\\text{east}", "East", true],
  ],
  integers: [
    ["42", "42", true],
    ["-7", "-7", true],
    ["41", "42", false],
    ["7", "-7", false],
    ["123+456", "579", false],
    ["1000", "100", false],
    ["0", "0", true],
  ],
};

/** GSM8K-style answers: plain numbers, money, units and the near misses models make. */
const GSM8K: Record<string, Pair[]> = {
  money: [
    ["\\$199", "199", true],
    ["$\\$1,250$", "1250", true],
    ["\\$18.00", "18", true],
    ["\\$12.50", "12.5", true],
    ["\\$17", "18", false],
    ["\\$5", "50", false],
    ["199 dollars", "199", true],
    ["\\$0.50", "0.5", true],
  ],
  units_text: [
    ["155 \\text{ apples}", "155", true],
    ["48 \\text{ clips}", "48", true],
    ["20 \\text{ minutes}", "20", true],
    ["3 \\text{ hours}", "180", false],
    ["12 \\text{ eggs}", "12", true],
    ["16 \\text{ cups}", "18", false],
  ],
  thousands: [
    ["1,072", "1072", true],
    ["2{,}019", "2019", true],
    ["10\\,000", "10000", true],
    ["1,250,000", "1250000", true],
    ["1,072", "1027", false],
  ],
  percent: [
    ["25\\%", "25", true],
    ["60\\%", "60", true],
    ["0.6", "60", false],
  ],
  x_prefix: [
    ["x = 18", "18", true],
    ["n = 42", "42", true],
    ["x = 17", "18", false],
  ],
  bold: [
    ["\\mathbf{67}", "67", true],
    ["\\textbf{67}", "67", true],
  ],
  decimals: [
    ["18.0", "18", true],
    ["3.50", "3.5", true],
    ["0.75", ".75", true],
    ["2.5", "25", false],
    ["1.5", "1.05", false],
  ],
  integers: [
    ["72", "72", true],
    ["5", "5", true],
    ["624", "624", true],
    ["-4", "4", false],
    ["71", "72", false],
    ["10", "100", false],
    ["864", "864", true],
    ["35", "53", false],
  ],
  trailing_period: [
    ["79.63.", "79.63", true],
    ["18.", "18", true],
  ],
  fractions: [
    ["\\frac{15}{2}", "7.5", true],
    ["7\\frac{1}{2}", "7.5", true],
    ["\\frac{1}{2}", "2", false],
  ],
};

interface Row {
  id: string;
  path: "math" | "gsm8k";
  mode: "boxed" | "lenient";
  category: string;
  template: string;
  /** The answer as the model wrote it, before it was put into the response. */
  given: string;
  response: string;
  reference: string;
  correct: boolean;
}

const REASONING = [
  "Let me work through this step by step. First we set up the quantities and simplify.",
  "We compute carefully: 3 + 4 = 7 and 7 \\cdot 2 = 14, then continue with the rest of the problem.",
  "Using the given information, the total follows after a few steps of algebra.",
];

/** Whether an answer is a plain number a "last number in the text" reader would find whole. */
const plainNumber = (s: string): boolean => /^-?\d+(?:\.\d+)?$/.test(s);

function boxedResponses(given: string, k: number, truth: boolean): [string, string, boolean][] {
  const r = REASONING[k % REASONING.length]!;
  const out: [string, string, boolean][] = [[`boxed`, `${r} Therefore the answer is $\\boxed{${given}}$.`, truth]];
  switch (k % 5) {
    case 0:
      // A wrong first box, then the real answer: the last box counts.
      out.push([`two_boxes`, `${r} At first I wrote \\boxed{999999}, but checking again, the answer is \\boxed{${given}}.`, truth]);
      break;
    case 1:
      out.push([`fbox`, `${r}\n\nFinal answer: \\fbox{${given}}`, truth]);
      break;
    case 2:
      // A stray closing brace before the box must not hide it.
      out.push([`stray_brace`, `${r} (the set is {1, 2}} closed) so \\boxed{${given}}`, truth]);
      break;
    case 3:
      // The right value outside any box is a format failure in boxed mode.
      out.push([`no_box`, `${r} The answer is ${given}.`, false]);
      break;
    default:
      // The right box first, a different last box: the last one is the answer.
      out.push([`last_box_wrong`, `${r} Maybe \\boxed{${given}}? No: the answer is \\boxed{999998}.`, false]);
  }
  return out;
}

function lenientResponses(given: string, k: number, truth: boolean, gsm8k: boolean): [string, string][] {
  const r = REASONING[(k + 1) % REASONING.length]!;
  const latex = /[\\^{}_]/.test(given);
  const shown = latex ? `$${given}$` : given;
  const forms: [string, string][] = [
    [`boxed`, `${r} So the final result is \\boxed{${given}}.`],
    [`answer_is`, `${r} The answer is ${shown}.`],
    [`hashes`, `${r}\n#### ${given}`],
    [`bold`, `${r} Putting it together, the total is **${given}**.`],
  ];
  if (plainNumber(given)) forms.push([`last_number`, `${r} Altogether that makes ${given}`]);
  const picked = [forms[k % forms.length]!];
  if (gsm8k || truth) picked.push(forms[(k + 2) % forms.length]!);
  return picked;
}

function rows(path: "math" | "gsm8k", groups: Record<string, Pair[]>): Row[] {
  const out: Row[] = [];
  let k = 0;
  for (const [category, pairs] of Object.entries(groups)) {
    for (const [given, reference, correct] of pairs) {
      for (const [template, response, label] of boxedResponses(given, k, correct)) {
        out.push({ id: `${path}-${out.length}`, path, mode: "boxed", category, template, given, response, reference, correct: label });
      }
      for (const [template, response] of lenientResponses(given, k, correct, path === "gsm8k")) {
        out.push({ id: `${path}-${out.length}`, path, mode: "lenient", category, template, given, response, reference, correct });
      }
      k++;
    }
  }
  return out;
}

const all = [...rows("math", MATH), ...rows("gsm8k", GSM8K)];
const file = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "grading", "corpus.jsonl");
mkdirSync(dirname(file), { recursive: true });
writeFileAtomic(file, all.map((r) => JSON.stringify(r)).join("\n") + "\n");
console.log(`${file}: ${all.length} rows`);
