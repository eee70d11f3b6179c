// The grading module: one answer checker for RL rewards (`boxed`) and benchmarks (`lenient`).
export {
  type AnswerGrade,
  type GradeMode,
  type GradeOptions,
  answersEqual,
  grade,
  gradeFirstChunk,
  gradeFirstNumber,
  gsm8kReference,
  mathReference,
  numberValue,
} from "./grade.ts";
export { extractBoxed, extractFirstNumber, extractLastNumber, extractLenient } from "./extract.ts";
export { normalizeAnswer } from "./normalize.ts";
export { type TextAnswerGrade, exactMatch, extractAnswerLine, gradeTextAnswer, normalizeTextAnswer, tokenF1 } from "./textAnswer.ts";
import { clearNormalizeCache } from "./normalize.ts";
import { clearSymbolicCache } from "./symbolic.ts";

/** Forgets every cached normalisation and compiled expression (to measure grading of fresh answers). */
export function clearGradingCaches(): void {
  clearNormalizeCache();
  clearSymbolicCache();
}
