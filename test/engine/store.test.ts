import { mock, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CheckpointStore, peftTargetModules, type LoraInfo } from "../../src/engine/storage/store.ts";
import { readSafetensors, readSafetensorsHeader } from "../../src/engine/safetensors/index.ts";
import { APIStatusError, InvalidArgumentError } from "../../src/tinker/errors.ts";
import { tempDir } from "./helpers.ts";

const LORA: LoraInfo = { rank: 2, seed: 0, trainAttn: true, trainMlp: true, trainUnembed: true };

function payload(value: number) {
  const a = new Float32Array(2 * 8).fill(value);
  const b = new Float32Array(8 * 2).fill(-value);
  return {
    baseModel: "org/base",
    lora: LORA,
    step: 3,
    tensors: new Map([
      ["base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight", { shape: [2, 8], data: a }],
      ["base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight", { shape: [8, 2], data: b }],
      ["base_model.model.lm_head.lora_A.weight", { shape: [2, 8], data: a }],
    ]),
    optimizer: {
      step: 3,
      m: new Map([["base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight", Float32Array.from({ length: 16 }, (_, i) => i / 7)]]),
      v: new Map([["base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight", Float32Array.from({ length: 16 }, (_, i) => i / 9)]]),
    },
  };
}

test("weights checkpoints hold adapter, PEFT config, optimizer and metadata; load returns them exactly", () => {
  const { dir, cleanup } = tempDir();
  try {
    const store = new CheckpointStore(dir);
    store.createRun({ model_id: "local-00000001", base_model: "org/base", is_lora: true, lora: LORA });
    const { path, sizeBytes } = store.save("local-00000001", "weights", "step-3", payload(0.5));
    assert.equal(path, "tinker://local-00000001/weights/step-3");
    assert.ok(sizeBytes > 0);
    const cdir = join(dir, "local-00000001", "weights", "step-3");
    assert.deepEqual(readdirSync(cdir).sort(), ["adapter_config.json", "adapter_model.safetensors", "checkpoint.json", "optimizer.safetensors"]);
    const cfg = JSON.parse(readFileSync(join(cdir, "adapter_config.json"), "utf8")) as Record<string, unknown>;
    assert.deepEqual(cfg.target_modules, ["lm_head", "q_proj"]);
    assert.equal(readSafetensorsHeader(join(cdir, "optimizer.safetensors")).metadata.step, "3");
    assert.equal(readSafetensors(join(cdir, "adapter_model.safetensors")).size, 3);

    const loaded = store.load(path, { optimizer: true });
    assert.equal(loaded.meta.step, 3);
    assert.equal(loaded.meta.base_model, "org/base");
    assert.deepEqual(loaded.tensors.get("base_model.model.lm_head.lora_A.weight"), new Float32Array(16).fill(0.5));
    assert.equal(loaded.optimizer!.step, 3);
    assert.deepEqual(loaded.optimizer!.m, payload(0.5).optimizer.m);
    assert.deepEqual(loaded.optimizer!.v, payload(0.5).optimizer.v);
    assert.equal(store.load(path, { optimizer: false }).optimizer, undefined);
  } finally {
    cleanup();
  }
});

test("names, ids and paths are validated; no traversal out of the store", () => {
  const { dir, cleanup } = tempDir();
  try {
    const store = new CheckpointStore(join(dir, "store"));
    for (const name of ["..", "../x", "a/b", "a b", ""]) {
      assert.throws(() => store.save("local-1", "weights", name, payload(1)), InvalidArgumentError, name);
    }
    for (const id of ["..", "a/b", "x/../y", ""]) assert.throws(() => store.runDir(id), InvalidArgumentError, id);
    assert.throws(() => store.locate("tinker://../weights/x"), InvalidArgumentError);
    assert.throws(() => store.locate("tinker://a/weights/.."), InvalidArgumentError);
    assert.throws(() => store.locate("tinker://a/other/x"), /middle segment/);
    assert.throws(
      () => store.locate("tinker://a/weights/x"),
      (err: unknown) => err instanceof APIStatusError && err.status === 404,
    );
    assert.ok(!existsSync(join(dir, "x")));
    // Ids in the hosted form (session:train:n) are stored too.
    const { path } = store.save("sess-1:train:0", "sampler_weights", "s", { ...payload(1), optimizer: undefined });
    assert.equal(path, "tinker://sess-1:train:0/sampler_weights/s");
    assert.equal(store.load(path, { optimizer: false }).tensors.size, 3);
    assert.throws(() => store.load(path, { optimizer: true }), /no optimizer state/);
  } finally {
    cleanup();
  }
});

