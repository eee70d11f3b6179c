// The SDFT loop end to end on the embedded engine with tiny-chat: both modes train and log
// teacher_kl, the held-out scores of student and demonstrated teacher, checkpoints that pin the
// teacher, and a stopped run that resumes with the same numbers as one that was not stopped.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { additionTask } from "../../recipes/sdft/index.ts";
import { SdftConfigSchema, main } from "../../src/distillation/sdftTrain.ts";
import { createEmbeddedServiceClient } from "../../src/engine/index.ts";
import { readMetrics } from "../../src/log/metrics.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { readCheckpoints } from "../../src/runs/checkpoints.ts";
import type { RunControl } from "../../src/runs/control.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";

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

test("SDFT: top-K and importance-sampling modes train, pin the teacher, and a stopped run resumes exactly", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sdft-loop-"));
  const svc = createEmbeddedServiceClient({
    storeDir: join(dir, "store"),
    resolve: { env: { HF_HUB_OFFLINE: "1", HF_HOME: join(dir, "hf"), COOKBOOK_HOME: dir } },
  });
  try {
    const renderer = getRenderer("role_colon", await getTokenizer("tiny-chat"));
    const task = additionTask({ seed: 0, max_operand: 100, test_problems: 6, demo_template: null });
    const config = (logPath: string, topk: number, behavior: "delete" | "resume" = "delete") =>
      SdftConfigSchema.parse({
        log_path: logPath,
        learning_rate: 2e-3,
        lora_rank: 4,
        groups_per_batch: 4,
        max_tokens: 5,
        topk,
        max_steps: 4,
        save_every: 2,
        eval_every: 2,
        behavior_if_log_dir_exists: behavior,
      });
    const quiet = { console: false as const, serviceClient: svc };

    for (const topk of [3, 0]) {
      const out = join(dir, `topk${topk}`);
      assert.equal((await main(config(out, topk), task, renderer, quiet)).outcome, "completed");
      const rows = readMetrics(out);
      const train = rows.filter((r) => typeof r["teacher_kl"] === "number");
      assert.deepEqual(
        train.map((r) => r.step),
        [0, 1, 2, 3],
        `topk=${topk}`,
      );
      assert.ok(train.every((r) => Number(r["num_tokens"]) > 0 && Number.isFinite(Number(r["teacher_kl"]))));
      // At step 0 the student is exactly the teacher's weights, so only the prompts differ.
      const evals = rows.filter((r) => typeof r["test/env/all/correct"] === "number");
      assert.deepEqual(
        evals.map((r) => r.step),
        [0, 2, 4],
        "evaluated every 2 steps and after the last",
      );
      assert.ok(
        evals.every((r) => typeof r["teacher/env/all/correct"] === "number"),
        "the demonstrated teacher's score sits beside the student's",
      );
      const recs = readCheckpoints(out);
      assert.deepEqual(
        recs.map((r) => [r.name, r.final ?? false]),
        [
          ["000002", false],
          ["final", true],
        ],
      );
      assert.ok(
        recs.every((r) => r["teacher_base_model"] === "tiny-chat" && r["teacher_sampler_path"] === undefined),
        "the teacher is the base model the run started from",
      );
    }

    const b = join(dir, "stopped");
    const stopped = await main(config(b, 3), task, renderer, { ...quiet, runControl: stopAfter(3) });
    assert.deepEqual([stopped.outcome, stopped.stoppedAt], ["stopped", 2]);
    const resumed = await main(config(b, 3, "resume"), task, renderer, quiet);
    assert.deepEqual([resumed.startStep, resumed.outcome], [2, "completed"]);
    const straight = readMetrics(join(dir, "topk3")).filter((r) => typeof r["teacher_kl"] === "number");
    const again = readMetrics(b).filter((r) => typeof r["teacher_kl"] === "number");
    assert.deepEqual(
      again.map((r) => r.step),
      [0, 1, 2, 3],
      "each step logged once",
    );
    again.forEach((r, i) =>
      assert.ok(
        Math.abs(Number(r["teacher_kl"]) - Number(straight[i]!["teacher_kl"])) < 1e-4,
        `step ${i}: ${r["teacher_kl"]} vs ${straight[i]!["teacher_kl"]}`,
      ),
    );
    assert.ok(
      readCheckpoints(b).every((r) => r["teacher_base_model"] === "tiny-chat"),
      "the resumed run kept the original teacher",
    );
  } finally {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
