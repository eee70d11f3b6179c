// A canonical text for an answer, following the MATH and GSM8K conventions: math delimiters,
// \left/\right, spacing commands, \dfrac/\tfrac, bold and \text{} wrappers, units after a number,
// money, percent and degree signs, thousands separators ({,} \, and commas), braces around single
// characters, leading zeros, "x =" prefixes and a trailing period go; what is left loses its
// spaces and case. Pure string work; nothing here throws on odd input.

/** Units written after a number (dropped): after a space any word goes, glued only these. */
const GLUED_UNIT = "(?:cm|mm|km|kg|mg|ml|mph|ft|hrs?|mins?|secs?|lbs?|oz|dollars?|cents?)";
const SPACED_UNIT = "(?:sq(?:uare)?\\s+[a-z]+|cubic\\s+[a-z]+|[a-z]{2,}(?:\\s+[a-z]{2,}){0,2}|m|g|h|l)";
const TEXT_UNIT = "\\\\(?:text|mbox|mathrm|textnormal)\\s*\\{\\s*[a-zA-Z][a-zA-Z ./]*\\}";
const UNIT_RE = new RegExp(`^(?:\\s*${TEXT_UNIT}|\\s+${SPACED_UNIT}|${GLUED_UNIT})\\.?$`, "i");

const TEXT_UNIT_AFTER_RE = new RegExp(`^(.*[\\da-zA-Z}])\\s*${TEXT_UNIT}\\.?$`);

/** The number without a unit written after it ("12 \\text{ cm}^2" → "12"), or the text unchanged. */
function dropUnit(s: string): string {
  // A squared or cubed unit: the power is part of the unit, not a digit of the answer.
  const base = s.replace(/(?<=[a-zA-Z}])\s*\^\s*\{?[23]\}?\.?$/, "");
  const m = /^(.*\d)(\D+)$/s.exec(base);
  if (m !== null && UNIT_RE.test(m[2]!)) return m[1]!;
  // A \text{} unit after an expression: "36\pi \text{ in}^3".
  const t = TEXT_UNIT_AFTER_RE.exec(base);
  return t !== null && /[\d\\]/.test(t[1]!) ? t[1]! : s;
}

const commandRes = new Map<string, RegExp>();

/** `\cmd{…}` (one level of nested braces inside) replaced by `f(inner)`. */
function replaceCommand(s: string, cmd: string, f: (inner: string) => string): string {
  let re = commandRes.get(cmd);
  if (re === undefined) {
    re = new RegExp(`\\\\${cmd}\\s*\\{((?:[^{}]|\\{[^{}]*\\})*)\\}`, "g");
    commandRes.set(cmd, re);
  }
  let out = s;
  for (let guard = 0; guard < 5; guard++) {
    const next = out.replace(re, (_w, inner: string) => f(inner));
    if (next === out) break;
    out = next;
  }
  return out;
}

/** The whole string wrapped in one brace pair (`{{42}}` → `{42}` → `42`). */
function stripOuterBraces(s: string): string {
  let out = s;
  while (out.startsWith("{") && out.endsWith("}")) {
    let depth = 0;
    let wraps = true;
    for (let i = 0; i < out.length - 1; i++) {
      if (out[i] === "{") depth++;
      else if (out[i] === "}") depth--;
      if (depth === 0) {
        wraps = false;
        break;
      }
    }
    if (!wraps) break;
    out = out.slice(1, -1).trim();
  }
  return out;
}

/** The whole string wrapped in one parenthesis pair with no top-level comma: `(\frac{3}{4})` → its inside. */
function stripOuterParens(s: string): string {
  if (!(s.startsWith("(") && s.endsWith(")"))) return s;
  let depth = 0;
  for (let i = 0; i < s.length - 1; i++) {
    if (s[i] === "(") depth++;
    else if (s[i] === ")") depth--;
    if (depth === 0) return s;
  }
  const inner = s.slice(1, -1);
  return splitTopLevel(inner).length > 1 ? s : inner;
}

/** Splits on top-level commas (outside any brackets). */
export function splitTopLevel(s: string, sep = ","): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if ("([{".includes(c)) depth++;
    else if (")]}".includes(c)) depth--;
    else if (depth === 0 && s.startsWith(sep, i)) {
      out.push(s.slice(start, i));
      start = i + sep.length;
    }
  }
  out.push(s.slice(start));
  return out;
}

/** Drops `x =` / `f(x) =` / `x \in` prefixes (each element of a list of assignments too). */
function dropAssignments(s: string): string {
  const prefix = /^\s*[a-zA-Z](?:_\{?\w+\}?)?(?:\([a-z]\))?\s*(?:=|\\in)\s*(?!=)/;
  const parts = splitTopLevel(s);
  if (parts.length > 1 && parts.every((p) => prefix.test(p))) return parts.map((p) => p.replace(prefix, "")).join(",");
  // A single prefix; a chain like "x = 2y = 4" keeps its last side.
  if (prefix.test(s) && !/[<>]/.test(s)) {
    const sides = s.split(/(?<![<>!])=(?!=)/);
    return sides[sides.length - 1]!;
  }
  return s;
}

const NUMBER_WORDS = new Map(
  [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
  ].map((w, i) => [w, String(i)]),
);

export function normalizeAnswer(answer: string): string {
  const hit = normalized.get(answer);
  if (hit !== undefined) return hit;
  const out = normalizeUncached(answer);
  if (normalized.size >= NORMALIZED_CACHE_SIZE) normalized.clear();
  normalized.set(answer, out);
  return out;
}

