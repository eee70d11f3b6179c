// Self-distillation fine-tuning (SDFT): the teacher is the student's own base model shown the
// question together with a golden answer; the student answers the bare question. On the
// student's sampled completion the teacher gives either its top-K distribution at every token
// (soft cross_entropy targets: forward KL to the teacher over its top K) or, with topk = 0, its
// log-prob of each sampled token, and the per-token advantage lp_teacher − lp_student drives an
// importance_sampling update (a reverse-KL gradient estimate).
import type { Message } from "../renderers/types.ts";
import { softTargetsFromTopK, type SoftTargets, type TopKRow } from "./softTargets.ts";

export const DEFAULT_DEMO_TEMPLATE =
  "{question}\n\nThis is an example for a response to the question:\n{golden_answer}\n\nNow answer with a response of your own.";

/** The teacher's conversation: the question with the golden answer as an in-context demonstration. */
export function sdftTeacherMessages(question: string, goldenAnswer: string, options: { template?: string; systemPrompt?: string | null } = {}): Message[] {
  const template = options.template ?? DEFAULT_DEMO_TEMPLATE;
  if (!template.includes("{question}")) throw new Error(`SDFT demo template must contain {question}: ${JSON.stringify(template)}`);
  const content = template.replaceAll("{question}", question).replaceAll("{golden_answer}", goldenAnswer);
  const messages: Message[] = [];
  if (options.systemPrompt) messages.push({ role: "system", content: options.systemPrompt });
  messages.push({ role: "user", content });
  return messages;
}

export interface SdftAdvantages {
  /** Per datum position: lp_teacher − lp_student on completion tokens, 0 elsewhere. */
  advantages: Float32Array;
  /** Completion tokens that got an advantage. */
  tokens: number;
  teacherLogprobSum: number;
  studentLogprobSum: number;
}

/**
 * topk = 0 mode. `mask[t] > 0` marks the datum positions whose targets are completion tokens, in
 * order; `teacherCompletionLogprobs[j]` is the teacher's log-prob of the j-th completion token.
 */
export function sdftAdvantages(
  studentLogprobs: ArrayLike<number>,
  mask: ArrayLike<number>,
  teacherCompletionLogprobs: readonly (number | null)[],
): SdftAdvantages {
  if (studentLogprobs.length !== mask.length) throw new Error(`sdftAdvantages: ${studentLogprobs.length} logprobs but ${mask.length} mask entries`);
  const advantages = new Float32Array(mask.length);
  let j = 0;
  let teacherLogprobSum = 0;
  let studentLogprobSum = 0;
  for (let t = 0; t < mask.length; t++) {
    if (!(mask[t]! > 0)) continue;
    const teacherLogprob = teacherCompletionLogprobs[j++];
    if (teacherLogprob === undefined)
      throw new Error(`sdftAdvantages: the teacher scored ${teacherCompletionLogprobs.length} completion tokens but the datum has more`);
    if (teacherLogprob === null) throw new Error(`sdftAdvantages: the teacher has no log-prob for completion token ${j - 1}`);
    advantages[t] = teacherLogprob - studentLogprobs[t]!;
    teacherLogprobSum += teacherLogprob;
    studentLogprobSum += studentLogprobs[t]!;
  }
  if (j !== teacherCompletionLogprobs.length)
    throw new Error(`sdftAdvantages: the teacher scored ${teacherCompletionLogprobs.length} completion tokens but the datum has ${j}`);
  return { advantages, tokens: j, teacherLogprobSum, studentLogprobSum };
}

/**
 * Top-K mode. `rows` are the teacher's top-k prompt logprobs of teacher prompt + completion;
 * completion token j sits at row `teacherPromptLength + j`. Datum positions with mask 0 keep
 * their target with weight 0.
 */
export function sdftSoftTargets(
  rows: readonly TopKRow[],
  teacherPromptLength: number,
  mask: ArrayLike<number>,
  targets: readonly number[],
  K: number,
): SoftTargets {
  const aligned: TopKRow[] = [];
  const trained: boolean[] = [];
  let j = 0;
  for (let t = 0; t < mask.length; t++) {
    const on = mask[t]! > 0;
    trained.push(on);
    if (!on) {
      aligned.push(null);
      continue;
    }
    const row = rows[teacherPromptLength + j];
    if (row === undefined) throw new Error(`sdftSoftTargets: teacher rows end at ${rows.length}; completion token ${j} needs row ${teacherPromptLength + j}`);
    aligned.push(row);
    j++;
  }
  return softTargetsFromTopK(aligned, trained, targets, K);
}
