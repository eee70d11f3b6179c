// The step skeleton: StepCadence's decisions, and every loop (SL, RL, DPO, SDFT) run through the
// same cadence cases on the embedded engine with tiny-chat: the same checkpoints at the same
// boundaries, the same stop point, and a resume that logs each step once.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { additionTask } from "../../recipes/sdft/index.ts";
import { configSchema as slBasicSchema } from "../../recipes/sl_basic/index.ts";
import { SdftConfigSchema, main as sdftMain } from "../../src/distillation/sdftTrain.ts";
import { createEmbeddedServiceClient } from "../../src/engine/index.ts";
import { readMetrics } from "../../src/log/metrics.ts";
import { loadComparisons } from "../../src/preference/datasets.ts";
import { dpoDatasetBuilder } from "../../src/preference/dpoData.ts";
import { DpoConfigSchema, main as dpoMain } from "../../src/preference/train.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { RLConfigSchema } from "../../src/rl/config.ts";
import { arithmeticDatasetBuilder } from "../../src/rl/envs/arithmetic.ts";
import { main as rlMain } from "../../src/rl/train.ts";
import { readCheckpoints } from "../../src/runs/checkpoints.ts";
import type { RunControl } from "../../src/runs/control.ts";
import { chatDatasetFromConfig } from "../../src/supervised/datasetSpec.ts";
import { main as slMain } from "../../src/supervised/train.ts";
import type { ServiceClient } from "../../src/tinker/clients.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { epochSeed, finalEvaluationDue, StepCadence, type LoopResult } from "../../src/training/cadence.ts";
import { CheckpointManager } from "../../src/training/checkpoints.ts";
import { FakeStore, FakeTrainingClient } from "../supervised/fakes.ts";

/**
 * SIGUSR1 before step `requestAt` and SIGINT before step `stopAt`, by boundary: each boundary
 * reads the stop flag, then consumes the checkpoint request once.
 */
class ScriptedControl implements RunControl {
  private boundaries = 0;
  constructor(
    readonly startStep: number,
    readonly script: { requestAt?: number; stopAt?: number },
  ) {}
  get checkpointRequested(): boolean {
    return false;
  }
  get stopRequested(): boolean {
    // Boundary b reads this before its consume, when b − 1 boundaries have been consumed.
    return this.script.stopAt !== undefined && this.startStep + this.boundaries + 1 >= this.script.stopAt;
  }
  consumeCheckpointRequest(): boolean {
    this.boundaries += 1;
    return this.startStep + this.boundaries === this.script.requestAt;
  }
  dispose(): void {}
}

function cadenceWith(policy: { save_every: number; rolling_save_every: number }, control: RunControl, endStep: number, triggers = {}) {
  const checkpoints = new CheckpointManager(
    new FakeTrainingClient("fake", new FakeStore()),
    { ...policy, ttl_seconds: null, rolling_ttl_seconds: 60 },
    { logDir: "/nonexistent" },
  );
  return new StepCadence(checkpoints, control, endStep, triggers);
}

test("StepCadence: periodic, rolling, requested, stop and token saves; nothing at the last boundary", () => {
  const control = new ScriptedControl(0, { requestAt: 5, stopAt: 7 });
  const cadence = cadenceWith({ save_every: 2, rolling_save_every: 3 }, control, 8);
  const decisions = [1, 2, 3, 4, 5, 6, 7].map((next) => cadence.decide(next));
  assert.deepEqual(
    decisions.map((b) => [b.next, b.save, b.reason, b.stop]),
    [
      [1, null, null, false],
      [2, "full", "periodic", false],
      [3, "rolling", null, false],
      [4, "full", "periodic", false],
      [5, "full", "requested", false],
      [6, "full", "periodic", false],
      [7, "full", "stop", true],
    ],
  );
  assert.deepEqual(cadence.decide(8), { next: 8, save: null, reason: null, stop: false }, "the final checkpoint follows the last step");

  const byTokens = cadenceWith({ save_every: 0, rolling_save_every: 0 }, new ScriptedControl(0, {}), 100, { save_every_tokens: 1000 });
  assert.equal(byTokens.decide(1, 999).save, null);
  const due = byTokens.decide(2, 1000);
  assert.deepEqual([due.save, due.reason], ["full", "tokens"]);
  byTokens.savedAt(1000);
  assert.equal(byTokens.decide(3, 1500).save, null, "counted from the last full save");
  assert.equal(byTokens.decide(4, 2000).reason, "tokens");
});

test("epoch seeds and the final-evaluation rule are the same for every loop", () => {
  assert.deepEqual(
    [0, 1, 2].map((e) => epochSeed(0, e)),
    [0, 1, 2],
  );
  assert.notDeepEqual(
    [0, 1].map((e) => epochSeed(7, e)),
    [0, 1],
    "the run's seed moves the data order",
  );
  assert.equal(finalEvaluationDue(10, 1), true);
  assert.equal(finalEvaluationDue(0, 1), false);
  assert.equal(finalEvaluationDue(10, 0), false);
});

