// Opening the training client a run continues with: the newest checkpoint whose state loads, older
// ones when newer ones are gone, metrics cut back only after a load succeeded, and a clear error
// naming every record when none loads.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MetricsLogger } from "../../src/log/metrics.ts";
import { RunLog } from "../../src/log/runLog.ts";
import type { RunControl } from "../../src/runs/control.ts";
import type { RunSession } from "../../src/runs/session.ts";
import type { ServiceClient, TrainingClient } from "../../src/tinker/clients.ts";
import { TrainingRunConfigFields } from "./helpers.ts";
import { openTrainingClient } from "../../src/training/open.ts";
import type { TrainingContext } from "../../src/training/run.ts";

function fakeRun(dir: string, loadable: Set<string>): { run: TrainingContext; calls: string[] } {
  const calls: string[] = [];
  const client = { kind: "training" } as unknown as TrainingClient;
  const serviceClient = {
    engineKind: "fake",
    async createTrainingClientFromStateWithOptimizer(path: string) {
      calls.push(`resume ${path}`);
      if (!loadable.has(path)) throw new Error(`checkpoint ${path} not found`);
      return client;
    },
    async createTrainingClientFromState(path: string) {
      calls.push(`load ${path}`);
      return client;
    },
    async createLoraTrainingClient(model: string, options: { rank: number; seed?: number }) {
      calls.push(`fresh ${model} rank ${options.rank} seed ${options.seed}`);
      return client;
    },
  } as unknown as ServiceClient;
  const log = new RunLog(dir, "test");
  const metrics = new MetricsLogger(dir, { console: false });
  const control = { stopRequested: false, consumeCheckpointRequest: () => false, dispose() {} } as unknown as RunControl;
  const session = { logDir: dir, resumed: true, metrics, log, control } as unknown as RunSession;
  return { run: { recipeName: "test", logDir: dir, log, metrics, control, session, serviceClient }, calls };
}

function writeRun(dir: string): void {
  const records = [
    { name: "000002", batch: 2, state_path: "tinker://r/weights/000002", sampler_path: "tinker://r/sampler_weights/000002" },
    { name: "000004", batch: 4, state_path: "tinker://r/weights/000004", sampler_path: "tinker://r/sampler_weights/000004" },
  ];
  writeFileSync(join(dir, "checkpoints.jsonl"), records.map((r) => `${JSON.stringify(r)}\n`).join(""));
  writeFileSync(join(dir, "metrics.jsonl"), [0, 1, 2, 3, 4, 5].map((step) => `${JSON.stringify({ step, loss: step })}\n`).join(""));
}

const steps = (dir: string) =>
  readFileSync(join(dir, "metrics.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => (JSON.parse(l) as { step: number }).step);

test("resume takes the newest loadable checkpoint and cuts metrics back to it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "open-"));
  try {
    writeRun(dir);
    const { run, calls } = fakeRun(dir, new Set(["tinker://r/weights/000004", "tinker://r/weights/000002"]));
    const opened = await openTrainingClient(run, TrainingRunConfigFields.parse({ log_path: dir }));
    assert.equal(opened.startStep, 4);
    assert.equal(opened.resume?.name, "000004");
    assert.deepEqual(calls, ["resume tinker://r/weights/000004"]);
    assert.deepEqual(steps(dir), [0, 1, 2, 3]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a newest checkpoint whose folder is gone falls back to the one before it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "open-"));
  try {
    writeRun(dir);
    const { run, calls } = fakeRun(dir, new Set(["tinker://r/weights/000002"]));
    const opened = await openTrainingClient(run, TrainingRunConfigFields.parse({ log_path: dir }));
    assert.equal(opened.startStep, 2);
    assert.deepEqual(calls, ["resume tinker://r/weights/000004", "resume tinker://r/weights/000002"]);
    assert.deepEqual(steps(dir), [0, 1]);
    assert.match(readFileSync(join(dir, "logs.log"), "utf8"), /checkpoint 000004 could not be loaded/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("when no checkpoint loads, the error names each one and metrics.jsonl is untouched", async () => {
  const dir = mkdtempSync(join(tmpdir(), "open-"));
  try {
    writeRun(dir);
    const { run } = fakeRun(dir, new Set());
    await assert.rejects(openTrainingClient(run, TrainingRunConfigFields.parse({ log_path: dir })), (err: Error) => {
      assert.match(err.message, /checkpoints\.jsonl: no checkpoint could be loaded/);
      assert.match(err.message, /000004 \(tinker:\/\/r\/weights\/000004\): checkpoint tinker:\/\/r\/weights\/000004 not found/);
      assert.match(err.message, /000002/);
      return true;
    });
    assert.deepEqual(steps(dir), [0, 1, 2, 3, 4, 5]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a fresh start makes a LoRA with the config's rank and seed, or loads load_checkpoint_path weights", async () => {
  const dir = mkdtempSync(join(tmpdir(), "open-"));
  try {
    const fresh = fakeRun(dir, new Set());
    const opened = await openTrainingClient(fresh.run, TrainingRunConfigFields.parse({ log_path: dir, lora_rank: 4, seed: 7 }));
    assert.equal(opened.startStep, 0);
    assert.deepEqual(fresh.calls, ["fresh tiny-chat rank 4 seed 7"]);
    const loaded = fakeRun(dir, new Set());
    await openTrainingClient(loaded.run, TrainingRunConfigFields.parse({ log_path: dir, load_checkpoint_path: "tinker://x/weights/final" }));
    assert.deepEqual(loaded.calls, ["load tinker://x/weights/final"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
