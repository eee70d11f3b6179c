// The DPO objective (Rafailov et al. 2023; docs/cookbook-parity.md#dpo-preference-rl-and-distillation) on per-token logprobs. For pair i with chosen
// c and rejected r, a sequence's logprob is Σ_t lp_t·w_t (token-sum weights), its implied reward
// is β·(π − π_ref), and
//   loss = mean_i −log σ(β·[(π_c − ref_c) − (π_r − ref_r)])
// whose gradient is ∂loss/∂π_c = −β·σ(−z_i)/n = −∂loss/∂π_r, spread over the tokens by w_t.
import type { CustomLossFn } from "../tinker/clients.ts";
import { tensorDataToFloat32 } from "../tinker/tensorData.ts";
import type { Datum } from "../tinker/types.ts";

export interface DpoPairLogprobs {
  chosen: number;
  rejected: number;
  chosenRef: number;
  rejectedRef: number;
}

export interface DpoLossResult {
  loss: number;
  /** ∂loss/∂π_c and ∂loss/∂π_r per pair. */
  dChosen: number[];
  dRejected: number[];
  metrics: DpoMetrics;
}

export interface DpoMetrics {
  dpo_loss: number;
  accuracy: number;
  margin: number;
  chosen_reward: number;
  rejected_reward: number;
  num_pairs: number;
}

/** −log σ(z) without overflow for large |z|. */
export function negLogSigmoid(z: number): number {
  return Math.max(-z, 0) + Math.log1p(Math.exp(-Math.abs(z)));
}

export function sigmoid(z: number): number {
  return z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z));
}

export function computeDpoLoss(pairs: readonly DpoPairLogprobs[], beta: number): DpoLossResult {
  const n = pairs.length;
  if (n === 0) throw new Error("computeDpoLoss: no pairs");
  let loss = 0;
  let correct = 0;
  let chosenReward = 0;
  let rejectedReward = 0;
  const dChosen: number[] = [];
  const dRejected: number[] = [];
  for (const p of pairs) {
    const rc = beta * (p.chosen - p.chosenRef);
    const rr = beta * (p.rejected - p.rejectedRef);
    const z = rc - rr;
    loss += negLogSigmoid(z);
    if (z > 0) correct += 1;
    chosenReward += rc;
    rejectedReward += rr;
    const g = (beta * sigmoid(-z)) / n;
    dChosen.push(-g);
    dRejected.push(g);
  }
  const metrics: DpoMetrics = {
    dpo_loss: loss / n,
    accuracy: correct / n,
    margin: (chosenReward - rejectedReward) / n,
    chosen_reward: chosenReward / n,
    rejected_reward: rejectedReward / n,
    num_pairs: n,
  };
  return { loss: loss / n, dChosen, dRejected, metrics };
}

function weightsOf(d: Datum, i: number): Float32Array {
  const w = d.loss_fn_inputs["weights"];
  if (w === undefined) throw new Error(`DPO datum ${i} has no weights`);
  return tensorDataToFloat32(w);
}

export function weightedSum(values: ArrayLike<number>, weights: ArrayLike<number>): number {
  let s = 0;
  for (let t = 0; t < weights.length; t++) s += values[t]! * weights[t]!;
  return s;
}

/**
 * The DPO loss as a forward_backward_custom loss over interleaved datums (even = chosen, odd =
 * rejected). `referenceLogprobs[k]` are the reference model's target-aligned logprobs of datum k.
 */
export function dpoCustomLoss(referenceLogprobs: readonly ArrayLike<number>[], beta: number): CustomLossFn {
  return (data, logprobs) => {
    if (data.length % 2 !== 0) throw new Error(`DPO needs interleaved chosen/rejected datums; got an odd count ${data.length}`);
    if (referenceLogprobs.length !== data.length) throw new Error(`DPO: ${referenceLogprobs.length} reference logprob lists for ${data.length} datums`);
    const weights = data.map((d, i) => weightsOf(d, i));
    const pairs: DpoPairLogprobs[] = [];
    let numTokens = 0;
    for (let k = 0; k < data.length; k += 2) {
      pairs.push({
        chosen: weightedSum(logprobs[k]!, weights[k]!),
        rejected: weightedSum(logprobs[k + 1]!, weights[k + 1]!),
        chosenRef: weightedSum(referenceLogprobs[k]!, weights[k]!),
        rejectedRef: weightedSum(referenceLogprobs[k + 1]!, weights[k + 1]!),
      });
    }
    for (const w of weights) for (const x of w) if (x > 0) numTokens += 1;
    const result = computeDpoLoss(pairs, beta);
    const gradients = data.map((_, k) => {
      const dSeq = k % 2 === 0 ? result.dChosen[k / 2]! : result.dRejected[(k - 1) / 2]!;
      const w = weights[k]!;
      const g = new Float32Array(w.length);
      for (let t = 0; t < w.length; t++) g[t] = dSeq * w[t]!;
      return g;
    });
    return { loss: result.loss, gradients, metrics: { ...result.metrics, num_tokens: numTokens } };
  };
}
