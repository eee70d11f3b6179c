// Multiple-choice grading: find the letter a response picks ("Answer: B", "(c)", "\boxed{D}",
// "The answer is A.", or a bare "B") and compare it with the reference letter.
import { type AnswerGrade, extractBoxed } from "../grading/index.ts";

export const CHOICE_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/** "A. first\nB. second…" — how choices are shown under the question. */
export function formatChoices(choices: readonly string[]): string {
  return choices.map((c, i) => `${CHOICE_LETTERS[i]}. ${c}`).join("\n");
}

/**
 * The letter a response picks among `numChoices` options, or null. Explicit forms win over a
 * letter that merely starts the response; the last explicit statement counts.
 */
export function extractChoiceLetter(response: string, numChoices: number): string | null {
  const allowed = CHOICE_LETTERS.slice(0, Math.max(1, Math.min(numChoices, CHOICE_LETTERS.length)));
  const isAllowed = (l: string | undefined): l is string => l !== undefined && l.length === 1 && allowed.includes(l.toUpperCase());
  const boxed = extractBoxed(response);
  if (boxed !== null) {
    const m = /^\s*(?:\\text\{)?\(?([A-Za-z])\)?\}?\s*$/.exec(boxed);
    if (m !== null && isAllowed(m[1])) return m[1].toUpperCase();
  }
  const explicit = /(?:answer\s*(?:is|:)?|option|choice)\s*:?\s*\**\(?([A-Za-z])\)?(?![A-Za-z])/gi;
  let last: string | null = null;
  for (const m of response.matchAll(explicit)) if (isAllowed(m[1])) last = m[1].toUpperCase();
  if (last !== null) return last;
  const leading = /^\s*\**\(?([A-Za-z])(?:[).:\]]|\s|$)/.exec(response);
  if (leading !== null && isAllowed(leading[1]) && (leading[1] === leading[1].toUpperCase() || /^\s*\(?[a-z][).]/.test(response))) {
    return leading[1].toUpperCase();
  }
  const parenthesised = [...response.matchAll(/\(([A-Z])\)/g)].map((m) => m[1]!).filter(isAllowed);
  return parenthesised.length > 0 ? parenthesised[parenthesised.length - 1]! : null;
}

export function gradeChoice(response: string, referenceLetter: string, numChoices: number): AnswerGrade {
  const extracted = extractChoiceLetter(response, numChoices);
  return { correct: extracted !== null && extracted === referenceLetter.trim().toUpperCase(), extracted };
}
