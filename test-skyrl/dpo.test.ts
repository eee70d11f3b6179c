// dpo against a live SkyRL tx (SKYRL_TX_URL): the DPO loss starts at log 2 (policy = reference),
// accuracy and margin every step, the final checkpoint recorded, and the policy moving away from
// its reference. On SkyRL tx a sampling client on a sampler checkpoint of a model still in
// training samples with the model's current weights, so a snapshot cannot be the reference; the
// loop uses the base model (or a frozen copy of load_checkpoint_path) instead
// (src/training/startingWeights.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { assertFinal, assertSteps, num, skipWithoutSkyrl, train } from "./skyrl.ts";

test("dpo: the DPO loss, accuracy and margin every step, the final checkpoint recorded, the policy leaving its reference", skipWithoutSkyrl, async () => {
  const { rows, checkpoints } = await train("dpo", [
    "max_steps=3",
    "batch_size=4",
    "save_every=0",
    "eval_every=0",
    "test_size=0",
    "lora_rank=8",
    "max_length=128",
  ]);
  assertSteps(rows, 3);
  for (const r of rows) {
    assert.ok(Number.isFinite(num(r, "dpo_loss")));
    assert.ok(Number.isFinite(num(r, "margin")));
    const acc = num(r, "accuracy");
    assert.ok(acc >= 0 && acc <= 1, `accuracy ${acc}`);
  }
  // The first step starts at the reference: log(2) up to bf16 rounding.
  assert.ok(Math.abs(num(rows[0], "dpo_loss") - Math.LN2) < 0.05, `first dpo_loss ${num(rows[0], "dpo_loss")}`);
  assertFinal(checkpoints);
  // Trained away from the reference: the chosen answers gained on the rejected ones.
  const last = rows.at(-1)!;
  assert.ok(
    num(last, "margin") > 0 && num(last, "dpo_loss") < Math.LN2,
    `after ${rows.length} steps: margin ${num(last, "margin")}, dpo_loss ${num(last, "dpo_loss")}`,
  );
});
