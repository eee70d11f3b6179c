import { test } from "node:test";
import assert from "node:assert/strict";
import { assembleTrainingData, computeAdvantages, removeConstantRewardGroups, removeMask, trajectoryToData } from "../../src/rl/dataProcessing.ts";
import { TrajectoryGroup, type Trajectory, type Transition } from "../../src/rl/types.ts";
import { ints, tokensOf } from "./fakes.ts";

function tr(ob: number[], ac: number[], logprobs: number[], reward = 0, metrics: Record<string, number> = {}): Transition {
  return { ob: ints(ob), ac: { tokens: ac, logprobs, stopReason: "stop" }, reward, episodeDone: false, metrics, logs: {} };
}

function traj(...transitions: Transition[]): Trajectory {
  return { transitions, finalOb: { chunks: [] }, stopReason: null };
}

function field(d: { loss_fn_inputs: Record<string, { data: number[] }> }, k: string): number[] {
  const v = d.loss_fn_inputs[k];
  assert.ok(v, `missing ${k}`);
  return v.data;
}

test("single turn: observation masked, action carries logprobs and advantage, shifted by one", () => {
  const data = trajectoryToData(traj(tr([10, 11, 12], [20, 21], [-0.1, -0.2])), 0.5);
  assert.equal(data.length, 1);
  const d = data[0];
  assert.deepEqual(tokensOf(d.model_input), [10, 11, 12, 20]);
  assert.deepEqual(field(d, "target_tokens"), [11, 12, 20, 21]);
  assert.deepEqual(field(d, "logprobs"), [0, 0, -0.1, -0.2]);
  assert.deepEqual(field(d, "advantages"), [0, 0, 0.5, 0.5]);
  assert.deepEqual(field(d, "mask"), [0, 0, 1, 1]);
  assert.equal(d.loss_fn_inputs.target_tokens.dtype, "int64");
  assert.equal(d.loss_fn_inputs.advantages.dtype, "float32");
});

test("multi-turn whose observations extend the sequence merge into one datum", () => {
  const a = -0.25;
  const data = trajectoryToData(traj(tr([1, 2], [3, 4], [-1, -2]), tr([1, 2, 3, 4, 5, 6], [7], [-3])), a);
  assert.equal(data.length, 1);
  const d = data[0];
  assert.deepEqual(tokensOf(d.model_input), [1, 2, 3, 4, 5, 6]);
  assert.deepEqual(field(d, "target_tokens"), [2, 3, 4, 5, 6, 7]);
  assert.deepEqual(field(d, "logprobs"), [0, -1, -2, 0, 0, -3]);
  assert.deepEqual(field(d, "mask"), [0, 1, 1, 0, 0, 1]);
  assert.deepEqual(field(d, "advantages"), [0, a, a, 0, 0, a]);
});

test("multi-turn whose observation does not extend the sequence starts a new datum", () => {
  const data = trajectoryToData(traj(tr([1, 2], [3], [-1]), tr([9, 8], [7, 6], [-2, -3]), tr([9, 8, 7, 6, 5], [4], [-4])), 1);
  assert.equal(data.length, 2);
  assert.deepEqual(tokensOf(data[0].model_input), [1, 2]);
  assert.deepEqual(field(data[0], "target_tokens"), [2, 3]);
  assert.deepEqual(field(data[0], "mask"), [0, 1]);
  assert.deepEqual(field(data[0], "logprobs"), [0, -1]);
  // Turns 2 and 3 extend each other, so they share the second datum.
  assert.deepEqual(tokensOf(data[1].model_input), [9, 8, 7, 6, 5]);
  assert.deepEqual(field(data[1], "target_tokens"), [8, 7, 6, 5, 4]);
  assert.deepEqual(field(data[1], "mask"), [0, 1, 1, 0, 1]);
  assert.deepEqual(field(data[1], "logprobs"), [0, -2, -3, 0, -4]);
  assert.deepEqual(field(data[1], "advantages"), [0, 1, 1, 0, 1]);
});

