// The DPO loop on the embedded engine and tiny-chat: metrics, checkpoints carrying the reference
// snapshot, and exact resume (a run stopped by SIGINT and resumed logs the same numbers as one
// that ran straight through); and pipeline stages that are skipped once finished.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEmbeddedServiceClient } from "../../src/engine/index.ts";
import { readMetrics } from "../../src/log/metrics.ts";
import { loadComparisons } from "../../src/preference/datasets.ts";
import { dpoDatasetBuilder } from "../../src/preference/dpoData.ts";
import { finalCheckpoint, runStage, StageStoppedError } from "../../src/preference/stages.ts";
import { DpoConfigSchema, main } from "../../src/preference/train.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { readCheckpoints } from "../../src/runs/checkpoints.ts";
import type { RunControl } from "../../src/runs/control.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";

/** Asks the loop to stop when it checks for the `stopAtCheck`-th time (once per step). */
function stopAfter(stopAtCheck: number): RunControl {
  let checks = 0;
  return {
    get stopRequested() {
      checks += 1;
      return checks === stopAtCheck;
    },
    checkpointRequested: false,
    consumeCheckpointRequest: () => false,
    dispose: () => {},
  };
}

test("DPO loop: metrics fall, checkpoints keep the reference, and a stopped run resumes exactly", async () => {
  const dir = mkdtempSync(join(tmpdir(), "dpo-loop-"));
  const svc = createEmbeddedServiceClient({
    storeDir: join(dir, "store"),
    resolve: { env: { HF_HUB_OFFLINE: "1", HF_HOME: join(dir, "hf"), COOKBOOK_HOME: dir } },
  });
  try {
    const renderer = getRenderer("role_colon", await getTokenizer("tiny-chat"));
    const source = { dataset: "pirate", dataset_config: null, test_dataset: null, test_size: 8, max_train: 24, shuffle_seed: 0 };
    const builder = () => dpoDatasetBuilder(() => loadComparisons(source), renderer, 4, 256);
    const config = (logPath: string, behavior: "delete" | "resume") =>
      DpoConfigSchema.parse({
        log_path: logPath,
        learning_rate: 2e-3,
        lora_rank: 4,
        max_steps: 6,
        save_every: 2,
        eval_every: 3,
        behavior_if_log_dir_exists: behavior,
      });
    const quiet = { console: false as const, serviceClient: svc };

    const straight = await main(config(join(dir, "a"), "delete"), builder(), quiet);
    assert.equal(straight.outcome, "completed");
    const rowsA = readMetrics(join(dir, "a"));
    const train = rowsA.filter((r) => typeof r["dpo_loss"] === "number");
    assert.deepEqual(
      train.map((r) => r.step),
      [0, 1, 2, 3, 4, 5],
    );
    for (const key of ["accuracy", "margin", "chosen_reward", "rejected_reward", "num_pairs", "num_tokens", "learning_rate"]) assert.ok(key in train[0]!, key);
    assert.ok(Math.abs(Number(train[0]!["dpo_loss"]) - Math.LN2) < 1e-4, "step 0 is at the reference: log 2");
    assert.ok(Number(train[5]!["dpo_loss"]) < Number(train[0]!["dpo_loss"]) - 0.05, "the loss falls");
    const evals = rowsA.filter((r) => typeof r["test/accuracy"] === "number");
    assert.deepEqual(
      evals.map((r) => r.step),
      [0, 3, 6],
    );
    assert.ok(Number(evals[2]!["test/accuracy"]) >= 0.8 && typeof evals[2]!["test/nll"] === "number");
    const pairs = readFileSync(join(dir, "a", "dpo_pairs.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual([...new Set(pairs.map((p) => p["step"]))], [0, 3, 6], "pairs written at every evaluation");
    const last = pairs.filter((p) => p["step"] === 6);
    assert.equal(last.length, 8);
    assert.match(String(last[0]!["prompt"]), /^<\|endoftext\|>User: .*\n\nAssistant:$/s);
    assert.ok(last.every((p) => typeof p["chosen"] === "string" && typeof p["rejected"] === "string" && p["chosen"] !== p["rejected"]));
    const wins = last.filter((p) => Number(p["chosen_reward"]) > Number(p["rejected_reward"])).length / last.length;
    assert.ok(wins >= 0.8, `implied rewards favour the chosen replies: ${wins}`);
    const recs = readCheckpoints(join(dir, "a"));
    // 24 pairs in batches of 4: six batches, so the end of the run is the start of epoch 1.
    assert.deepEqual(
      recs.map((r) => [r.name, r.epoch, r.batch, r.final ?? false]),
      [
        ["000002", 0, 2, false],
        ["000004", 0, 4, false],
        ["final", 1, 0, true],
      ],
    );
    assert.ok(
      recs.every((r) => r["reference_base_model"] === "tiny-chat"),
      "a run from the base model compares against the base model",
    );

    const stopped = await main(config(join(dir, "b"), "delete"), builder(), { ...quiet, runControl: stopAfter(4) });
    assert.deepEqual([stopped.outcome, stopped.stoppedAt], ["stopped", 3]);
    const resumed = await main(config(join(dir, "b"), "resume"), builder(), quiet);
    assert.deepEqual([resumed.startStep, resumed.outcome], [3, "completed"]);
    const rowsB = readMetrics(join(dir, "b")).filter((r) => typeof r["dpo_loss"] === "number");
    assert.deepEqual(
      rowsB.map((r) => r.step),
      [0, 1, 2, 3, 4, 5],
      "each step logged once",
    );
    rowsB.forEach((r, i) =>
      assert.ok(Math.abs(Number(r["dpo_loss"]) - Number(train[i]!["dpo_loss"])) < 1e-5, `step ${i}: ${r["dpo_loss"]} vs ${train[i]!["dpo_loss"]}`),
    );
    const recsB = readCheckpoints(join(dir, "b"));
    assert.ok(
      recsB.every((r) => r["reference_base_model"] === "tiny-chat"),
      "the resumed run kept the original reference",
    );
  } finally {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("pipeline stages: a finished stage is skipped, an unfinished one runs, a stopped one says how to resume", async () => {
  const dir = mkdtempSync(join(tmpdir(), "stages-"));
  try {
    const logs: string[] = [];
    const stage = join(dir, "sft");
    let runs = 0;
    await assert.rejects(
      runStage(
        "sft",
        stage,
        (l) => logs.push(l),
        async () => (runs += 1),
      ),
      StageStoppedError,
    );
    mkdirSync(stage, { recursive: true });
    writeFileSync(join(stage, "checkpoints.jsonl"), '{"name":"000010","batch":10,"state_path":"tinker://x/weights/000010"}\n');
    assert.equal(finalCheckpoint(stage), undefined);
    const done = await runStage(
      "sft",
      stage,
      (l) => logs.push(l),
      async () => {
        runs += 1;
        writeFileSync(
          join(stage, "checkpoints.jsonl"),
          '{"name":"final","batch":20,"state_path":"tinker://x/weights/final","sampler_path":"tinker://x/sampler_weights/final","final":true}\n',
          { flag: "a" },
        );
      },
    );
    assert.deepEqual([done.ran, done.record.name, runs], [true, "final", 2]);
    const again = await runStage(
      "sft",
      stage,
      (l) => logs.push(l),
      async () => (runs += 1),
    );
    assert.deepEqual([again.ran, runs], [false, 2]);
    assert.match(logs.at(-1)!, /already finished .*not rerun/);
    const forced = await runStage(
      "sft",
      stage,
      () => {},
      async () => (runs += 1),
      { skipFinished: false },
    );
    assert.deepEqual([forced.ran, runs], [true, 3]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
