// The distillation recipes end to end on the embedded engine with a small random student (the
// tiny-chat tokenizer): on-policy distillation with two datasets and two teachers in all three RL
// modes, and prompt distillation's stages (prompted teacher, labels, student, agreement).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readMetrics } from "../../src/log/metrics.ts";
import { readCheckpoints } from "../../src/runs/checkpoints.ts";
import { recipeSandbox, runRecipe, type RecipeSandbox } from "./helpers.ts";

function setup(): RecipeSandbox {
  return recipeSandbox("distill-recipes");
}

test("on_policy_distillation: two datasets with their own teachers; teacher_kl overall and per dataset; sync, stream and async", async () => {
  const { root, modelDir, cleanup } = setup();
  try {
    const datasets = JSON.stringify([
      { dataset: "arithmetic", teacher: { base_model: "tiny-chat-teacher" } },
      { dataset: "prompts", teacher: { base_model: modelDir }, groups_per_batch: 1 },
    ]);
    const common = [
      `model_name=${modelDir}`,
      "group_size=2",
      "groups_per_batch=2",
      "max_tokens=4",
      "lora_rank=4",
      "behavior_if_log_dir_exists=delete",
      "save_every=0",
    ];
    const sync = join(root, "sync");
    await runRecipe("on_policy_distillation", [...common, `log_path=${sync}`, `datasets=${datasets}`, "max_steps=3", "test_problems=4", "eval_every=2"]);
    const rows = readMetrics(sync);
    assert.deepEqual(
      rows.filter((r) => "teacher_kl" in r).map((r) => r.step),
      [0, 1, 2],
    );
    for (const r of rows.filter((r) => "teacher_kl" in r)) {
      const kl0 = r["teacher_kl/dataset_0"];
      const kl1 = r["teacher_kl/dataset_1"];
      assert.ok(typeof kl0 === "number" && typeof kl1 === "number", `step ${r.step}: per-dataset teacher_kl`);
      // The student is its own teacher on dataset 1 (LoRA B starts at 0), so at step 0 the KL there is 0.
      if (r.step === 0) assert.ok(Math.abs(kl1) < 1e-4, `dataset 1 KL at step 0 is ${kl1}`);
      // A random student is far from tiny-chat-teacher.
      assert.ok(kl0 > 1, `dataset 0 KL ${kl0}`);
      assert.ok(r["env/all/reward/total"] === 0, "no task reward");
    }
    const step0 = rows.find((r) => r.step === 0)!;
    assert.ok(typeof step0["teacher/env/all/correct"] === "number" && typeof step0["test/env/all/correct"] === "number");
    assert.ok(readCheckpoints(sync).some((c) => c.final === true));
    const config = JSON.parse(readFileSync(join(sync, "config.json"), "utf8")) as Record<string, unknown>;
    assert.equal(config["groups_per_batch"], 3, "the loop trains 2 + 1 groups per batch");

    for (const [mode, arg] of [
      ["stream", "stream_minibatch_config.num_minibatches=2"],
      ["async", "async_config.max_steps_off_policy=1"],
    ]) {
      const dir = join(root, mode!);
      await runRecipe("on_policy_distillation", [...common, `log_path=${dir}`, "max_steps=2", "test_problems=0", arg!]);
      const kl = readMetrics(dir).filter((r) => "teacher_kl" in r);
      assert.ok(kl.length >= 2, `${mode}: ${kl.length} steps logged teacher_kl`);
      assert.ok(
        kl.every((r) => typeof r["teacher_kl/dataset_0"] === "number"),
        mode,
      );
    }
  } finally {
    cleanup();
  }
});

test("prompt_distillation: stage-1 teacher, labels.jsonl, test/agreement before and after training", async () => {
  const { root, modelDir, cleanup } = setup();
  try {
    const dir = join(root, "pd");
    await runRecipe("prompt_distillation", [
      `model_name=${modelDir}`,
      `log_path=${dir}`,
      "behavior_if_log_dir_exists=delete",
      "teacher_sft_steps=2",
      "prompts_per_category=4",
      "batch_size=4",
      "max_steps=2",
      "eval_every=1",
      "label_max_tokens=3",
      "lora_rank=4",
      "teacher_lora_rank=4",
      "save_every=0",
    ]);
    assert.ok(existsSync(join(dir, "prompted_teacher.json")));
    const labels = readFileSync(join(dir, "labels.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { messages: { role: string }[] });
    assert.ok(labels.length > 10);
    assert.deepEqual(
      labels[0]!.messages.map((m) => m.role),
      ["user", "assistant"],
    );
    const agreementSteps = readMetrics(dir)
      .filter((r) => typeof r["test/agreement"] === "number")
      .map((r) => r.step);
    assert.deepEqual(agreementSteps, [0, 1, 2]);
  } finally {
    cleanup();
  }
});

test("off_policy_distillation: soft-target datums train through the supervised loop; student and teacher scored on held-out sums", async () => {
  const { root, modelDir, cleanup } = setup();
  try {
    const dir = join(root, "off");
    await runRecipe("off_policy_distillation", [
      `model_name=${modelDir}`,
      `log_path=${dir}`,
      "behavior_if_log_dir_exists=delete",
      "num_examples=8",
      "batch_size=4",
      "n_teacher_targets=5",
      "test_problems=2",
      "eval_every=1",
      "max_steps=2",
      "lora_rank=4",
      "save_every=0",
    ]);
    const rows = readMetrics(dir);
    const trained = rows.filter((r) => typeof r["train_mean_nll"] === "number");
    assert.equal(trained.length, 2);
    // The soft cross-entropy of a random student against a confident teacher is large (≈ ln 1024).
    assert.ok((trained[0]!["train_mean_nll"] as number) > 3);
    const step0 = rows.find((r) => r.step === 0)!;
    assert.ok(typeof step0["test/env/all/correct"] === "number" && typeof step0["teacher/env/all/correct"] === "number");
    assert.ok(readCheckpoints(dir).some((c) => c.final === true));
  } finally {
    cleanup();
  }
});
