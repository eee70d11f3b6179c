// The one grader every RL environment and benchmark uses. `grade(response, reference, { mode })`
// finds the answer (extract.ts), then compares it with the reference: same normalised text; same
// choice letter; same number (fractions, mixed numbers, percent and scientific notation
// included); tuples, intervals, sets and matrices element by element; else symbolic equivalence
// through mathjs (symbolic.ts) under a time limit. A plain-number reference takes only a number
// literal: an unevaluated expression ("123+456") is not an answer, whatever its value.
import { extractBoxed, extractFirstNumber, extractLenient } from "./extract.ts";
import { normalizeAnswer, splitTopLevel } from "./normalize.ts";
import { equivalentExpressions, latexToMathjs } from "./symbolic.ts";

export type GradeMode = "boxed" | "lenient";

export interface AnswerGrade {
  correct: boolean;
  /** The answer read from the response (null when none was found: a format failure in boxed mode). */
  extracted: string | null;
}

export interface GradeOptions {
  mode: GradeMode;
  /** Time budget of one symbolic check in milliseconds (default 250). */
  timeLimitMs?: number;
}

const DEFAULT_TIME_LIMIT_MS = 250;

/** The value of a number literal: integer, decimal, fraction, mixed number, scientific notation; else null. */
export function numberValue(normalized: string): number | null {
  const s = normalized.replace(/^\+/, "");
  if (/^-?(\d+\.?\d*|\.\d+)$/.test(s)) return Number(s);
  // A fraction of numbers, a minus sign in front, on top or below: \frac{-3}{4}, 5/(-3).
  let m = /^(-?)(?:\\frac\{(-?\d+\.?\d*)\}\{(-?\d+\.?\d*)\}|\(?(-?\d+\.?\d*)\)?\/\(?(-?\d+\.?\d*)\)?)$/.exec(s);
  if (m !== null) {
    const den = Number(m[3] ?? m[5]);
    if (den === 0) return null;
    const v = Number(m[2] ?? m[4]) / den;
    return m[1] === "-" ? -v : v;
  }
  // A mixed number: 3\frac{1}{2}.
  m = /^(-?)(\d+)\\frac\{(\d+)\}\{(\d+)\}$/.exec(s);
  if (m !== null && Number(m[4]) !== 0) return (m[1] === "-" ? -1 : 1) * (Number(m[2]) + Number(m[3]) / Number(m[4]));
  // Scientific notation: 3.2\times10^{-4}, 3.2*10^-4, 3.2e-4.
  m = /^(-?\d+\.?\d*)(?:\\times|\\cdot|\*|x)10\^\(?\{?(-?\d+)\}?\)?$/.exec(s) ?? /^(-?\d+\.?\d*)e(-?\d+)$/.exec(s);
  if (m !== null) return Number(m[1]) * 10 ** Number(m[2]);
  return null;
}

/**
 * Equal up to rounding: integers exactly (3,000,001 is not 3,000,000), other numbers to a relative
 * 1e-6 (so 1.6e-18 and 1.6e-19 differ, while a float's last digits do not matter).
 */
function sameNumber(a: number, b: number): boolean {
  if (Number.isSafeInteger(a) && Number.isSafeInteger(b)) return a === b;
  return Math.abs(a - b) <= 1e-6 * Math.max(Math.abs(a), Math.abs(b)) + 1e-300;
}

/** A bracketed list: its brackets and elements (`(1,2]` → "(", "]", ["1","2"]), or null. */
function asList(s: string): { open: string; close: string; items: string[] } | null {
  const m = /^(\\\{|[([])(.*)(\\\}|[)\]])$/.exec(s);
  if (m !== null) {
    const items = splitTopLevel(m[2]!);
    if (items.length > 1 || m[1] === "\\{") return { open: m[1]!, close: m[3]!, items };
  }
  const bare = splitTopLevel(s);
  return bare.length > 1 ? { open: "", close: "", items: bare } : null;
}

/** A matrix's cells row by row, or null. */
function asMatrix(s: string): string[][] | null {
  const m = /^\\begin\{[pbvBV]?matrix\}(.*)\\end\{[pbvBV]?matrix\}$/.exec(s);
  if (m === null) return null;
  return m[1]!
    .split("\\\\")
    .filter((r) => r !== "")
    .map((r) => r.split("&"));
}

