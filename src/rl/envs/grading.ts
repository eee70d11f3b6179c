// Answer checkers for question/answer envs. Each takes the model's visible response and the
// reference answer string; none throws on odd input (a crashing grader would fail the group).

/** The response's first whitespace-separated chunk equals the reference (the arithmetic env's rule). */
export function gradeFirstChunk(response: string, reference: string): boolean {
  const first = response.trim().split(/\s+/)[0] ?? "";
  return first.length > 0 && normalizeNumber(first) === normalizeNumber(reference.trim());
}

/** The argument of the last `\boxed{…}` (braces balanced), or null. */
export function extractBoxed(text: string): string | null {
  const start = text.lastIndexOf("\\boxed{");
  if (start < 0) return null;
  let depth = 0;
  for (let i = start + "\\boxed".length; i < text.length; i++) {
    const c = text[i];
    if (c === "{") depth += 1;
    else if (c === "}") {
      depth -= 1;
      if (depth === 0) return text.slice(start + "\\boxed{".length, i);
    }
  }
  return null;
}

/**
 * A numeric answer in canonical form: "$1,234.50" → "1234.5", "-3" → "-3". Non-numbers come back
 * trimmed and lower-cased so string answers still compare.
 */
export function normalizeNumber(text: string): string {
  const cleaned = text.trim().replace(/^\$/, "").replace(/,/g, "").replace(/\.$/, "").replace(/\s+/g, "");
  if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(cleaned)) return String(Number(cleaned));
  return cleaned.toLowerCase();
}

/** `\boxed{}` grading: the boxed value equals the reference once both are normalized. */
export function gradeBoxed(response: string, reference: string): boolean {
  const boxed = extractBoxed(response);
  return boxed !== null && normalizeNumber(boxed) === normalizeNumber(reference);
}

/** GSM8K's `answer` field ends with "#### <number>"; that number is the reference. */
export function gsm8kReference(answerField: string): string {
  const idx = answerField.lastIndexOf("####");
  if (idx < 0) throw new Error(`GSM8K answer has no "####" marker: ${JSON.stringify(answerField.slice(-80))}`);
  return normalizeNumber(answerField.slice(idx + 4));
}

export type AnswerGrader = (response: string, reference: string) => boolean;