test("a turn flagged parse_error_masked trains nothing but keeps its tokens", () => {
  const data = trajectoryToData(traj(tr([1], [2, 3], [-1, -1], 0, { parse_error_masked: 1 }), tr([1, 2, 3, 4], [5], [-2])), 2);
  assert.equal(data.length, 1);
  assert.deepEqual(field(data[0], "target_tokens"), [2, 3, 4, 5]);
  assert.deepEqual(field(data[0], "mask"), [0, 0, 0, 1]);
  assert.deepEqual(field(data[0], "advantages"), [0, 0, 0, 2]);
  assert.deepEqual(field(data[0], "logprobs"), [-1, -1, 0, -2]);
});

test("an empty trajectory (initial overflow) yields no datum", () => {
  assert.deepEqual(trajectoryToData(traj(tr([], [], [])), 1), []);
});

test("advantages are centred within each group without dividing by the std", () => {
  const one = (r: number) => traj(tr([1], [2], [-1], r));
  const g1 = new TrajectoryGroup([one(4), one(0)], [0, 0], [{}, {}]);
  const g2 = new TrajectoryGroup([one(1), one(0), one(0), one(1)], [0, 0, 0, 1], [{}, {}, {}, {}]);
  const [a1, a2] = computeAdvantages([g1, g2]);
  assert.deepEqual(a1, [2, -2]);
  // Totals include the group reward: [1, 0, 0, 2], mean 0.75.
  assert.deepEqual(a2, [0.25, -0.75, -0.75, 1.25]);
});

test("assembleTrainingData maps every datum back to its group and trajectory", () => {
  const t = (r: number) => traj(tr([1, 2], [3], [-1], r));
  const split = traj(tr([1], [2], [-1], 1), tr([7], [8], [-1]));
  const groups = [new TrajectoryGroup([t(1), t(0)], [0, 0], [{}, {}]), new TrajectoryGroup([split, t(0)], [0, 0], [{}, {}])];
  const { dataD, metadataD } = assembleTrainingData(groups, computeAdvantages(groups));
  assert.equal(dataD.length, 5);
  assert.deepEqual(metadataD, [
    { groupIdx: 0, trajIdx: 0 },
    { groupIdx: 0, trajIdx: 1 },
    { groupIdx: 1, trajIdx: 0 },
    { groupIdx: 1, trajIdx: 0 },
    { groupIdx: 1, trajIdx: 1 },
  ]);
  assert.deepEqual(field(dataD[0], "advantages"), [0, 0.5]);
  assert.deepEqual(field(dataD[1], "advantages"), [0, -0.5]);
  assert.throws(() => assembleTrainingData(groups, [[0, 0]]), /2 groups but 1 advantage/);
});

test("constant-reward groups are removed, keeping one when all are constant", () => {
  const t = (r: number) => traj(tr([1], [2], [-1], r));
  const constA = new TrajectoryGroup([t(1), t(1)], [0, 0], [{}, {}]);
  const mixed = new TrajectoryGroup([t(1), t(0)], [0, 0], [{}, {}]);
  const constB = new TrajectoryGroup([t(0), t(0)], [0, 0], [{}, {}]);
  assert.deepEqual(removeConstantRewardGroups([constA, mixed, constB]), [mixed]);
  assert.deepEqual(removeConstantRewardGroups([constA, constB]), [constA]);
  // A group reward can break the tie.
  const brokenTie = new TrajectoryGroup([t(1), t(1)], [0, 0.5], [{}, {}]);
  assert.deepEqual(removeConstantRewardGroups([constA, brokenTie]), [brokenTie]);
});

test("removeMask drops only the mask", () => {
  const [d] = trajectoryToData(traj(tr([1], [2], [-1])), 1);
  const sent = removeMask(d);
  assert.deepEqual(Object.keys(sent.loss_fn_inputs).sort(), ["advantages", "logprobs", "target_tokens"]);
  assert.ok(d.loss_fn_inputs.mask, "the original keeps its mask for KL metrics");
});