function equalNormalized(a: string, b: string, timeLimitMs: number, depth = 0): boolean {
  if (a === b) return a !== "";
  if (a === "" || b === "" || depth > 3) return false;
  const na = numberValue(a);
  const nb = numberValue(b);
  if (nb !== null) return na !== null && sameNumber(na, nb);
  const ma = asMatrix(a);
  const mb = asMatrix(b);
  if (ma !== null || mb !== null) {
    return (
      ma !== null &&
      mb !== null &&
      ma.length === mb.length &&
      ma.every((row, i) => row.length === mb[i]!.length && row.every((c, j) => equalNormalized(c, mb[i]![j]!, timeLimitMs, depth + 1)))
    );
  }
  const unionA = splitTopLevel(a, "\\cup");
  const unionB = splitTopLevel(b, "\\cup");
  if (unionA.length > 1 || unionB.length > 1) {
    return unionA.length === unionB.length && unionA.every((x, i) => equalNormalized(x, unionB[i]!, timeLimitMs, depth + 1));
  }
  const la = asList(a);
  const lb = asList(b);
  if (la !== null || lb !== null) {
    if (la === null || lb === null || la.items.length !== lb.items.length) return false;
    // A bare list matches a bracketed one only when it is a tuple; interval ends must agree.
    const brackets = (l: typeof la): string => (l.open === "" ? "" : l.open + l.close);
    const ba = brackets(la);
    const bb = brackets(lb);
    if (ba !== bb && !(ba === "" && bb === "()") && !(bb === "" && ba === "()")) return false;
    if (ba === "\\{\\}" || (ba === "" && bb === "")) {
      // Sets (and bare lists of solutions) are unordered.
      const left = [...lb.items];
      return la.items.every((x) => {
        const k = left.findIndex((y) => equalNormalized(x, y, timeLimitMs, depth + 1));
        if (k < 0) return false;
        left.splice(k, 1);
        return true;
      });
    }
    return la.items.every((x, i) => equalNormalized(x, lb.items[i]!, timeLimitMs, depth + 1));
  }
  // Words and single letters (choices, names, "even") compare as text; no expression to check.
  if (/^[a-z]+$/i.test(a) || /^[a-z]+$/i.test(b)) return false;
  const ea = latexToMathjs(a);
  const eb = latexToMathjs(b);
  if (ea === null || eb === null) return false;
  return equivalentExpressions(ea, eb, { timeLimitMs });
}

/** Two answers (as written, not yet normalised) are the same. Never throws. */
export function answersEqual(given: string, reference: string, timeLimitMs = DEFAULT_TIME_LIMIT_MS): boolean {
  try {
    return equalNormalized(normalizeAnswer(given), normalizeAnswer(reference), timeLimitMs);
  } catch {
    return false;
  }
}

/**
 * Grades a response against a reference answer. `boxed`: the last \boxed{}/\fbox{} is the answer
 * and no box is a format failure (extracted null); `lenient`: see extract.ts. Never throws.
 */
export function grade(response: string, reference: string, options: GradeOptions): AnswerGrade {
  let extracted: string | null = null;
  try {
    extracted = options.mode === "boxed" ? extractBoxed(response) : extractLenient(response);
    if (extracted === null) return { correct: false, extracted: null };
    return { correct: answersEqual(extracted, reference, options.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS), extracted };
  } catch {
    return { correct: false, extracted };
  }
}

/** Grades on the response's first whitespace-separated chunk (the arithmetic environments' rule). */
export function gradeFirstChunk(response: string, reference: string): AnswerGrade {
  // "579," and "579." end a number, they are not part of it.
  const first = (response.trim().split(/\s+/)[0] ?? "").replace(/[,;:!?.]+$/, "");
  if (first.length === 0) return { correct: false, extracted: null };
  return { correct: answersEqual(first, reference), extracted: first };
}

/** Grades on the first number of the response (the tool-use addition task's rule: the model states the sum first). */
export function gradeFirstNumber(response: string, reference: string): AnswerGrade {
  const first = extractFirstNumber(response);
  if (first === null) return { correct: false, extracted: null };
  return { correct: answersEqual(first, reference), extracted: first };
}

/** GSM8K's `answer` field ends with "#### <number>"; that number (separators removed) is the reference, or null. */
export function gsm8kReference(answerField: string): string | null {
  const idx = answerField.lastIndexOf("####");
  if (idx < 0) return null;
  const ref = normalizeAnswer(answerField.slice(idx + 4));
  return ref === "" ? null : ref;
}

/** A MATH-style row's reference: its `answer` when given, else the last \boxed{} of its `solution`; null when neither. */
export function mathReference(answer: unknown, solution: unknown): string | null {
  if (typeof answer === "string" && answer.trim() !== "") return answer.trim();
  if (typeof answer === "number" || typeof answer === "bigint") return String(answer);
  return typeof solution === "string" ? extractBoxed(solution) : null;
}
