import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import recipe, { configSchema } from "../../scripts/pretrainTiny/index.ts";
import { makeBatch } from "../../scripts/pretrainTiny/batches.ts";
import { parseConfigArgs } from "../../src/config/parse.ts";
import { loadModelDir } from "../../src/engine/storage/loadModel.ts";
import { readSafetensorsHeader } from "../../src/engine/safetensors/index.ts";

test("makeBatch: next-token targets, weights average over the batch", () => {
  const b = makeBatch([
    [0, 5, 6, 0],
    [0, 7, 0],
  ]);
  assert.equal(b.tokens, 5);
  assert.deepEqual(Array.from(b.sequences[0].inputTokens), [0, 5, 6]);
  assert.deepEqual(Array.from(b.sequences[0].lossInputs.target_tokens), [5, 6, 0]);
  const total = b.sequences.reduce((s, q) => s + Array.from(q.lossInputs.weights).reduce((a, w) => a + w, 0), 0);
  assert.ok(Math.abs(total - 1) < 1e-6);
});

test("pretrain_tiny trains a toy model and exports a loadable bf16 Llama folder", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pretrain-tiny-"));
  try {
    const config = configSchema.parse({
      log_path: path.join(dir, "run"),
      behavior_if_log_dir_exists: "delete",
      model: { hidden_size: 32, intermediate_size: 64, num_layers: 1, num_heads: 2, num_kv_heads: 1, max_position_embeddings: 256 },
      batch_tokens: 256,
      max_steps: 4,
      warmup_steps: 1,
      eval_every: 2,
      eval_pairs: 8,
      eval_docs: 4,
      console_every: 100,
    });
    await recipe.main(config, { argv: [], commandLine: "test" });
    const out = path.join(dir, "run", "model");
    const cfg = JSON.parse(fs.readFileSync(path.join(out, "config.json"), "utf8")) as Record<string, unknown>;
    assert.deepEqual(cfg.architectures, ["LlamaForCausalLM"]);
    assert.equal(cfg.model_type, "llama");
    assert.equal(cfg.num_key_value_heads, 1);
    assert.equal(cfg.torch_dtype, "bfloat16");
    const header = readSafetensorsHeader(path.join(out, "model.safetensors"));
    assert.ok([...header.entries.values()].every((e) => e.dtype === "BF16"));
    for (const f of ["tokenizer.json", "tokenizer_config.json", "generation_config.json"]) assert.ok(fs.existsSync(path.join(out, f)), f);
    const loaded = loadModelDir(out);
    assert.equal(loaded.config.vocabSize, 1024);
    assert.equal(loaded.config.hiddenSize, 32);
    const lines = fs
      .readFileSync(path.join(dir, "run", "metrics.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, number>);
    const steps = lines.filter((l) => typeof l.train_mean_nll === "number");
    assert.equal(steps.length, 4);
    assert.ok(steps[3].train_mean_nll < steps[0].train_mean_nll, "loss went down");
    assert.ok(lines.some((l) => typeof l["eval/addition_accuracy"] === "number"));
    assert.ok(lines.some((l) => typeof l["final/addition_accuracy"] === "number"));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

type MetricRow = Record<string, number>;

function readMetrics(runDir: string): MetricRow[] {
  return fs
    .readFileSync(path.join(runDir, "metrics.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as MetricRow);
}

const TOY = {
  behavior_if_log_dir_exists: "delete",
  model: { hidden_size: 32, intermediate_size: 64, num_layers: 1, num_heads: 2, num_kv_heads: 1, max_position_embeddings: 256 },
  batch_tokens: 256,
  warmup_steps: 1,
  eval_every: 2,
  eval_pairs: 8,
  eval_docs: 4,
  console_every: 100,
};

test("pretrain_tiny options from the command line: init_from and the addition mix weights", () => {
  const config = parseConfigArgs(configSchema, ["init_from=fixtures/models/tiny-chat", "mix.addition=4", "mix.addition_drill=12"]);
  assert.equal(config.init_from, "fixtures/models/tiny-chat");
  assert.equal(config.mix.addition, 4);
  assert.equal(config.mix.addition_drill, 12);
  assert.equal(config.mix.world, 1.5, "the other weights keep their defaults");
  assert.equal(configSchema.parse({}).init_from, "", "training from scratch stays the default");
});

test("pretrain_tiny init_from continues an exported model: same config, same weights at step 0", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pretrain-tiny-init-"));
  try {
    const first = path.join(dir, "first");
    await recipe.main(configSchema.parse({ ...TOY, log_path: first, max_steps: 6, learning_rate: 1e-2 }), { argv: [], commandLine: "test" });
    const firstFinal = readMetrics(first).find((l) => typeof l["final/test_nll"] === "number");
    assert.ok(firstFinal, "first run logged final metrics");

    // model.* says hidden 160 by default: init_from must win, not build a fresh 160-wide model.
    const second = path.join(dir, "second");
    const config = configSchema.parse({
      ...TOY,
      model: undefined,
      log_path: second,
      init_from: path.join(first, "model"),
      max_steps: 2,
      learning_rate: 1e-3,
    });
    await recipe.main(config, { argv: [], commandLine: "test" });
    const rows = readMetrics(second);
    const start = rows.find((l) => typeof l["init/test_nll"] === "number");
    assert.ok(start, "a continued run evaluates its starting point");
    // Same data_seed and mix, so the same held-out documents; the bf16 export is reloaded exactly.
    assert.ok(Math.abs(start["init/test_nll"] - firstFinal["final/test_nll"]) < 1e-3, `${start["init/test_nll"]} vs ${firstFinal["final/test_nll"]}`);
    assert.ok(start["init/test_nll"] < Math.log(1024) - 0.5, "the starting loss is a trained model's, not a random one's");
    const steps = rows.filter((l) => typeof l.train_mean_nll === "number");
    assert.equal(steps.length, 2);
    assert.ok(steps[0].learning_rate < 1e-3 + 1e-12, "the continued run uses its own schedule");

    const out = loadModelDir(path.join(second, "model"));
    assert.equal(out.config.hiddenSize, 32);
    assert.equal(out.config.numKvHeads, 1);
    const src = loadModelDir(path.join(first, "model"));
    const name = "model.embed_tokens.weight";
    const a = src.weights.get(name);
    const b = out.weights.get(name);
    assert.ok(a && b && a.length === b.length);
    let diff = 0;
    for (let i = 0; i < a.length; i++) diff = Math.max(diff, Math.abs(a[i] - b[i]));
    assert.ok(diff > 0 && diff < 0.05, `two small steps moved the embeddings by at most ${diff}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("pretrain_tiny init_from rejects a missing folder and a model whose special token is not the tokenizer's", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pretrain-tiny-bad-"));
  try {
    const base = { ...TOY, log_path: path.join(dir, "run"), max_steps: 1 };
    await assert.rejects(
      recipe.main(configSchema.parse({ ...base, init_from: path.join(dir, "nope") }), { argv: [], commandLine: "test" }),
      /init_from=.*nope.*config\.json does not exist/,
    );
    const first = path.join(dir, "first");
    await recipe.main(configSchema.parse({ ...base, log_path: first, eval_every: 0 }), { argv: [], commandLine: "test" });
    const cfgFile = path.join(first, "model", "config.json");
    const cfg = JSON.parse(fs.readFileSync(cfgFile, "utf8")) as Record<string, unknown>;
    fs.writeFileSync(cfgFile, JSON.stringify({ ...cfg, bos_token_id: 5, eos_token_id: 5 }));
    await assert.rejects(
      recipe.main(configSchema.parse({ ...base, init_from: path.join(first, "model") }), { argv: [], commandLine: "test" }),
      /bos_token_id 5 .* id 0/,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("pretrain_tiny decay_steps stretches the cosine schedule past max_steps", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pretrain-tiny-decay-"));
  try {
    const lastLr = async (extra: Record<string, unknown>): Promise<number> => {
      const log = path.join(dir, `run-${Object.keys(extra).length}`);
      await recipe.main(configSchema.parse({ ...TOY, log_path: log, max_steps: 3, eval_every: 0, learning_rate: 1e-3, min_lr_ratio: 0, ...extra }), {
        argv: [],
        commandLine: "test",
      });
      const steps = readMetrics(log).filter((l) => typeof l.learning_rate === "number");
      return steps[steps.length - 1].learning_rate;
    };
    // Step 2 of 3 after 1 warmup step: halfway down a 3-step schedule, a third of the way down a 4-step one.
    assert.ok(Math.abs((await lastLr({})) - 1e-3 * 0.5) < 1e-9);
    assert.ok(Math.abs((await lastLr({ decay_steps: 4 })) - 1e-3 * 0.75) < 1e-9);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("pretrain_tiny handles checkpoint and stop requests between steps (it must not block the event loop)", { timeout: 120_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pretrain-tiny-signal-"));
  try {
    const log = path.join(dir, "run");
    // Timers only fire if the training loop yields; the second one fires a step after the first.
    setTimeout(() => {
      process.emit("SIGUSR1", "SIGUSR1");
      setTimeout(() => process.emit("SIGINT", "SIGINT"), 0);
    }, 0);
    await recipe.main(configSchema.parse({ ...TOY, log_path: log, max_steps: 10_000, eval_every: 0 }), { argv: [], commandLine: "test" });
    const steps = readMetrics(log).filter((l) => typeof l.train_mean_nll === "number");
    assert.ok(steps.length >= 1 && steps.length < 50, `${steps.length} steps before the stop request was seen`);
    const checkpoints = fs.readdirSync(log).filter((f) => f.startsWith("checkpoint_"));
    assert.equal(checkpoints.length, 1);
    assert.ok(fs.existsSync(path.join(log, checkpoints[0], "model.safetensors")));
    assert.ok(fs.existsSync(path.join(log, "model", "model.safetensors")), "a stopped run still exports");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
