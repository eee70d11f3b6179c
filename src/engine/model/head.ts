// Final norm, output projection, log-probs and loss, fused per chunk of token rows. Every Tinker
// loss is a per-token function of the target's log-prob, so the logits' gradient is known as soon
// as a chunk's logits are: the head's backward runs right away and only one chunk of [rows, V]
// logits ever exists (a full [T, V] matrix would be 200 MB for 1k tokens of a 49k vocabulary).
import type { BatchActivations, HeadBuffers } from "./activations.ts";
import type { PackedBatch } from "./batch.ts";
import type { BatchContext } from "./context.ts";
import { linearBackward, linearForward } from "./linear.ts";
import { tokenLoss, type ResolvedLoss, type TokenInputs } from "./losses.ts";
import type { ModelParams } from "./params.ts";
import { allocFloat, type Dtype } from "./tensor.ts";

/** Upper bound on one chunk of logits (128 MiB in float32). */
const HEAD_CHUNK_FLOATS = 1 << 25;
const HEAD_MIN_ROWS = 64;

function headBuffers(dtype: Dtype, params: ModelParams, T: number, V: number): HeadBuffers {
  const maxRows = Math.max(HEAD_MIN_ROWS, Math.floor(HEAD_CHUNK_FLOATS / V));
  // Equal chunks: 1024 rows in two 512s rather than 682 + 342.
  const chunks = Math.ceil(T / maxRows);
  const chunk = Math.max(1, Math.ceil(T / chunks));
  return {
    chunk,
    rstd: allocFloat(dtype, T),
    logits: allocFloat(dtype, chunk * V),
    lp: allocFloat(dtype, chunk),
    lse: allocFloat(dtype, chunk),
    dlp: allocFloat(dtype, chunk),
    hr: params.head.lora !== null ? allocFloat(dtype, chunk * params.head.lora.rank) : null,
  };
}

export interface HeadResult {
  /** Per packed token: log-prob of its target and its loss. */
  logprobs: Float64Array;
  losses: Float64Array;
}

/**
 * Runs the head over acts.residual[L]. When `backward`, leaves the gradient wrt the last residual
 * in acts.scratch.dres and accumulates the head's and final norm's parameter gradients.
 */
export function headForwardLoss(
  c: BatchContext, dtype: Dtype, params: ModelParams, acts: BatchActivations, batch: PackedBatch,
  loss: ResolvedLoss, backward: boolean,
): HeadResult {
  const { k, config, T } = c;
  const { hiddenSize: D, vocabSize: V, rmsNormEps: eps } = config;
  const sc = acts.scratch;
  const xLast = acts.residual[config.numLayers];
  const normed = sc.xn;
  if (acts.head === null) acts.head = headBuffers(dtype, params, T, V);
  const { chunk, rstd, logits, lp, lse, dlp, hr } = acts.head;
  k.rmsnormForward(xLast, params.finalNorm.data, normed, rstd, T, D, eps);

  const head = params.head;
  const dnormed = sc.dxn;
  const result: HeadResult = { logprobs: new Float64Array(T), losses: new Float64Array(T) };
  const inputs: TokenInputs = { weight: 1, advantage: 0, samplerLogprob: 0 };

  for (let r0 = 0; r0 < T; r0 += chunk) {
    const rows = Math.min(chunk, T - r0);
    const x = normed.subarray(r0 * D, (r0 + rows) * D);
    const targets = batch.targets.subarray(r0, r0 + rows);
    linearForward(k, head, x, rows, logits, hr, sc.ones);
    k.logprobsForward(logits, targets, lp, lse, rows, V);
    for (let i = 0; i < rows; i++) {
      const t = r0 + i;
      inputs.weight = batch.weights[t];
      inputs.advantage = batch.advantages[t];
      inputs.samplerLogprob = batch.samplerLogprobs[t];
      const tl = tokenLoss(loss, lp[i], inputs);
      result.logprobs[t] = lp[i];
      result.losses[t] = tl.loss;
      dlp[i] = tl.dlp;
    }
    if (backward) {
      k.logprobsBackward(dlp, logits, targets, lse, logits, rows, V);
      linearBackward(k, head, x, rows, hr, logits, dnormed.subarray(r0 * D, (r0 + rows) * D), 0, sc.dhr, sc.ones);
    }
  }
  if (backward) k.rmsnormBackward(dnormed, xLast, params.finalNorm.data, rstd, sc.dres, params.finalNorm.grad, T, D);
  return result;
}
