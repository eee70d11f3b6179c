// The training recipes against a live SkyRL tx (SKYRL_TX_URL), each with a few steps and each
// checked for what it produced: a metrics row per step with the recipe's own numbers, the final
// checkpoint recorded with the paths SkyRL gave. SkyRL serves one base model, named by the folder
// or hub id it was started with; the recipes train that one.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../faults/helpers.ts";
import { checkpointsOf, cookbook, metricsOf, ok, servedModel, skipWithoutSkyrl, skyrlUrl, type Row } from "./skyrl.ts";

const root = tempDir("skyrl-recipes-");
const env = { COOKBOOK_HOME: join(root, "home"), HF_HUB_OFFLINE: "1" };

async function train(recipe: string, args: string[]): Promise<{ rows: Row[]; checkpoints: Row[]; logDir: string }> {
  const logDir = join(root, recipe);
  const model = await servedModel();
  ok(await cookbook(["run", recipe, `base_url=${skyrlUrl()}`, `model_name=${model}`, `log_path=${logDir}`, "behavior_if_log_dir_exists=delete", ...args], env), `cookbook run ${recipe}`);
  return { rows: metricsOf(logDir), checkpoints: checkpointsOf(logDir), logDir };
}

const num = (row: Row | undefined, key: string): number => {
  const v = row?.[key];
  assert.equal(typeof v, "number", `metric ${key} in ${JSON.stringify(row)}`);
  return v as number;
};

function assertSteps(rows: Row[], n: number): void {
  assert.deepEqual(
    rows.map((r) => r["step"]),
    Array.from({ length: n }, (_, i) => i),
    "one metrics row per step",
  );
}

/** The final record, with SkyRL's state path and its sampler path as given (tinker://<id>/<name>). */
function assertFinal(checkpoints: Row[]): Row {
  const final = checkpoints.find((c) => c["final"] === true);
  assert.ok(final !== undefined, `no final checkpoint in ${JSON.stringify(checkpoints)}`);
  assert.match(String(final["state_path"]), /^tinker:\/\/[^/]+\/weights\/final$/);
  assert.match(String(final["sampler_path"]), /^tinker:\/\/[^/]+\/(sampler_weights\/)?final$/);
  return final;
}

test("sl_basic: every step logged, the loss falls, a periodic and the final checkpoint recorded", skipWithoutSkyrl, async () => {
  const { rows, checkpoints } = await train("sl_basic", ["max_steps=6", "batch_size=4", "save_every=3", "eval_every=0", "test_size=0", "lora_rank=8", "max_length=128"]);
  assertSteps(rows, 6);
  const nll = rows.map((r) => num(r, "train_mean_nll"));
  assert.ok(nll.every(Number.isFinite));
  assert.ok(nll.at(-1)! < nll[0]!, `train_mean_nll did not fall: ${nll.join(", ")}`);
  assert.deepEqual(checkpoints.map((c) => c["name"]), ["000003", "final"]);
  assertFinal(checkpoints);
});

test("rl_basic: rewards in [0, 1] every step from SkyRL's samples, the final checkpoint recorded", skipWithoutSkyrl, async () => {
  const { rows, checkpoints } = await train("rl_basic", ["max_steps=3", "group_size=4", "groups_per_batch=4", "save_every=2", "lora_rank=8"]);
  assertSteps(rows, 3);
  for (const r of rows) {
    const reward = num(r, "env/all/reward/total");
    assert.ok(reward >= 0 && reward <= 1, `reward ${reward}`);
  }
  assert.deepEqual(checkpoints.map((c) => c["name"]), ["000002", "final"]);
  assertFinal(checkpoints);
});

test("dpo: the DPO loss, accuracy and margin every step, the final checkpoint recorded", skipWithoutSkyrl, async () => {
  const { rows, checkpoints } = await train("dpo", ["max_steps=3", "batch_size=4", "save_every=0", "eval_every=0", "test_size=0", "lora_rank=8", "max_length=128"]);
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
});

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
