import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import recipe, { configSchema } from "../../recipes/pretrain_tiny/index.ts";
import { makeBatch } from "../../recipes/pretrain_tiny/batches.ts";
import { loadModelDir } from "../../src/engine/loadModel.ts";
import { readSafetensorsHeader } from "../../src/engine/safetensors/index.ts";

test("makeBatch: next-token targets, weights average over the batch", () => {
  const b = makeBatch([[0, 5, 6, 0], [0, 7, 0]]);
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
    const lines = fs.readFileSync(path.join(dir, "run", "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, number>);
    const steps = lines.filter((l) => typeof l.train_mean_nll === "number");
    assert.equal(steps.length, 4);
    assert.ok(steps[3].train_mean_nll < steps[0].train_mean_nll, "loss went down");
    assert.ok(lines.some((l) => typeof l["eval/addition_accuracy"] === "number"));
    assert.ok(lines.some((l) => typeof l["final/addition_accuracy"] === "number"));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
