// Per-batch trajectory statistics (docs/cookbook-parity.md#rl-metric-names): `env/all/…`, plus `env/<tag>/…` for every
// logging tag that selects a strict subset of the batch's groups.
import { modelInputLength } from "./tokenSeq.ts";
import type { Metrics, TrajectoryGroup } from "./types.ts";

/** Mean of each key over the dicts that carry it. */
export function dictMean(dicts: readonly Metrics[]): Metrics {
  const sums = new Map<string, { sum: number; n: number }>();
  for (const d of dicts) {
    for (const [k, v] of Object.entries(d)) {
      const s = sums.get(k) ?? { sum: 0, n: 0 };
      s.sum += v;
      s.n += 1;
      sums.set(k, s);
    }
  }
  const out: Metrics = {};
  for (const [k, { sum, n }] of sums) out[k] = sum / n;
  return out;
}

function allSame(xs: readonly number[]): boolean {
  return xs.every((x) => x === xs[0]);
}

/** Fractions of groups that are mixed, all good (constant reward ≥ threshold) or all bad. */
export function computeByGroupMetrics(groupsP: readonly TrajectoryGroup[], goodThreshold = 0.5): Metrics {
  const n = groupsP.length;
  if (n === 0) return { "by_group/frac_mixed": 0, "by_group/frac_all_good": 0, "by_group/frac_all_bad": 0 };
  let mixed = 0;
  let good = 0;
  let bad = 0;
  for (const g of groupsP) {
    const rewards = g.getTotalRewards();
    if (rewards.length > 0 && allSame(rewards)) {
      if (rewards[0] >= goodThreshold) good += 1;
      else bad += 1;
    } else mixed += 1;
  }
  return { "by_group/frac_mixed": mixed / n, "by_group/frac_all_good": good / n, "by_group/frac_all_bad": bad / n };
}

function metricsForGroups(groupsP: readonly TrajectoryGroup[]): Metrics {
  const trajs = groupsP.flatMap((g) => g.trajectoriesG);
  const transitions = trajs.flatMap((t) => t.transitions);
  const totalTurns = transitions.length;
  const totalEpisodes = trajs.length;
  const totalAc = transitions.reduce((s, t) => s + t.ac.tokens.length, 0);
  const totalOb = transitions.reduce((s, t) => s + modelInputLength(t.ob), 0);
  const rewards = groupsP.flatMap((g) => g.getTotalRewards());
  const out: Metrics = {
    ac_tokens_per_turn: totalTurns > 0 ? totalAc / totalTurns : 0,
    ob_tokens_per_turn: totalTurns > 0 ? totalOb / totalTurns : 0,
    turns_per_episode: totalEpisodes > 0 ? totalTurns / totalEpisodes : 0,
    total_episodes: totalEpisodes,
    total_turns: totalTurns,
    total_ac_tokens: totalAc,
    total_ob_tokens: totalOb,
    "reward/total": rewards.length > 0 ? rewards.reduce((a, b) => a + b, 0) / rewards.length : 0,
  };
  // Step metrics and group metrics share one mean so a key (e.g. `format`) reported per step by
  // some envs and per group by others still lands in one number.
  Object.assign(out, dictMean([...transitions.map((t) => t.metrics), ...groupsP.flatMap((g) => g.metricsG)]));
  Object.assign(out, computeByGroupMetrics(groupsP));
  return out;
}

export function computeTrajectoryMetrics(groupsP: readonly TrajectoryGroup[], taglistP: readonly string[][]): Metrics {
  if (groupsP.length !== taglistP.length) {
    throw new Error(`computeTrajectoryMetrics: ${groupsP.length} groups but ${taglistP.length} tag lists`);
  }
  const byTag = new Map<string, TrajectoryGroup[]>();
  groupsP.forEach((g, i) => {
    for (const tag of taglistP[i]) {
      const list = byTag.get(tag) ?? [];
      list.push(g);
      byTag.set(tag, list);
    }
  });
  const out: Metrics = {};
  const nontrivial = [...byTag.values()].some((gs) => gs.length < groupsP.length);
  if (nontrivial) {
    for (const [tag, gs] of byTag) {
      for (const [k, v] of Object.entries(metricsForGroups(gs))) out[`env/${tag}/${k}`] = v;
    }
  }
  for (const [k, v] of Object.entries(metricsForGroups(groupsP))) out[`env/all/${k}`] = v;
  return out;
}
