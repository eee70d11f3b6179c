// Trajectories → training datums (docs/cookbook-parity.md#advantages-and-datum-assembly): group-centred advantages, one datum per run of
// turns that extend each other, SFT-style shift, and the constant-group filter.
import { requireLogprobs } from "../completers.ts";
import type { Datum, ModelInput, TensorData } from "../tinker/types.ts";
import { flatLength, flatToModelInput, flattenModelInput, isPrefix, type FlatElem } from "./tokenSeq.ts";
import { PARSE_ERROR_MASKED_METRIC_KEY, type Trajectory, type TrajectoryGroup } from "./types.ts";

/**
 * Advantage of each trajectory = its total reward minus its group's mean. No division by the
 * group's standard deviation: that rescales easy and hard prompts differently (Dr. GRPO).
 */
export function computeAdvantages(groupsP: readonly TrajectoryGroup[]): number[][] {
  return groupsP.map((group) => {
    const rewardsG = group.getTotalRewards();
    if (rewardsG.length === 0) return [];
    const mean = rewardsG.reduce((a, b) => a + b, 0) / rewardsG.length;
    return rewardsG.map((r) => r - mean);
  });
}

function floatTensor(data: number[]): TensorData {
  return { data, dtype: "float32", shape: [data.length] };
}

function intTensor(data: number[]): TensorData {
  return { data, dtype: "int64", shape: [data.length] };
}

interface Accumulator {
  seq: FlatElem[];
  logprobs: number[];
  advantages: number[];
  mask: number[];
}

/** Position-wise values of the flat sequence expanded so image chunks cover their token span. */
function expandTargets(seq: readonly FlatElem[]): number[] {
  const out: number[] = [];
  for (const e of seq) {
    if (typeof e === "number") out.push(e);
    // Image positions are never action tokens (mask 0); 0 is a placeholder target.
    else for (let i = 0; i < flatLength([e]); i++) out.push(0);
  }
  return out;
}

function datumFromAccumulator(acc: Accumulator): Datum {
  const last = acc.seq[acc.seq.length - 1];
  if (typeof last !== "number") throw new Error("trajectoryToData: a sequence cannot end with an image chunk");
  // Inputs drop the final token; targets drop the first (next-token prediction).
  const input: ModelInput = flatToModelInput(acc.seq.slice(0, -1));
  const targets = expandTargets(acc.seq).slice(1);
  return {
    model_input: input,
    loss_fn_inputs: {
      target_tokens: intTensor(targets),
      logprobs: floatTensor(acc.logprobs.slice(1)),
      advantages: floatTensor(acc.advantages.slice(1)),
      mask: floatTensor(acc.mask.slice(1)),
    },
  };
}

/**
 * One or more datums for a trajectory. Turns whose observation starts with everything seen so
 * far (previous observations + actions) are merged into one datum, appending only the new
 * observation tokens; any other observation starts a new datum. Observation tokens carry
 * logprob 0, advantage 0, mask 0; action tokens carry their sampled logprobs, the trajectory's
 * advantage and mask 1 (0 and advantage 0 for turns flagged `parse_error_masked`).
 */
export function trajectoryToData(traj: Trajectory, advantage: number): Datum[] {
  const data: Datum[] = [];
  let acc: Accumulator = { seq: [], logprobs: [], advantages: [], mask: [] };
  const flush = () => {
    // A lone token has nothing to predict; such a sequence carries no training signal.
    if (acc.seq.length >= 2) data.push(datumFromAccumulator(acc));
    acc = { seq: [], logprobs: [], advantages: [], mask: [] };
  };
  for (const transition of traj.transitions) {
    const obFlat = flattenModelInput(transition.ob);
    let delta: FlatElem[];
    if (acc.seq.length === 0) delta = obFlat;
    else if (isPrefix(acc.seq, obFlat)) delta = obFlat.slice(acc.seq.length);
    else {
      flush();
      delta = obFlat;
    }
    const deltaLen = flatLength(delta);
    const acTokens = transition.ac.tokens;
    const acLogprobs = acTokens.length === 0 ? [] : requireLogprobs(transition.ac);
    const masked = (transition.metrics[PARSE_ERROR_MASKED_METRIC_KEY] ?? 0) >= 1;
    acc.seq.push(...delta, ...acTokens);
    for (let i = 0; i < deltaLen; i++) {
      acc.logprobs.push(0);
      acc.advantages.push(0);
      acc.mask.push(0);
    }
    for (let i = 0; i < acTokens.length; i++) {
      acc.logprobs.push(acLogprobs[i]);
      acc.advantages.push(masked ? 0 : advantage);
      acc.mask.push(masked ? 0 : 1);
    }
  }
  flush();
  return data;
}

export interface DatumMetadata {
  groupIdx: number;
  trajIdx: number;
}

export function assembleTrainingData(groupsP: readonly TrajectoryGroup[], advantagesP: readonly number[][]): { dataD: Datum[]; metadataD: DatumMetadata[] } {
  if (groupsP.length !== advantagesP.length) {
    throw new Error(`assembleTrainingData: ${groupsP.length} groups but ${advantagesP.length} advantage lists`);
  }
  const dataD: Datum[] = [];
  const metadataD: DatumMetadata[] = [];
  groupsP.forEach((group, groupIdx) => {
    const advantagesG = advantagesP[groupIdx];
    if (advantagesG.length !== group.trajectoriesG.length) {
      throw new Error(`assembleTrainingData: group ${groupIdx} has ${group.trajectoriesG.length} trajectories but ${advantagesG.length} advantages`);
    }
    group.trajectoriesG.forEach((traj, trajIdx) => {
      for (const datum of trajectoryToData(traj, advantagesG[trajIdx])) {
        dataD.push(datum);
        metadataD.push({ groupIdx, trajIdx });
      }
    });
  });
  return { dataD, metadataD };
}

function allSame(values: readonly number[]): boolean {
  return values.every((v) => v === values[0]);
}

/**
 * Drops groups whose trajectories all earned the same total reward (zero advantage, no
 * gradient). When every group is constant one is kept so downstream code never sees an empty batch.
 */
export function removeConstantRewardGroups(groupsP: readonly TrajectoryGroup[]): TrajectoryGroup[] {
  const kept = groupsP.filter((g) => !allSame(g.getTotalRewards()));
  if (kept.length === 0) return groupsP.slice(0, 1);
  return kept;
}

export function isConstantRewardGroup(group: TrajectoryGroup): boolean {
  return allSame(group.getTotalRewards());
}

/** The server's losses read advantages and logprobs only; `mask` stays local for KL metrics. */
export function removeMask(datum: Datum): Datum {
  const { mask: _mask, ...rest } = datum.loss_fn_inputs;
  return { model_input: datum.model_input, loss_fn_inputs: rest };
}
