// Off-policy distillation's soft targets: the teacher reads a fixed sequence once (top-k prompt
// logprobs of a one-token sample) and, at every trained position, its K most likely next tokens
// become [N, K] cross_entropy targets weighted by the teacher's probabilities renormalised over
// those K. The student then minimises Σ_k −p_teacher(k)·log p_student(k): forward KL to the
// teacher restricted to its top K, up to a constant.
import type { SamplingClient } from "../tinker/clients.ts";
import { appendTokens, modelInputLength } from "../tinker/modelInput.ts";
import { tensorDataFromFloat32, tensorDataFromInt64, tensorDataToNumbers, tensorShape } from "../tinker/tensorData.ts";
import type { Datum, ModelInput } from "../tinker/types.ts";
import { mapWithConcurrency } from "../async/concurrency.ts";

/** One position's [token, logprob] pairs, or null where the teacher has none (the first token). */
export type TopKRow = readonly (readonly [number, number])[] | null;

export interface SoftTargets {
  /** [N, K] row-major. */
  tokens: Int32Array;
  /** [N, K] row-major; each trained row sums to 1, untrained rows are 0. */
  weights: Float32Array;
  K: number;
}

/**
 * Soft targets for `trained.length` positions from the top-k rows of the full sequence. Row
 * `offset + t` holds the teacher's prediction for datum position t (offset = rows − positions, 1
 * for a datum whose full sequence is its input plus the last target). Rows with fewer than K
 * entries are padded with weight 0; a position with `trained[t]` false gets weight 0 everywhere
 * (and its original target in column 0, so the datum stays valid).
 */
export function softTargetsFromTopK(rows: readonly TopKRow[], trained: readonly boolean[], fallbackTargets: readonly number[], K: number): SoftTargets {
  if (!Number.isInteger(K) || K < 1) throw new Error(`n_teacher_targets must be a positive integer, got ${K}`);
  const N = trained.length;
  const offset = rows.length - N;
  if (offset < 0) throw new Error(`teacher returned ${rows.length} top-k rows for ${N} target positions; expected at least ${N}`);
  const tokens = new Int32Array(N * K);
  const weights = new Float32Array(N * K);
  for (let t = 0; t < N; t++) {
    if (!trained[t]) {
      tokens.fill(fallbackTargets[t]!, t * K, (t + 1) * K);
      continue;
    }
    const row = rows[offset + t];
    if (row === null || row === undefined || row.length === 0) {
      throw new Error(`teacher top-k row ${offset + t} (target position ${t}) is empty; the teacher must score every trained position`);
    }
    const entries = [...row].sort((a, b) => b[1] - a[1]).slice(0, K);
    const max = entries[0]![1];
    let z = 0;
    for (const [, lp] of entries) z += Math.exp(lp - max);
    for (let k = 0; k < K; k++) {
      const e = entries[k];
      tokens[t * K + k] = e !== undefined ? e[0] : entries[0]![0];
      weights[t * K + k] = e !== undefined ? Math.exp(e[1] - max) / z : 0;
    }
  }
  return { tokens, weights, K };
}

/** The teacher's top-k rows for a whole sequence (row 0 is null). */
export async function teacherTopK(teacher: SamplingClient, sequence: ModelInput, K: number): Promise<TopKRow[]> {
  const response = await teacher.sample(sequence, 1, { max_tokens: 1, temperature: 1 }, { includePromptLogprobs: true, topkPromptLogprobs: K });
  const rows = response.topk_prompt_logprobs;
  if (rows === undefined) {
    throw new Error(
      `teacher ${teacher.modelPath ?? teacher.baseModel} returned no top-k prompt logprobs; its server must support topk_prompt_logprobs for soft targets`,
    );
  }
  const length = modelInputLength(sequence);
  if (rows.length !== length) throw new Error(`teacher returned ${rows.length} top-k rows for a ${length}-token sequence`);
  return rows;
}

/** Replaces a supervised datum's [N] targets with the teacher's [N, K] soft targets (positions with weight 0 stay untrained). */
export async function softTargetDatum(teacher: SamplingClient, datum: Datum, K: number): Promise<Datum> {
  const targetsTd = datum.loss_fn_inputs["target_tokens"];
  const weightsTd = datum.loss_fn_inputs["weights"];
  if (targetsTd === undefined || weightsTd === undefined) throw new Error("softTargetDatum: the datum needs target_tokens and weights");
  if (tensorShape(targetsTd).length !== 1) throw new Error(`softTargetDatum: target_tokens has shape [${tensorShape(targetsTd).join(", ")}]; expected [N]`);
  const targets = tensorDataToNumbers(targetsTd);
  const trained = tensorDataToNumbers(weightsTd).map((w) => w > 0);
  const full = appendTokens(datum.model_input, [targets[targets.length - 1]!]);
  const rows = await teacherTopK(teacher, full, K);
  const soft = softTargetsFromTopK(rows, trained, targets, K);
  return withSoftTargets(datum, soft);
}

export function withSoftTargets(datum: Datum, soft: SoftTargets): Datum {
  const N = soft.tokens.length / soft.K;
  return {
    model_input: datum.model_input,
    loss_fn_inputs: {
      target_tokens: tensorDataFromInt64(soft.tokens, [N, soft.K]),
      weights: tensorDataFromFloat32(soft.weights, [N, soft.K]),
    },
  };
}

/** Soft targets for a batch, datum i scored by `teachers[i]`, at most `concurrency` teacher calls at once. */
export function softTargetBatch(teachers: readonly SamplingClient[], data: readonly Datum[], K: number, concurrency: number): Promise<Datum[]> {
  if (teachers.length !== data.length) throw new Error(`softTargetBatch: ${teachers.length} teachers for ${data.length} datums`);
  return mapWithConcurrency(data, concurrency, (d, i) => softTargetDatum(teachers[i]!, d, K));
}
