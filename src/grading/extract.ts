// Finding the answer a response commits to. `boxed`: the last \boxed{…} / \fbox{…} (the RL
// reward's format). `lenient` (benchmarks): the box, else a stated final answer ("the answer is
// …"), else "#### …", else a bold final answer, else the last number. Pure, never throws.

/** The argument of the box that starts at `at` (a `\boxed` or `\fbox`), or null when unclosed. */
function boxArgument(text: string, at: number): string | null {
  let i = at + (text.startsWith("\\boxed", at) ? "\\boxed".length : "\\fbox".length);
  while (text[i] === " ") i++;
  if (text[i] !== "{") {
    // `\boxed 5`: the argument runs to the next space, `$` or sentence end.
    const m = /^([^\s${}]+?)(?=[\s$}]|\.(?:\s|$)|$)/.exec(text.slice(i));
    return m === null ? null : m[1]!;
  }
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text[j];
    if (c === "\\") {
      j++; // an escaped brace (`\{`) does not open or close the argument
      continue;
    }
    if (c === "{") depth += 1;
    else if (c === "}") {
      depth -= 1;
      if (depth === 0) return text.slice(i + 1, j);
    }
  }
  return null;
}

/**
 * The argument of the last closed `\boxed{…}` or `\fbox{…}`, or null. A box's own braces are
 * counted from its opening brace, so stray braces elsewhere in the response do not matter.
 */
export function extractBoxed(text: string): string | null {
  const starts: number[] = [];
  for (const m of text.matchAll(/\\(?:boxed|fbox)(?![a-zA-Z])/g)) starts.push(m.index);
  for (let k = starts.length - 1; k >= 0; k--) {
    const arg = boxArgument(text, starts[k]!);
    if (arg !== null && arg.trim() !== "") return arg.trim();
  }
  return null;
}

const NUMBER_RE = /[-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s*\/\s*\d+)?|[-\u2212]?\.\d+/g;

/** The last number written in the text ("1,234.5", "-3", "3/4"), or null. */
export function extractLastNumber(text: string): string | null {
  const matches = text.match(NUMBER_RE);
  return matches === null ? null : matches[matches.length - 1]!.replace(/\s+/g, "");
}

/** The first number in the text (same forms as extractLastNumber), or null. */
export function extractFirstNumber(text: string): string | null {
  const m = text.match(new RegExp(NUMBER_RE.source));
  return m === null ? null : m[0].replace(/\s+/g, "");
}

/** A stated answer cut to its first sentence, wrappers and trailing punctuation removed. */
function statedAnswer(raw: string): string {
  let s = raw.trim();
  // The sentence ends at a period followed by a space or the end, not inside "79.63".
  const end = /\.(?=\s|$)|\n/.exec(s);
  if (end !== null) s = s.slice(0, end.index);
  s = s
    .replace(/^[:\s]+/, "")
    .replace(/^\*\*|\*\*$/g, "")
    .trim();
  s = s.replace(/^\\\(|\\\)$/g, "").replace(/^\\\[|\\\]$/g, "");
  if (/^\$[^$]*\$$/.test(s)) s = s.slice(1, -1);
  return s.replace(/(?<!\\)[.,;!]+$/, "").trim();
}

/** Worded answers keep their words; a sentence around a number gives the number. */
function answerOrNumber(stated: string): string | null {
  if (stated === "") return null;
  const hasMath = /\\|\^|[=(){}[\]]/.test(stated);
  const words = stated.split(/\s+/).length;
  if (hasMath || words <= 3) return stated;
  return extractLastNumber(stated) ?? stated;
}

/** The answer in lenient mode (see the file comment), or null when there is nothing answer-like. */
export function extractLenient(response: string): string | null {
  const boxed = extractBoxed(response);
  if (boxed !== null) return boxed;
  let stated: string | null = null;
  for (const m of response.matchAll(/(?:the\s+)?(?:final\s+)?answer\s*(?:is|:)\s*:?\s*([^\n]+)/gi)) stated = m[1]!;
  // "Final Answer: The final answer is $x$." states it twice on one line; the last statement counts.
  for (
    let inner = stated === null ? null : /answer\s*(?:is|:)\s*:?\s*(.+)/i.exec(stated);
    inner !== null;
    inner = /answer\s*(?:is|:)\s*:?\s*(.+)/i.exec(stated)
  )
    stated = inner[1]!;
  if (stated !== null) {
    const a = answerOrNumber(statedAnswer(stated));
    if (a !== null) return a;
  }
  let hashes: string | null = null;
  for (const m of response.matchAll(/####\s*([^\n]+)/g)) hashes = m[1]!;
  if (hashes !== null) {
    const a = answerOrNumber(statedAnswer(hashes));
    if (a !== null) return a;
  }
  let bold: string | null = null;
  for (const m of response.matchAll(/\*\*([^*\n]+)\*\*/g)) bold = m[1]!;
  if (bold !== null) {
    const a = answerOrNumber(statedAnswer(bold));
    if (a !== null) return a;
  }
  return extractLastNumber(response);
}
