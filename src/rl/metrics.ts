// KL diagnostics and the KL penalty (docs/cookbook-parity.md#kl-metrics-and-penalty). All averages run over action tokens (mask > 0).
import type { SamplingClient } from "../tinker/clients.ts";
import type { Datum, ModelInput } from "../tinker/types.ts";

function field(datum: Datum, key: string): number[] {
  const tensor = datum.loss_fn_inputs[key];
  if (tensor === undefined) throw new Error(`datum has no loss_fn_inputs.${key} (present: ${Object.keys(datum.loss_fn_inputs).join(", ")})`);
  return tensor.data;
}

/**
 * optim/kl_sample_train_v1 = mean(lp_sampler − lp_trainer), _v2 = ½·mean((lp_sampler − lp_trainer)²),
 * optim/entropy = −mean(lp_sampler). The trainer logprobs come from the same forward_backward.
 */
export function computeKlSampleTrain(dataD: readonly Datum[], trainingLogprobsD: readonly ArrayLike<number>[]): Record<string, number> {
  if (dataD.length !== trainingLogprobsD.length) {
    throw new Error(`computeKlSampleTrain: ${dataD.length} datums but ${trainingLogprobsD.length} training logprob arrays`);
  }
  let n = 0;
  let sumDiff = 0;
  let sumSq = 0;
  let sumLp = 0;
  dataD.forEach((datum, d) => {
    const sampled = field(datum, "logprobs");
    const mask = field(datum, "mask");
    const trained = trainingLogprobsD[d];
    if (trained.length !== sampled.length) {
      throw new Error(`computeKlSampleTrain: datum ${d} has ${sampled.length} sampled logprobs but ${trained.length} training logprobs`);
    }
    for (let t = 0; t < sampled.length; t++) {
      if (!(mask[t] > 0)) continue;
      const diff = sampled[t] - trained[t];
      sumDiff += diff;
      sumSq += diff * diff;
      sumLp += sampled[t];
      n += 1;
    }
  });
  if (n === 0) return {};
  return {
    "optim/kl_sample_train_v1": sumDiff / n,
    "optim/kl_sample_train_v2": (0.5 * sumSq) / n,
    "optim/entropy": -sumLp / n,
  };
}

/** The unshifted sequence of a datum: its inputs plus the last target token. */
export function fullSequenceInput(datum: Datum): ModelInput {
  const targets = field(datum, "target_tokens");
  const last = targets[targets.length - 1];
  const chunks = datum.model_input.chunks.map((c) => (c.type === "encoded_text" ? { ...c, tokens: [...c.tokens] } : c));
  const tail = chunks[chunks.length - 1];
  if (tail !== undefined && tail.type === "encoded_text") tail.tokens.push(last);
  else chunks.push({ type: "encoded_text", tokens: [last] });
  return { chunks };
}

/** Logprobs aligned with a datum's targets (drops the leading null of compute_logprobs). */
async function targetLogprobs(client: SamplingClient, datum: Datum): Promise<number[]> {
  const lps = await client.computeLogprobs(fullSequenceInput(datum));
  return lps.slice(1).map((v) => v ?? 0);
}

/** kl_pre_post_v1/_v2: how far the update moved the policy on the very sequences it trained on. */
export async function computePostKl(dataD: readonly Datum[], postSamplingClient: SamplingClient): Promise<Record<string, number>> {
  const newLogprobsD = await Promise.all(dataD.map((d) => targetLogprobs(postSamplingClient, d)));
  let n = 0;
  let sum = 0;
  let sumSq = 0;
  dataD.forEach((datum, d) => {
    const prev = field(datum, "logprobs");
    const mask = field(datum, "mask");
    for (let t = 0; t < prev.length; t++) {
      if (!(mask[t] > 0)) continue;
      const diff = prev[t] - newLogprobsD[d][t];
      sum += diff;
      sumSq += diff * diff;
      n += 1;
    }
  });
  if (n === 0) return {};
  return { kl_pre_post_v1: sum / n, kl_pre_post_v2: (0.5 * sumSq) / n };
}

/** For each position i: Σ_k γ^k · x[i+k] (one backward pass). */
export function discountedFutureSum(x: readonly number[], gamma: number): number[] {
  const out = new Array<number>(x.length);
  let running = 0;
  for (let t = x.length - 1; t >= 0; t--) {
    running = x[t] + gamma * running;
    out[t] = running;
  }
  return out;
}

/**
 * Shapes advantages toward a reference policy, in place. With d_t = lp_sampled − lp_reference
 * on action tokens, advantages += coef·mask·(mean d − d_t), optionally replaced by its
 * discounted future sum (γ = discount). Returns kl_policy_base = Σd / Σmask.
 */
export async function incorporateKlPenalty(
  dataD: Datum[],
  referenceClient: SamplingClient,
  klPenaltyCoef: number,
  klDiscountFactor: number,
): Promise<Record<string, number>> {
  const refLogprobsD = await Promise.all(dataD.map((d) => targetLogprobs(referenceClient, d)));
  const diffsD = dataD.map((datum, d) => {
    const sampled = field(datum, "logprobs");
    const mask = field(datum, "mask");
    return sampled.map((lp, t) => (lp - refLogprobsD[d][t]) * mask[t]);
  });
  let sumDiff = 0;
  let sumMask = 0;
  dataD.forEach((datum, d) => {
    for (const v of diffsD[d]) sumDiff += v;
    for (const m of field(datum, "mask")) sumMask += m;
  });
  const avg = sumMask > 0 ? sumDiff / sumMask : 0;
  dataD.forEach((datum, d) => {
    const mask = field(datum, "mask");
    let klAdv = diffsD[d].map((diff, t) => klPenaltyCoef * mask[t] * (avg - diff));
    if (klDiscountFactor > 0) klAdv = discountedFutureSum(klAdv, klDiscountFactor);
    const adv = field(datum, "advantages");
    datum.loss_fn_inputs.advantages = { ...datum.loss_fn_inputs.advantages, data: adv.map((a, t) => a + klAdv[t]) };
  });
  return { kl_policy_base: avg };
}

/** Staleness of the samplers behind a batch (async/stream modes). */
export function computeSamplingClientMetrics(groups: readonly { samplingClientStep: number; samplingTimeSeconds: number }[]): Record<string, number> {
  if (groups.length === 0) return {};
  const steps = groups.map((g) => g.samplingClientStep);
  const times = groups.map((g) => g.samplingTimeSeconds);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return {
    "sampling_client/step_max": Math.max(...steps),
    "sampling_client/step_min": Math.min(...steps),
    "sampling_client/step_mean": mean(steps),
    "time/sampling_time_max": Math.max(...times),
    "time/sampling_time_min": Math.min(...times),
    "time/sampling_time_mean": mean(times),
  };
}
