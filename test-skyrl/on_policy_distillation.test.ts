// on_policy_distillation against a live SkyRL tx (SKYRL_TX_URL): the student samples, the teacher
// (the served base model; SkyRL serves one) scores every sampled token, a finite KL every step.
import { test } from "node:test";
import assert from "node:assert/strict";
import { assertFinal, assertSteps, num, servedModel, skipWithoutSkyrl, train } from "./skyrl.ts";

test("on_policy_distillation: the student samples, the teacher (the served model) scores, every step logged", skipWithoutSkyrl, async () => {
  const model = await servedModel();
  const datasets = JSON.stringify([{ dataset: "arithmetic", teacher: { base_model: model } }]);
  const { rows, checkpoints } = await train("on_policy_distillation", [
    "max_steps=2",
    "group_size=2",
    "groups_per_batch=4",
    "save_every=0",
    "eval_every=0",
    "lora_rank=8",
    `datasets=${datasets}`,
    `kl_reference_config.base_model=${model}`,
  ]);
  assertSteps(rows, 2);
  // The teacher's per-token log-probs came back for every sampled token: a finite KL each step.
  for (const r of rows) assert.ok(Number.isFinite(num(r, "teacher_kl")), JSON.stringify(r));
  assertFinal(checkpoints);
});
