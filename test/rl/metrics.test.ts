import { test } from "node:test";
import assert from "node:assert/strict";
import { computeKlSampleTrain, discountedFutureSum, incorporateKlPenalty } from "../../src/rl/metrics.ts";
import { computeTrajectoryMetrics } from "../../src/rl/trajectoryMetrics.ts";
import { TrajectoryGroup, type Trajectory } from "../../src/rl/types.ts";
import type { Datum } from "../../src/tinker/types.ts";
import { FakeSamplingClient, ints } from "./fakes.ts";

function datum(input: number[], targets: number[], logprobs: number[], mask: number[], advantages: number[]): Datum {
  const f = (data: number[]) => ({ data, dtype: "float32" as const });
  return {
    model_input: ints(input),
    loss_fn_inputs: { target_tokens: { data: targets, dtype: "int64" }, logprobs: f(logprobs), mask: f(mask), advantages: f(advantages) },
  };
}

const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-12, `${a} ≉ ${b}`);

test("KL sample/train metrics average over action tokens only", () => {
  const d1 = datum([1, 2, 3, 4], [2, 3, 4, 5], [0, -1, -2, 0], [0, 1, 1, 0], [0, 1, 1, 0]);
  const d2 = datum([1, 2], [2, 3], [0, -3], [0, 1], [0, 1]);
  const m = computeKlSampleTrain(
    [d1, d2],
    [
      [5, -1.5, -1, 7],
      [9, -2],
    ],
  );
  // diffs: 0.5, -1, -1 → mean -0.5; squares 0.25, 1, 1 → ½·mean = 0.375; entropy = −mean(-1,-2,-3) = 2.
  close(m["optim/kl_sample_train_v1"], -0.5);
  close(m["optim/kl_sample_train_v2"], 0.375);
  close(m["optim/entropy"], 2);
  assert.throws(() => computeKlSampleTrain([d1], [[1, 2]]), /4 sampled logprobs but 2 training logprobs/);
});

test("KL penalty shifts advantages by coef·mask·(mean d − d_t) against the reference", async () => {
  const seen: number[][] = [];
  const reference = new FakeSamplingClient(
    () => ({ tokens: [] }),
    0,
    () => -1,
  );
  const wrapped = {
    ...reference,
    baseModel: "ref",
    sample: reference.sample.bind(reference),
    computeLogprobs: async (mi: Parameters<typeof reference.computeLogprobs>[0]) => {
      seen.push(mi.chunks.flatMap((c) => (c.type === "encoded_text" ? c.tokens : [])));
      return reference.computeLogprobs(mi);
    },
  };
  const d = datum([7, 8, 9], [8, 9, 10], [0, -0.5, -2], [0, 1, 1], [0, 1, 1]);
  const metrics = await incorporateKlPenalty([d], wrapped, 2, 0);
  assert.deepEqual(seen, [[7, 8, 9, 10]], "the reference scores the unshifted sequence");
  // d = [0, 0.5, -1] (masked), mean over mask = -0.25; klAdv = 2·[0, -0.75, 0.75].
  close(metrics.kl_policy_base, -0.25);
  const adv = d.loss_fn_inputs.advantages.data;
  close(adv[0], 0);
  close(adv[1], -0.5);
  close(adv[2], 2.5);

  const d2 = datum([7, 8, 9], [8, 9, 10], [0, -0.5, -2], [0, 1, 1], [0, 1, 1]);
  await incorporateKlPenalty([d2], wrapped, 2, 0.5);
  // discounted future sum of [0, -1.5, 1.5] with γ=0.5: [-0.375, -0.75, 1.5].
  const adv2 = d2.loss_fn_inputs.advantages.data;
  close(adv2[0], -0.375);
  close(adv2[1], 0.25);
  close(adv2[2], 2.5);
});

test("discounted future sum", () => {
  assert.deepEqual(discountedFutureSum([1, 2, 4], 0.5), [1 + 1 + 1, 2 + 2, 4]);
  assert.deepEqual(discountedFutureSum([1, 2, 4], 0), [1, 2, 4]);
});

function oneTurn(acLen: number, obLen: number, reward: number, metrics: Record<string, number>): Trajectory {
  return {
    transitions: [
      {
        ob: ints(Array.from({ length: obLen }, (_, i) => i + 1)),
        ac: { tokens: Array.from({ length: acLen }, () => 5), logprobs: Array.from({ length: acLen }, () => -1), stopReason: "stop" },
        reward,
        episodeDone: true,
        metrics,
        logs: {},
      },
    ],
    finalOb: { chunks: [] },
    stopReason: null,
  };
}

test("trajectory metrics: env/all, per-tag subsets, by_group fractions", () => {
  const mixed = new TrajectoryGroup([oneTurn(2, 4, 1, { correct: 1 }), oneTurn(4, 4, 0, { correct: 0 })], [0, 0], [{}, {}]);
  const good = new TrajectoryGroup([oneTurn(1, 2, 1, { correct: 1 }), oneTurn(1, 2, 1, { correct: 1 })], [0, 0], [{ judge: 1 }, { judge: 0 }]);
  const bad = new TrajectoryGroup([oneTurn(3, 2, 0, { correct: 0 }), oneTurn(3, 2, 0, { correct: 0 })], [0, 0], [{}, {}]);
  const m = computeTrajectoryMetrics([mixed, good, bad], [["math"], ["math"], ["code"]]);
  close(m["env/all/reward/total"], 3 / 6);
  assert.equal(m["env/all/total_episodes"], 6);
  assert.equal(m["env/all/total_turns"], 6);
  assert.equal(m["env/all/total_ac_tokens"], 2 + 4 + 1 + 1 + 3 + 3);
  assert.equal(m["env/all/total_ob_tokens"], 4 + 4 + 2 + 2 + 2 + 2);
  close(m["env/all/ac_tokens_per_turn"], 14 / 6);
  close(m["env/all/ob_tokens_per_turn"], 16 / 6);
  close(m["env/all/turns_per_episode"], 1);
  close(m["env/all/correct"], 3 / 6);
  close(m["env/all/judge"], 0.5);
  close(m["env/all/by_group/frac_mixed"], 1 / 3);
  close(m["env/all/by_group/frac_all_good"], 1 / 3);
  close(m["env/all/by_group/frac_all_bad"], 1 / 3);
  close(m["env/math/reward/total"], 3 / 4);
  close(m["env/code/reward/total"], 0);
  assert.equal(m["env/code/total_episodes"], 2);
  // A tag on every group adds nothing beyond env/all.
  const single = computeTrajectoryMetrics([mixed, good], [["math"], ["math"]]);
  assert.ok(!Object.keys(single).some((k) => k.startsWith("env/math/")));
});