test("overwrite rules, leftovers of interrupted saves, TTL expiry, run listing", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const store = new CheckpointStore(dir);
    for (const id of ["local-a", "local-b", "local-c"]) {
      store.createRun({ model_id: id, base_model: "org/base", is_lora: true, lora: LORA, user_metadata: { who: id } });
      await new Promise((r) => setTimeout(r, 5));
    }
    store.save("local-a", "weights", "w", payload(1));
    assert.throws(
      () => store.save("local-a", "weights", "w", payload(2)),
      (err: unknown) => err instanceof APIStatusError && err.status === 409,
    );
    store.save("local-a", "weights", "w", payload(2), { overwrite: true });
    assert.equal(store.load("tinker://local-a/weights/w", { optimizer: false }).tensors.get("base_model.model.lm_head.lora_A.weight")![0], 2);
    store.save("local-a", "sampler_weights", "s", payload(1));
    store.save("local-a", "sampler_weights", "s", payload(3));
    assert.equal(store.load("tinker://local-a/sampler_weights/s", { optimizer: false }).tensors.get("base_model.model.lm_head.lora_A.weight")![0], 3);
    // An interrupted save leaves a hidden temp folder, which is never listed.
    mkdirSync(join(dir, "local-a", "weights", ".tmp-x-1234"));
    // A fake clock: the expiry is about the clock, and a loaded machine can take longer than a short TTL between two calls.
    mock.timers.enable({ apis: ["Date"], now: Date.now() });
    try {
      store.save("local-a", "weights", "short", payload(1), { ttlSeconds: 5 });
      mock.timers.tick(4900);
      assert.deepEqual(
        store
          .listCheckpoints("local-a")
          .checkpoints.map((c) => c.checkpoint_id)
          .sort(),
        ["sampler_weights/s", "weights/short", "weights/w"],
      );
      mock.timers.tick(200);
      assert.deepEqual(
        store
          .listCheckpoints("local-a")
          .checkpoints.map((c) => c.checkpoint_id)
          .sort(),
        ["sampler_weights/s", "weights/w"],
      );
    } finally {
      mock.timers.reset();
    }
    assert.ok(!existsSync(join(dir, "local-a", "weights", "short")), "expired checkpoints are removed");
    assert.throws(() => store.save("local-a", "weights", "bad-ttl", payload(1), { ttlSeconds: -1 }), /ttlSeconds/);

    const page = store.listRuns({ limit: 2, offset: 0 });
    assert.deepEqual(
      page.training_runs.map((r) => r.training_run_id),
      ["local-c", "local-b"],
    );
    assert.deepEqual(page.cursor, { offset: 0, limit: 2, total_count: 3 });
    assert.deepEqual(
      store.listRuns({ limit: 2, offset: 2 }).training_runs.map((r) => r.training_run_id),
      ["local-a"],
    );
    const run = store.getRun("local-a");
    assert.equal(run.last_checkpoint?.checkpoint_id, "weights/w");
    assert.equal(run.last_sampler_checkpoint?.checkpoint_id, "sampler_weights/s");
    assert.deepEqual(run.user_metadata, { who: "local-a" });
    assert.throws(
      () => store.getRun("local-zzz"),
      (err: unknown) => err instanceof APIStatusError && err.status === 404,
    );
    assert.deepEqual(peftTargetModules(["x.mlp.up_proj.lora_B.weight", "y.self_attn.v_proj.lora_A.weight", "z.weight"]), ["up_proj", "v_proj"]);
  } finally {
    cleanup();
  }
});