type Loop = (logPath: string, control: RunControl | undefined, resume: boolean) => Promise<LoopResult>;

async function loops(service: ServiceClient): Promise<Record<string, Loop>> {
  const renderer = getRenderer("role_colon", await getTokenizer("tiny-chat"));
  const cadence = { max_steps: 6, save_every: 2, rolling_save_every: 3, learning_rate: 1e-3, lora_rank: 4 };
  const run = (logPath: string, resume: boolean) => ({ log_path: logPath, behavior_if_log_dir_exists: resume ? ("resume" as const) : ("delete" as const) });
  const options = (control: RunControl | undefined) => ({
    console: false as const,
    serviceClient: service,
    ...(control !== undefined ? { runControl: control } : {}),
  });
  return {
    sl: (logPath, control, resume) => {
      const config = slBasicSchema.parse({ ...cadence, ...run(logPath, resume), batch_size: 4, max_length: 96, test_size: 0, eval_every: 0 });
      return slMain(config, chatDatasetFromConfig(config), options(control));
    },
    rl: (logPath, control, resume) => {
      const config = RLConfigSchema.parse({ ...cadence, ...run(logPath, resume), max_tokens: 4, group_size: 2, groups_per_batch: 2, eval_every: 0 });
      const builder = arithmeticDatasetBuilder({ renderer, batchSize: 2, groupSize: 2, numBatches: 10, seed: 0, maxOperand: 9 });
      return rlMain(config, builder, options(control));
    },
    dpo: (logPath, control, resume) => {
      const source = { dataset: "pirate", dataset_config: null, test_dataset: null, test_size: 0, max_train: 24, shuffle_seed: 0 };
      const config = DpoConfigSchema.parse({ ...cadence, ...run(logPath, resume), eval_every: 0 });
      return dpoMain(
        config,
        dpoDatasetBuilder(() => loadComparisons(source), renderer, 2, 96),
        options(control),
      );
    },
    sdft: (logPath, control, resume) => {
      const config = SdftConfigSchema.parse({ ...cadence, ...run(logPath, resume), groups_per_batch: 2, max_tokens: 3, topk: 2, eval_every: 0 });
      return sdftMain(config, additionTask({ seed: 0, max_operand: 9, test_problems: 0, demo_template: null }), renderer, options(control));
    },
  };
}

test("every loop saves, stops and resumes at the same boundaries", async () => {
  const dir = mkdtempSync(join(tmpdir(), "cadence-"));
  const service = createEmbeddedServiceClient({
    storeDir: join(dir, "store"),
    resolve: { env: { HF_HUB_OFFLINE: "1", HF_HOME: join(dir, "hf"), COOKBOOK_HOME: dir } },
  });
  try {
    for (const [name, loop] of Object.entries(await loops(service))) {
      // SIGUSR1 before step 5: periodic saves at 2 and 4, a rolling point at 3, the requested one at 5.
      const straight = join(dir, name, "straight");
      const done = await loop(straight, new ScriptedControl(0, { requestAt: 5 }), false);
      assert.deepEqual([done.startStep, done.endStep, done.stoppedAt, done.outcome], [0, 6, 6, "completed"], name);
      assert.deepEqual(
        readCheckpoints(straight).map((r) => [r.name, r.rolling ?? false, r.final ?? false]),
        [
          ["000002", false, false],
          ["000003", true, false],
          ["000004", false, false],
          ["000005", false, false],
          ["final", false, true],
        ],
        name,
      );
      assert.deepEqual([...new Set(readMetrics(straight).map((r) => r.step))], [0, 1, 2, 3, 4, 5], name);

      // SIGINT before step 3: the stop saves a full checkpoint there (not a rolling point), and a
      // resumed run trains 3..5 once.
      const stoppedDir = join(dir, name, "stopped");
      const stopped = await loop(stoppedDir, new ScriptedControl(0, { stopAt: 3 }), false);
      assert.deepEqual([stopped.stoppedAt, stopped.outcome], [3, "stopped"], name);
      assert.deepEqual(
        readCheckpoints(stoppedDir).map((r) => [r.name, r.rolling ?? false]),
        [
          ["000002", false],
          ["000003", false],
        ],
        name,
      );
      const resumed = await loop(stoppedDir, undefined, true);
      assert.deepEqual([resumed.startStep, resumed.stoppedAt, resumed.outcome], [3, 6, "completed"], name);
      const steps = readMetrics(stoppedDir).map((r) => r.step);
      assert.deepEqual(steps, [...new Set(steps)], `${name}: each step logged once`);
      assert.deepEqual(steps, [0, 1, 2, 3, 4, 5], name);
    }
  } finally {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