function normalizeUncached(answer: string): string {
  // The typographic minus (U+2212) and en dash some models write for a negative sign.
  let s = answer.trim().replace(/[\u2212\u2013]/g, "-");
  // Plain numbers (most GSM8K answers) need none of the LaTeX work.
  if (/^-?\d+(?:\.\d+)?$/.test(s))
    return s
      .replace(/^(-?)0+(?=\d)/, "$1")
      .replace(/(\.\d*?)0+$/, "$1")
      .replace(/\.$/, "");
  // Each rewrite below runs only when its trigger character is there: most answers are short
  // and need few of them, and skipping a regex pass is what makes grading fast.
  const slash = s.includes("\\");
  // Math delimiters and markdown bold.
  if (s.includes("$") || slash)
    s = s
      .replace(/^\$+|\$+$/g, "")
      .replace(/^\\\(|\\\)$/g, "")
      .replace(/^\\\[|\\\]$/g, "")
      .trim();
  if (s.includes("*")) s = s.replace(/\*\*/g, "");
  if (slash) {
    s = s.replace(/\\displaystyle|\\(?:left|right|big|Big|bigg|Bigg)(?![a-zA-Z])|\\!/g, "");
    s = s.replace(/\\[dt]frac/g, "\\frac");
  }
  // Degrees, percent, money.
  if (slash || s.includes("°")) s = s.replace(/\^\s*\{?\s*\\circ\s*\}?|°|\\circ|\\degree/g, "");
  if (s.includes("%") || slash) s = s.replace(/\\%|%|\\percent/g, "");
  if (s.includes("$") || slash || /[¢€£]/.test(s)) s = s.replace(/\\\$|\$|\\text\{\s*\\?\$\s*\}|¢|€|£/g, "");
  s = s.trim();
  // Thousands separators: 2{,}019, 2\,019, 2\;019, 2\ 019 and 1,234,567 (not tuple commas).
  if (slash || s.includes(",")) {
    s = s.replace(/(\d)\{,\}(?=\d{3})/g, "$1");
    s = s.replace(/(\d)(?<!\\)\\[,;: ](?=\d{3}(?!\d))/g, "$1");
    if (!/^[([{\\]/.test(s)) {
      for (let guard = 0; guard < 6 && /\d,\d{3}(?!\d)/.test(s); guard++)
        s = s.replace(/(^|[^\d.])(\d{1,3}(?:,\d{3})+)(?![\d,])/g, (_w, pre: string, num: string) => pre + num.replace(/,/g, ""));
    }
  }
  if (slash || s.includes("~")) s = s.replace(/(?<!\\)\\[,;: ]|\\q?quad|~/g, " ");
  // Wrappers whose content is the answer.
  if (s.includes("\\")) s = replaceCommand(s, "(?:mathbf|textbf|boldsymbol|bm|mathrm|textrm|mathit|textit|operatorname)", (inner) => `{${inner}}`);
  // Units after a number: "155 \text{ apples}", "12 cm^2", "5 hours".
  if (/[a-zA-Z]/.test(s)) s = dropUnit(s);
  if (s.includes("\\")) s = replaceCommand(s, "(?:text|mbox|textnormal)", (inner) => inner.trim());
  if (s.includes("=") || s.includes("\\in")) s = dropAssignments(s);
  s = s.trim().replace(/(?<=[\w)}\]])\.$/, "");
  s = stripOuterBraces(s.trim());
  // A number written as a word: "one" is 1.
  const word = NUMBER_WORDS.get(s.trim().toLowerCase());
  if (word !== undefined) return word;
  // Choice letters: "(C)", "C)", "C." and "\text{(C)}" all say C.
  const choice = /^\(?([A-Ea-e])\)?[.:]?$/.exec(s.trim());
  if (choice !== null) return choice[1]!.toLowerCase();
  // Braces around single characters: x^{2} → x^2, \sqrt3 → \sqrt{3} (one canonical form).
  if (s.includes("{")) s = s.replace(/([\^_])\s*\{\s*([^{}\s])\s*\}/g, "$1$2");
  if (s.includes("\\")) {
    s = s.replace(/\\sqrt\s*([^{\s[])/g, "\\sqrt{$1}");
    s = s.replace(/\\frac\s*(\d)\s*(\d)/g, "\\frac{$1}{$2}");
    s = s.replace(/\\frac\s*\{([^{}]*)\}\s*(\d)/g, "\\frac{$1}{$2}");
  }
  if (s.includes("{")) s = s.replace(/(^|[^\\a-zA-Z0-9.}])\{([^{}\\])\}/g, "$1$2");
  s = stripOuterParens(s.replace(/\s+/g, ""));
  if (s.includes("0") || s.includes(".")) {
    // Leading zeros and a bare leading point: 007 → 7, .5 → 0.5 (not inside longer numbers).
    s = s.replace(/(^|[^\d.])0+(?=\d)/g, "$1").replace(/(^|[^\d])\.(\d)/g, "$10.$2");
    // A number with trailing decimal zeros: 18.00 → 18, 2.50 → 2.5.
    s = s.replace(/(\d+\.\d*?)0+(?!\d)/g, "$1").replace(/(\d)\.(?!\d)/g, "$1");
  }
  return s.toLowerCase();
}

/**
 * Normalised answers by their text. A reference is graded once per sample of its group and a
 * model repeats its answers, so most lookups hit; the cache is emptied when it fills.
 */
const normalized = new Map<string, string>();
const NORMALIZED_CACHE_SIZE = 8192;

export function clearNormalizeCache(): void {
  normalized.clear();
}
