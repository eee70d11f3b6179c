// The checkpoint store under faults: a full disk mid-save, a process killed mid-save or between
// the two renames of a replacement.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { CheckpointStore, ORPHAN_MAX_AGE_MS, type LoraInfo } from "../../src/engine/storage/store.ts";
import { DiskFullError } from "../../src/files/diskErrors.ts";
import { failWritesTo } from "../files/faults.ts";
import { tempDir } from "./helpers.ts";

const LORA: LoraInfo = { rank: 2, seed: 0, trainAttn: true, trainMlp: true, trainUnembed: true };
const MODEL = "local-00000001";

function payload(value: number, step = 7) {
  return {
    baseModel: "org/base",
    lora: LORA,
    step,
    tensors: new Map([["base_model.model.lm_head.lora_A.weight", { shape: [2, 8], data: new Float32Array(16).fill(value) }]]),
    optimizer: { step, m: new Map<string, Float32Array>(), v: new Map<string, Float32Array>() },
  };
}

function deadPid(): number {
  const r = spawnSync("true");
  return r.pid!;
}

function dotEntries(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith(".")) : [];
}

test("a full disk mid-save leaves no temporary folder, keeps the checkpoint it was replacing, and names checkpoint, step and space", () => {
  const { dir, cleanup } = tempDir();
  try {
    const store = new CheckpointStore(dir);
    store.createRun({ model_id: MODEL, base_model: "org/base", is_lora: true, lora: LORA });
    const path = store.save(MODEL, "sampler_weights", "000007", payload(0.25)).path;
    const restore = failWritesTo((p) => p.includes("/.tmp-"), 100);
    try {
      assert.throws(
        () => store.save(MODEL, "sampler_weights", "000007", payload(0.75, 8)),
        (err: unknown) =>
          err instanceof DiskFullError &&
          err.message.includes(join(dir, MODEL, "sampler_weights", "000007")) &&
          err.message.includes("saving checkpoint sampler_weights/000007 (step 8)") &&
          /free of/.test(err.message),
      );
      assert.throws(() => store.save(MODEL, "weights", "000008", payload(0.75, 8)), DiskFullError);
    } finally {
      restore();
    }
    assert.deepEqual(dotEntries(join(dir, MODEL, "sampler_weights")), []);
    assert.deepEqual(dotEntries(join(dir, MODEL, "weights")), []);
    assert.deepEqual(store.load(path, { optimizer: false }).tensors.get("base_model.model.lm_head.lora_A.weight"), new Float32Array(16).fill(0.25));
    assert.equal(store.exists(MODEL, "weights", "000008"), false);
  } finally {
    cleanup();
  }
});

test("opening the store sweeps temporary folders of dead processes and old ones, but not a live save's", () => {
  const { dir, cleanup } = tempDir();
  try {
    const store = new CheckpointStore(dir);
    store.createRun({ model_id: MODEL, base_model: "org/base", is_lora: true, lora: LORA });
    store.save(MODEL, "weights", "000001", payload(1));
    const parent = join(dir, MODEL, "weights");
    const dead = join(parent, `.tmp-000002-${deadPid()}-0123abcd`);
    const live = join(parent, `.tmp-000003-${process.pid}-0123abcd`);
    const legacyOld = join(parent, ".tmp-000004-89abcdef");
    const legacyNew = join(parent, ".tmp-000005-89abcdef");
    const trash = join(parent, ".trash-000006-01234567");
    const runTmp = join(dir, MODEL, `.run.json.${deadPid()}.0123abcd.tmp`);
    for (const d of [dead, live, legacyOld, legacyNew, trash]) mkdirSync(d);
    cpSync(join(parent, "000001", "checkpoint.json"), runTmp);
    const old = new Date(Date.now() - ORPHAN_MAX_AGE_MS - 60_000);
    utimesSync(legacyOld, old, old);
    new CheckpointStore(dir);
    assert.deepEqual(dotEntries(parent).sort(), [".tmp-000003-" + process.pid + "-0123abcd", ".tmp-000005-89abcdef"].sort());
    assert.equal(existsSync(runTmp), false);
    assert.equal(store.exists(MODEL, "weights", "000001"), true);
  } finally {
    cleanup();
  }
});

test("a replacement killed between its two renames leaves the old checkpoint, which is put back under its name", () => {
  const { dir, cleanup } = tempDir();
  try {
    const store = new CheckpointStore(dir);
    store.createRun({ model_id: MODEL, base_model: "org/base", is_lora: true, lora: LORA });
    const path = store.save(MODEL, "weights", "000001", payload(0.5)).path;
    const parent = join(dir, MODEL, "weights");
    // What a kill after the first rename leaves: the old folder aside, the new one still a temp.
    renameSync(join(parent, "000001"), join(parent, `.old-000001-${deadPid()}-0123abcd`));
    mkdirSync(join(parent, `.tmp-000001-${deadPid()}-4567cdef`));
    assert.equal(existsSync(join(parent, "000001")), false);
    // Looking the name up recovers it without reopening the store...
    assert.deepEqual(store.load(path, { optimizer: true }).tensors.get("base_model.model.lm_head.lora_A.weight"), new Float32Array(16).fill(0.5));
    // ...and so does opening the store.
    renameSync(join(parent, "000001"), join(parent, `.old-000001-${deadPid()}-89abcdef`));
    const report = new CheckpointStore(dir, { sweep: false }).sweep();
    assert.deepEqual(report.restored, [join(parent, "000001")]);
    assert.deepEqual(dotEntries(parent), []);
    // A replacement that completes leaves only the new one.
    store.save(MODEL, "weights", "000001", payload(0.9), { overwrite: true });
    assert.deepEqual(readdirSync(parent), ["000001"]);
    assert.deepEqual(store.load(path, { optimizer: false }).tensors.get("base_model.model.lm_head.lora_A.weight"), new Float32Array(16).fill(0.9));
  } finally {
    cleanup();
  }
});
