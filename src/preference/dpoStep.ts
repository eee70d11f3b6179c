// One DPO step and the held-out DPO evaluation, independent of run bookkeeping: the loop in
// ./train.ts calls these with the training client and the frozen reference sampler.
import { computeMeanNll } from "../supervised/common.ts";
import type { SamplingClient, TrainingClient } from "../tinker/clients.ts";
import { tensorDataToFloat32 } from "../tinker/tensorData.ts";
import type { AdamParams, Datum } from "../tinker/types.ts";
import { referenceLogprobs } from "./dpoReference.ts";
import { dpoCustomLoss, weightedSum } from "./dpoLoss.ts";

/** forward_backward_custom with the DPO loss, then an Adam step; both queued before awaiting. */
export async function dpoTrainStep(
  trainingClient: TrainingClient,
  reference: SamplingClient,
  batch: Datum[],
  beta: number,
  adam: AdamParams,
): Promise<Record<string, number>> {
  const ref = await referenceLogprobs(reference, batch);
  const fb = await trainingClient.forwardBackwardCustom(batch, dpoCustomLoss(ref, beta));
  const opt = await trainingClient.optimStep(adam);
  const out = await fb.result();
  await opt.result();
  const metrics: Record<string, number> = {};
  for (const key of ["dpo_loss", "accuracy", "margin", "chosen_reward", "rejected_reward", "num_pairs", "num_tokens"]) {
    const v = out.metrics[key];
    if (v !== undefined) metrics[key] = v;
  }
  return metrics;
}

/**
 * Held-out pairs scored by the current weights (forward only) against their reference logprobs:
 * test/dpo_loss, test/accuracy, test/margin, … and test/nll (token-mean NLL of both completions).
 */
export class DpoEvaluator {
  private referenceCache: Float32Array[] | null = null;

  constructor(
    readonly data: Datum[],
    readonly reference: SamplingClient,
    readonly beta: number,
    readonly prefix = "test",
  ) {
    if (data.length % 2 !== 0 || data.length === 0) throw new Error(`DPO evaluator needs interleaved chosen/rejected datums; got ${data.length}`);
  }

  /** Implied rewards β·(π − π_ref) of each held-out pair at the last evaluation. */
  lastPairRewards: Array<{ chosen: number; rejected: number }> = [];

  async evaluate(trainingClient: TrainingClient): Promise<Record<string, number>> {
    this.referenceCache ??= await referenceLogprobs(this.reference, this.data);
    const fwd = await (await trainingClient.forward(this.data, "cross_entropy")).result();
    const logprobs = fwd.loss_fn_outputs.map((o, i) => {
      const lp = o["logprobs"];
      if (lp === undefined) throw new Error(`forward output ${i} has no logprobs`);
      return tensorDataToFloat32(lp);
    });
    const { metrics } = dpoCustomLoss(this.referenceCache, this.beta)(this.data, logprobs);
    const ref = this.referenceCache;
    const reward = (k: number) => {
      const w = tensorDataToFloat32(this.data[k]!.loss_fn_inputs["weights"]!);
      return this.beta * (weightedSum(logprobs[k]!, w) - weightedSum(ref[k]!, w));
    };
    this.lastPairRewards = [];
    for (let k = 0; k < this.data.length; k += 2) this.lastPairRewards.push({ chosen: reward(k), rejected: reward(k + 1) });
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(metrics ?? {})) out[`${this.prefix}/${k}`] = v;
    out[`${this.prefix}/nll`] = computeMeanNll(
      fwd.loss_fn_outputs.map((o) => o["logprobs"]!),
      this.data.map((d) => d.loss_fn_inputs["weights"]!),
    );
    return out;
  }
}
