// One SDFT training step's data: for each sampled completion of the bare question, the teacher —
// the same model shown a demonstration — reads (teacher prompt + completion) once, and the datum
// over (student prompt + completion) gets either its top-K rows as soft cross_entropy targets or,
// with topk = 0, the per-token advantage lp_teacher − lp_student for importance sampling.
import { modelInputToInts } from "../tinker/modelInput.ts";
import { tensorDataFromFloat32, tensorDataFromInt64 } from "../tinker/tensorData.ts";
import type { SamplingClient } from "../tinker/clients.ts";
import type { Datum, ModelInput } from "../tinker/types.ts";
import { sdftAdvantages, sdftSoftTargets } from "./sdft.ts";
import { type TopKRow, withSoftTargets } from "./softTargets.ts";

export interface SampledCompletion {
  tokens: readonly number[];
  /** The sampler's log-prob of each completion token. */
  logprobs: readonly number[];
}

/** What the teacher said about one completion read after its own prompt. */
export interface TeacherReading {
  /** lp_teacher of each completion token. */
  logprobs: readonly number[];
  /** Top-K rows of the whole teacher sequence (topk > 0 only). */
  topk?: readonly TopKRow[];
}

export interface SdftDatum {
  datum: Datum;
  /** Σ over completion tokens of lp_student − lp_teacher (the reverse-KL estimate's numerator). */
  klSum: number;
  tokens: number;
}

/** Datum positions for (prompt + completion): inputs, next-token targets and the completion mask. */
export function completionLayout(promptTokens: readonly number[], completion: readonly number[]): { inputs: number[]; targets: number[]; mask: Float32Array } {
  if (promptTokens.length === 0) throw new Error("SDFT: the student prompt is empty");
  if (completion.length === 0) throw new Error("SDFT: the sampled completion is empty");
  const sequence = [...promptTokens, ...completion];
  const inputs = sequence.slice(0, -1);
  const targets = sequence.slice(1);
  const mask = new Float32Array(targets.length);
  mask.fill(1, promptTokens.length - 1);
  return { inputs, targets, mask };
}

/** The teacher's view of a completion: its log-probs (and top-K rows) after the teacher prompt. */
export async function readAsTeacher(teacher: SamplingClient, teacherPrompt: ModelInput, completion: readonly number[], topk: number): Promise<TeacherReading> {
  const promptTokens = modelInputToInts(teacherPrompt);
  const sequence: ModelInput = { chunks: [{ type: "encoded_text", tokens: [...promptTokens, ...completion] }] };
  const response = await teacher.sample(
    sequence,
    1,
    { max_tokens: 1, temperature: 1 },
    { includePromptLogprobs: true, ...(topk > 0 ? { topkPromptLogprobs: topk } : {}) },
  );
  const lps = response.prompt_logprobs;
  if (lps === undefined || lps.length !== promptTokens.length + completion.length) {
    throw new Error(`SDFT teacher returned ${lps?.length ?? "no"} prompt logprobs for a ${promptTokens.length + completion.length}-token sequence`);
  }
  const logprobs = lps.slice(promptTokens.length).map((v, j) => {
    if (v === null) throw new Error(`SDFT teacher has no log-prob for completion token ${j}`);
    return v;
  });
  if (topk === 0) return { logprobs };
  const rows = response.topk_prompt_logprobs;
  if (rows === undefined) throw new Error("SDFT teacher returned no top-k prompt logprobs; its server must support topk_prompt_logprobs (or set topk=0)");
  return { logprobs, topk: rows };
}

/**
 * The training datum for one completion. topk = 0: importance-sampling inputs (target_tokens,
 * the sampler's logprobs, advantages lp_teacher − lp_student on completion tokens); topk > 0:
 * [N, K] soft targets from the teacher's top-K rows at the completion positions.
 */
export function sdftDatum(studentPrompt: ModelInput, teacherPromptLength: number, sample: SampledCompletion, teacher: TeacherReading, topk: number): SdftDatum {
  const promptTokens = modelInputToInts(studentPrompt);
  const { inputs, targets, mask } = completionLayout(promptTokens, sample.tokens);
  if (sample.logprobs.length !== sample.tokens.length) throw new Error(`SDFT: ${sample.tokens.length} sampled tokens but ${sample.logprobs.length} logprobs`);
  if (teacher.logprobs.length !== sample.tokens.length)
    throw new Error(`SDFT: the teacher scored ${teacher.logprobs.length} of ${sample.tokens.length} completion tokens`);
  const studentLogprobs = new Float32Array(targets.length);
  studentLogprobs.set(sample.logprobs, promptTokens.length - 1);
  const adv = sdftAdvantages(studentLogprobs, mask, teacher.logprobs);
  const klSum = adv.studentLogprobSum - adv.teacherLogprobSum;
  const model_input: ModelInput = { chunks: [{ type: "encoded_text", tokens: inputs }] };
  if (topk === 0) {
    return {
      datum: {
        model_input,
        loss_fn_inputs: {
          target_tokens: tensorDataFromInt64(targets),
          logprobs: tensorDataFromFloat32(studentLogprobs),
          advantages: tensorDataFromFloat32(adv.advantages),
        },
      },
      klSum,
      tokens: adv.tokens,
    };
  }
  if (teacher.topk === undefined) throw new Error("SDFT: topk > 0 needs the teacher's top-k rows");
  const soft = sdftSoftTargets(teacher.topk, teacherPromptLength, mask, targets, topk);
  return { datum: withSoftTargets({ model_input, loss_fn_inputs: {} }, soft), klSum, tokens: adv.tokens };
}
