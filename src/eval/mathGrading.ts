// Math answer grading: pull the answer out of a response (the last \boxed{…}, else a stated final
// answer, else the last number) and compare it with the reference after normalising both
// (LaTeX fractions, thousands separators, currency, percent, degrees and unit words). Numbers
// compare by value, everything else by its normalised text. Pure functions; nothing throws.

/** The argument of the last `\boxed{…}` or `\fbox{…}` (braces balanced), or null. */
export function extractBoxed(text: string): string | null {
  const start = Math.max(text.lastIndexOf("\\boxed"), text.lastIndexOf("\\fbox"));
  if (start < 0) return null;
  let i = start + (text.startsWith("\\boxed", start) ? "\\boxed".length : "\\fbox".length);
  while (text[i] === " ") i++;
  if (text[i] !== "{") {
    // `\boxed 5`: the argument runs to the next space or `$`.
    const m = /^\s*([^\s$]+)/.exec(text.slice(i));
    return m === null ? null : m[1]!;
  }
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text[j];
    if (c === "{") depth += 1;
    else if (c === "}") {
      depth -= 1;
      if (depth === 0) return text.slice(i + 1, j);
    }
  }
  return null;
}

const NUMBER_RE = /[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s*\/\s*\d+)?|[-+]?\.\d+/g;

/** The last number written in the text ("1,234.5", "-3", "3/4"), or null. */
export function extractLastNumber(text: string): string | null {
  const matches = text.match(NUMBER_RE);
  return matches === null ? null : matches[matches.length - 1]!.replace(/\s+/g, "");
}

/**
 * The answer a response commits to: `\boxed{}`; else what follows "####", "final answer" or
 * "the answer is"; else the last number. Null when there is nothing answer-like.
 */
