// Short text answers (the cookbook's search_tool grading, SQuAD's rules): the answer is what
// follows the last "Answer:"; it matches a gold answer when both are equal after lower-casing and
// removing punctuation, the articles a/an/the and extra white space (exact match); F1 is the
// best word-overlap F1 against any gold answer.

/** Lower-cased, punctuation and articles removed, white space collapsed. */
export function normalizeTextAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\p{P}\p{S}]/gu, "")
    .replace(/\b(a|an|the)\b/g, " ")
    .split(/\s+/)
    .filter((w) => w !== "")
    .join(" ");
}

/** The text after the last "Answer:", or null when there is none. */
export function extractAnswerLine(response: string): string | null {
  const at = response.lastIndexOf("Answer:");
  return at < 0 ? null : response.slice(at + "Answer:".length).trim();
}

export function exactMatch(prediction: string, golds: readonly string[]): boolean {
  const p = normalizeTextAnswer(prediction);
  return golds.some((g) => normalizeTextAnswer(g) === p);
}

/** The best word-overlap F1 of the prediction against any gold answer (0 when either is empty). */
export function tokenF1(prediction: string, golds: readonly string[]): number {
  const predicted = normalizeTextAnswer(prediction).split(" ").filter(Boolean);
  let best = 0;
  for (const gold of golds) {
    const wanted = normalizeTextAnswer(gold).split(" ").filter(Boolean);
    if (predicted.length === 0 || wanted.length === 0) continue;
    const left = new Map<string, number>();
    for (const w of wanted) left.set(w, (left.get(w) ?? 0) + 1);
    let common = 0;
    for (const w of predicted) {
      const n = left.get(w) ?? 0;
      if (n > 0) {
        common += 1;
        left.set(w, n - 1);
      }
    }
    if (common === 0) continue;
    const precision = common / predicted.length;
    const recall = common / wanted.length;
    best = Math.max(best, (2 * precision * recall) / (precision + recall));
  }
  return best;
}

export interface TextAnswerGrade {
  /** 1 when the response has an "Answer:" line. */
  format: number;
  /** Exact match of that line (1/0). */
  correct: number;
  f1: number;
}

/** Grades a final reply against gold answers; without an "Answer:" line nothing is correct. */
export function gradeTextAnswer(response: string, golds: readonly string[]): TextAnswerGrade {
  const answer = extractAnswerLine(response);
  if (answer === null) return { format: 0, correct: 0, f1: 0 };
  return { format: 1, correct: exactMatch(answer, golds) ? 1 : 0, f1: tokenF1(answer, golds) };
}
