// Final norm, output projection, log-probs and loss, fused per chunk of token rows. Every Tinker
// loss is a per-token function of the target's log-prob, so the logits' gradient is known as soon
// as a chunk's logits are: the head's backward runs right away and only one chunk of [rows, V]
// logits ever exists (a full [T, V] matrix would be 200 MB for 1k tokens of a 49k vocabulary).
import type { FloatArray } from "../kernels/types.ts";
import type { BatchActivations, HeadBuffers } from "./activations.ts";
import type { PackedBatch } from "./batch.ts";
import type { BatchContext } from "./context.ts";
import { linearBackward, linearForward } from "./linear.ts";
import { tokenLoss, type ResolvedLoss, type TokenInputs } from "./losses.ts";
import type { ModelParams } from "./params.ts";
import { allocFloat, type Dtype } from "./tensor.ts";

/**
 * Upper bound on one chunk of logits (256 MiB in float32). Each chunk streams the whole [V, D]
 * head weight through two products, so fewer, taller chunks pack it fewer times: on a Qwen3-0.6B
 * shape (V = 151936) 3 chunks of 342 rows instead of 5 of 205. PyTorch holds all [T, V] logits and
 * their gradient at once.
 */
const HEAD_CHUNK_FLOATS = 1 << 26;
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
  /** Soft targets (batch.width > 1): log-probs of target columns 1.., [T, width−1]; else null. */
  extraLogprobs: Float64Array | null;
}

/**
 * Runs the head over acts.residual[L]. When `backward`, leaves the gradient wrt the last residual
 * in acts.scratch.dres and accumulates the head's and final norm's parameter gradients.
 */
export function headForwardLoss(
  c: BatchContext,
  dtype: Dtype,
  params: ModelParams,
  acts: BatchActivations,
  batch: PackedBatch,
  loss: ResolvedLoss,
  backward: boolean,
): HeadResult {
  const { k, config, T } = c;
  const { hiddenSize: D, vocabSize: V, rmsNormEps: eps } = config;
  const sc = acts.scratch;
  const xLast = acts.residual[config.numLayers];
  const normed = sc.xn;
  if (acts.head === null) acts.head = headBuffers(dtype, params, T, V);
  const { chunk, rstd, logits, lp, lse, dlp, hr } = acts.head;
  k.rmsnormForward(xLast, c.normWeight(params.finalNorm), normed, rstd, T, D, eps);

  const head = params.head;
  const dnormed = sc.dxn;
  const extra = batch.width - 1;
  const result: HeadResult = {
    logprobs: new Float64Array(T),
    losses: new Float64Array(T),
    extraLogprobs: extra > 0 ? new Float64Array(T * extra) : null,
  };
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
    if (extra > 0) softTargetsForward(batch, result, logits, lse, dlp, r0, rows, V);
    if (backward) {
      k.logprobsBackward(dlp, logits, targets, lse, logits, rows, V);
      if (extra > 0) softTargetsBackward(batch, logits, r0, rows, V);
      linearBackward(k, head, x, rows, hr, logits, dnormed.subarray(r0 * D, (r0 + rows) * D), 0, sc.dhr, sc.ones);
    }
  }
  if (backward) k.rmsnormBackward(dnormed, xLast, c.normWeight(params.finalNorm), rstd, sc.dres, params.finalNorm.grad, T, D);
  return result;
}

/**
 * Cross-entropy on target columns 1.. of each row: lp_k = logit[t_k] − lse, loss −w_k·lp_k. Their
 * dlp (−w_k) is added to column 0's so that one kernel call gives Σ_k dlp_k·(−softmax) plus the
 * one-hot at t_0; softTargetsBackward then moves each dlp_k's one-hot from t_0 to t_k.
 */
function softTargetsForward(
  batch: PackedBatch,
  result: HeadResult,
  logits: FloatArray,
  lse: FloatArray,
  dlp: FloatArray,
  r0: number,
  rows: number,
  V: number,
): void {
  const extra = batch.width - 1;
  const { extraTargets, extraWeights } = batch;
  const out = result.extraLogprobs;
  if (extraTargets === null || extraWeights === null || out === null) return;
  for (let i = 0; i < rows; i++) {
    const t = r0 + i;
    for (let k = 0; k < extra; k++) {
      const target = extraTargets[t * extra + k];
      if (target < 0) continue;
      const w = extraWeights[t * extra + k];
      const lp = logits[i * V + target] - lse[i];
      out[t * extra + k] = lp;
      result.losses[t] += -lp * w;
      dlp[i] += -w;
    }
  }
}

function softTargetsBackward(batch: PackedBatch, dlogits: FloatArray, r0: number, rows: number, V: number): void {
  const extra = batch.width - 1;
  const { extraTargets, extraWeights, targets } = batch;
  if (extraTargets === null || extraWeights === null) return;
  for (let i = 0; i < rows; i++) {
    const t = r0 + i;
    const first = targets[t];
    for (let k = 0; k < extra; k++) {
      const target = extraTargets[t * extra + k];
      if (target < 0) continue;
      const d = -extraWeights[t * extra + k];
      dlogits[i * V + target] += d;
      dlogits[i * V + first] -= d;
    }
  }
}