export function extractMathAnswer(response: string): string | null {
  const boxed = extractBoxed(response);
  if (boxed !== null) return boxed.trim();
  const marker = /(?:####|final answer\s*(?:is)?\s*:?|the answer is\s*:?|answer\s*:)\s*([^\n]+)/gi;
  let last: string | null = null;
  for (const m of response.matchAll(marker)) last = m[1]!;
  if (last !== null) {
    const stated = last.trim().replace(/[.。]\s*$/, "");
    const num = extractLastNumber(stated);
    // "The answer is 12 apples." → 12; "The answer is \frac{1}{2}." → the fraction itself.
    if (num !== null && !/\\frac|\\sqrt|\\pi|\^/.test(stated)) return num;
    if (stated.length > 0) return stated;
  }
  return extractLastNumber(response);
}

/** Replaces `\frac{a}{b}` (and \dfrac, \tfrac, `\frac12`) with `(a)/(b)` until none is left. */
function expandFractions(s: string): string {
  let out = s.replace(/\\[dt]frac/g, "\\frac");
  for (let guard = 0; guard < 20 && out.includes("\\frac"); guard++) {
    const at = out.indexOf("\\frac");
    const rest = out.slice(at + 5);
    const a = readGroup(rest);
    if (a === null) break;
    const b = readGroup(rest.slice(a.length));
    if (b === null) break;
    out = `${out.slice(0, at)}(${a.value})/(${b.value})${rest.slice(a.length + b.length)}`;
  }
  return out;
}

/** A `{…}` group or a single character at the start of `s`: its text and how many chars it took. */
function readGroup(s: string): { value: string; length: number } | null {
  let i = 0;
  while (s[i] === " ") i++;
  if (i >= s.length) return null;
  if (s[i] !== "{") return { value: s[i]!, length: i + 1 };
  let depth = 0;
  for (let j = i; j < s.length; j++) {
    if (s[j] === "{") depth++;
    else if (s[j] === "}") {
      depth--;
      if (depth === 0) return { value: s.slice(i + 1, j), length: j + 1 };
    }
  }
  return null;
}

const UNIT_WORDS =
  "(?:dollars?|cents?|units?|cm|mm|km|m|meters?|metres?|centimeters?|inches?|inch|feet|foot|ft|miles?|yards?|hours?|hrs?|minutes?|mins?|seconds?|secs?|days?|weeks?|months?|years?|kg|g|grams?|kilograms?|pounds?|lbs?|ounces?|oz|liters?|litres?|ml|gallons?|degrees?|mph|percent|people|students|apples|marbles|points|pages|books|times)";
const TRAILING_UNIT_RE = new RegExp(`^(.*?\\d)\\s*${UNIT_WORDS}(?:\\^?\\{?[23]\\}?)?\\.?$`, "i");

/**
 * A canonical string for an answer: LaTeX wrappers, `\text{units}`, `$`, `%`, degree marks and
 * "x =" prefixes removed, thousands separators dropped, fractions as `(a)/(b)`, whitespace gone.
 */
export function normalizeMathAnswer(answer: string): string {
  let s = answer.trim();
  s = s.replace(/^\$+|\$+$/g, "").trim();
  s = s.replace(/\\(?:left|right|big|Big|bigg|Bigg)\b/g, "");
  s = s.replace(/\\[,;:! ]/g, "").replace(/~/g, " ");
  // A leading "x =" / "a=" (but not a comparison like "<=").
  s = s.replace(/^[a-zA-Z]\w*\s*=\s*/, "");
  // \text{…} and \mbox{…}: drop it when it is a trailing unit, else keep its words.
  s = s.replace(/\s*\\(?:text|textbf|mbox|mathrm)\s*\{\s*([^{}]*)\}\s*$/, (whole, inner: string) =>
    new RegExp(`^${UNIT_WORDS}(?:\\^?[23])?s?$`, "i").test(inner.trim()) || /^\d/.test(s) ? "" : inner,
  );
  s = s.replace(/\\(?:text|textbf|mbox|mathrm)\s*\{([^{}]*)\}/g, "$1");
  s = s.replace(/\^\s*\{?\\circ\}?|°|\\circ|\\degree/g, "");
  s = s.replace(/\\%|%|\\\$|\\percent/g, "");
  s = s.replace(/\$/g, "");
  const unit = TRAILING_UNIT_RE.exec(s.trim());
  if (unit !== null) s = unit[1]!;
  s = s.replace(/(\d),(?=\d{3}(?!\d))/g, "$1");
  s = expandFractions(s);
  s = s.replace(/\\sqrt\s*(\w)/g, "\\sqrt{$1}");
  s = s.replace(/\s+/g, "");
  s = s.replace(/\.$/, "");
  return s.toLowerCase();
}

/** The value of a normalised answer that is a plain number or a fraction of numbers, else null. */
export function numericValue(normalized: string): number | null {
  const plain = /^[-+]?(\d+\.?\d*|\.\d+)$/;
  if (plain.test(normalized)) return Number(normalized);
  const frac = /^([-+]?)\(?([-+]?(?:\d+\.?\d*|\.\d+))\)?\/\(?([-+]?(?:\d+\.?\d*|\.\d+))\)?$/.exec(normalized);
  if (frac !== null) {
    const den = Number(frac[3]);
    if (den === 0) return null;
    const v = Number(frac[2]) / den;
    return frac[1] === "-" ? -v : v;
  }
  const negFrac = /^-\((.+)\)\/\((.+)\)$/.exec(normalized);
  if (negFrac !== null) {
    const inner = numericValue(`(${negFrac[1]})/(${negFrac[2]})`);
    return inner === null ? null : -inner;
  }
  return null;
}

/** Two answers are equal: same value (relative tolerance 1e-6) when both are numbers, else same normalised text. */
export function mathAnswersEqual(given: string, reference: string): boolean {
  const a = normalizeMathAnswer(given);
  const b = normalizeMathAnswer(reference);
  if (a.length === 0 || b.length === 0) return false;
  const va = numericValue(a);
  const vb = numericValue(b);
  if (va !== null && vb !== null) return Math.abs(va - vb) <= 1e-6 * Math.max(1, Math.abs(vb));
  return a === b;
}

export interface AnswerGrade {
  correct: boolean;
  /** The answer read from the response (null when none was found). */
  extracted: string | null;
}

/** Grades a free-form math response against a reference answer. */
export function gradeMathResponse(response: string, reference: string): AnswerGrade {
  const extracted = extractMathAnswer(response);
  return { correct: extracted !== null && mathAnswersEqual(extracted, reference), extracted };
}

/** Grades on the response's first whitespace-separated chunk (the arithmetic env's rule). */
export function gradeFirstChunk(response: string, reference: string): AnswerGrade {
  const first = response.trim().split(/\s+/)[0] ?? "";
  if (first.length === 0) return { correct: false, extracted: null };
  return { correct: mathAnswersEqual(first, reference), extracted: first };
}

/** GSM8K's `answer` field ends with "#### <number>"; that number is the reference. */
export function gsm8kReference(answerField: string): string | null {
  const idx = answerField.lastIndexOf("####");
  if (idx < 0) return null;
  return normalizeMathAnswer(answerField.slice(idx + 4));
}
