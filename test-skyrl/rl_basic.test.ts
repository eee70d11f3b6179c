// rl_basic against a live SkyRL tx (SKYRL_TX_URL): SkyRL samples the rollouts, rewards in [0, 1]
// every step, periodic and final checkpoints recorded.
import { test } from "node:test";
import assert from "node:assert/strict";
import { assertFinal, assertSteps, num, skipWithoutSkyrl, train } from "./skyrl.ts";

test("rl_basic: rewards in [0, 1] every step from SkyRL's samples, the final checkpoint recorded", skipWithoutSkyrl, async () => {
  const { rows, checkpoints } = await train("rl_basic", ["max_steps=3", "group_size=4", "groups_per_batch=4", "save_every=2", "lora_rank=8"]);
  assertSteps(rows, 3);
  for (const r of rows) {
    const reward = num(r, "env/all/reward/total");
    assert.ok(reward >= 0 && reward <= 1, `reward ${reward}`);
  }
  assert.deepEqual(
    checkpoints.map((c) => c["name"]),
    ["000002", "final"],
  );
  assertFinal(checkpoints);
});
