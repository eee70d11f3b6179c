// sl_loop and chat_sl end to end on the embedded engine with a small random model: they train,
// log the cookbook's metrics, checkpoint, and resume. chat_sl reads a hub-layout parquet folder.
// sl_basic runs briefly with its defaults' model and data (the shipped tiny-chat, persona chats).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";
import { recipes } from "../../recipes/registry.ts";
import { loadRecipe } from "../../src/config/recipe.ts";
import { parseConfigArgs } from "../../src/config/parse.ts";
import { readMetrics } from "../../src/log/metrics.ts";
import { readCheckpoints } from "../../src/runs/checkpoints.ts";
import { recipeSandbox, REPO, runRecipe, type RecipeSandbox } from "./helpers.ts";

function setup(): RecipeSandbox & { jsonl: string } {
  const sandbox = recipeSandbox("sl-recipes");
  const jsonl = join(sandbox.root, "chats.jsonl");
  writeFileSync(
    jsonl,
    readFileSync(join(REPO, "fixtures", "data", "chats_train.jsonl"), "utf8")
      .split("\n")
      .slice(0, 40)
      .join("\n") + "\n",
  );
  return { ...sandbox, jsonl };
}

test("the three SL recipes are registered and their defaults parse", async () => {
  const defaultData: Record<string, RegExp> = {
    sl_basic: /fixtures\/data\/persona_train\.jsonl$/,
    sl_loop: /fixtures\/data\/chats_train\.jsonl$/,
    chat_sl: /fixtures\/data\/chats_train\.jsonl$/,
  };
  for (const [name, dataset] of Object.entries(defaultData)) {
    const recipe = await loadRecipe(recipes, name);
    const config = parseConfigArgs(recipe.configSchema, []) as Record<string, unknown>;
    assert.equal(config["model_name"], "tiny-chat");
    assert.match(String(config["dataset"]), dataset);
  }
});

// The point of sl_basic's default data: tiny-chat has never seen the pirate voice, so a few steps
// of LoRA on the shipped model already lower the held-out loss (the full default run is measured
// by hand, see docs/supervised.md).
test("sl_basic on the persona chats with the shipped tiny-chat: test/nll and train loss fall", async () => {
  const s = setup();
  try {
    const logDir = join(s.root, "persona");
    await runRecipe("sl_basic", [
      `log_path=${logDir}`,
      "batch_size=8",
      "max_steps=6",
      "eval_every=3",
      "save_every=0",
      "test_size=16",
      "max_length=256",
      "behavior_if_log_dir_exists=delete",
    ]);
    const rows = readMetrics(logDir);
    assert.deepEqual(
      rows.filter((r) => "test/nll" in r).map((r) => r.step),
      [0, 3, 6],
    );
    const nll = rows.filter((r) => "test/nll" in r).map((r) => r["test/nll"] as number);
    assert.ok(nll[1]! < nll[0]! && nll[2]! < nll[1]!, `test/nll falls step by step: ${nll}`);
    const train = rows.filter((r) => typeof r["train_mean_nll"] === "number").map((r) => r["train_mean_nll"] as number);
    assert.ok(train.at(-1)! < train[0]!, `train_mean_nll falls: ${train}`);
    const config = JSON.parse(readFileSync(join(logDir, "config.json"), "utf8")) as Record<string, unknown>;
    assert.match(String(config["dataset"]), /persona_train\.jsonl$/);
  } finally {
    s.cleanup();
  }
});

test("sl_loop trains, checkpoints, and a resume after completion does nothing", async () => {
  const s = setup();
  try {
    const logDir = join(s.root, "loop");
    const args = [
      `model_name=${s.modelDir}`,
      `dataset=${s.jsonl}`,
      `log_path=${logDir}`,
      "batch_size=4",
      "max_steps=6",
      "save_every=3",
      "lora_rank=4",
      "behavior_if_log_dir_exists=resume",
    ];
    await runRecipe("sl_loop", args);
    const rows = readMetrics(logDir);
    assert.deepEqual(
      rows.map((r) => r.step),
      [0, 1, 2, 3, 4, 5],
    );
    for (const key of ["train_mean_nll", "num_tokens", "num_sequences", "learning_rate", "progress"]) assert.ok(key in rows[0]!, key);
    assert.deepEqual(
      readCheckpoints(logDir).map((r) => [r.name, r.batch, r.final ?? false]),
      [
        ["000003", 3, false],
        ["final", 6, true],
      ],
    );
    await runRecipe("sl_loop", args);
    assert.equal(readMetrics(logDir).length, 6);
  } finally {
    s.cleanup();
  }
});

test("chat_sl trains on a hub-layout parquet folder with a test split and reports test/nll", async () => {
  const s = setup();
  try {
    const dataDir = join(s.root, "dataset");
    const chats = readFileSync(s.jsonl, "utf8")
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { messages: unknown }).messages);
    mkdirSync(join(dataDir, "data"), { recursive: true });
    writeFileSync(
      join(dataDir, "data", "train-00000-of-00001.parquet"),
      new Uint8Array(parquetWriteBuffer({ columnData: [{ name: "messages", data: chats.slice(0, 30) }] })),
    );
    writeFileSync(
      join(dataDir, "data", "test-00000-of-00001.parquet"),
      new Uint8Array(parquetWriteBuffer({ columnData: [{ name: "messages", data: chats.slice(30) }] })),
    );
    const logDir = join(s.root, "chat");
    await runRecipe("chat_sl", [
      `model_name=${s.modelDir}`,
      `dataset=${dataDir}`,
      "test_split=test",
      `log_path=${logDir}`,
      "batch_size=8",
      "max_length=256",
      "eval_every=2",
      "save_every=2",
      "lora_rank=4",
      "learning_rate=0.01",
      "behavior_if_log_dir_exists=delete",
    ]);
    const rows = readMetrics(logDir);
    assert.deepEqual(
      rows.map((r) => r.step),
      [0, 1, 2, 3],
    );
    assert.deepEqual(
      rows.filter((r) => "test/nll" in r).map((r) => r.step),
      [0, 2, 3],
    );
    assert.ok(rows.every((r) => r.step === 3 || typeof r["train_mean_bpb"] === "number"));
    const nll = rows.filter((r) => "test/nll" in r).map((r) => r["test/nll"] as number);
    assert.ok(nll.at(-1)! < nll[0]!, `test/nll falls: ${nll}`);
    const config = JSON.parse(readFileSync(join(logDir, "config.json"), "utf8")) as Record<string, unknown>;
    assert.equal(config["recipe_name"], "chat_sl");
    assert.equal(config["renderer_name"], "role_colon");
    assert.equal(config["dataset"], dataDir, "config.json records the recipe's dataset too");
    assert.equal(config["num_epochs"], 1);
    assert.equal(readCheckpoints(logDir).at(-1)!.final, true);
  } finally {
    s.cleanup();
  }
});
