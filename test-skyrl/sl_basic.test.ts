// sl_basic against a live SkyRL tx (SKYRL_TX_URL): a row per step with a falling loss, a periodic
// and the final checkpoint recorded with the paths SkyRL gave.
import { test } from "node:test";
import assert from "node:assert/strict";
import { assertFinal, assertSteps, num, skipWithoutSkyrl, train } from "./skyrl.ts";

test("sl_basic: every step logged, the loss falls, a periodic and the final checkpoint recorded", skipWithoutSkyrl, async () => {
  const { rows, checkpoints } = await train("sl_basic", [
    "max_steps=6",
    "batch_size=4",
    "save_every=3",
    "eval_every=0",
    "test_size=0",
    "lora_rank=8",
    "max_length=128",
  ]);
  assertSteps(rows, 6);
  const nll = rows.map((r) => num(r, "train_mean_nll"));
  assert.ok(nll.every(Number.isFinite));
  assert.ok(nll.at(-1)! < nll[0]!, `train_mean_nll did not fall: ${nll.join(", ")}`);
  assert.deepEqual(
    checkpoints.map((c) => c["name"]),
    ["000003", "final"],
  );
  assertFinal(checkpoints);
});
