import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UncalibratedModelError, UnknownModelError, computeScheduleLrMultiplier, getLr } from "../../src/hyperparams.ts";

const close = (actual: number, expected: number, rel = 1e-12): void =>
  assert.ok(Math.abs(actual - expected) <= rel * Math.abs(expected), `${actual} vs ${expected}`);

test("getLr follows 5e-5 × 10 (LoRA) × (2000/hidden)^P", () => {
  close(getLr("meta-llama/Llama-3.2-1B"), 5e-4 * (2000 / 2048) ** 0.781);
  close(getLr("meta-llama/Llama-3.1-8B"), 5e-4 * (2000 / 4096) ** 0.781);
  close(getLr("Qwen/Qwen3-8B"), 5e-4 * (2000 / 4096) ** 0.0775);
  close(getLr("Qwen/Qwen3-30B-A3B"), 5e-4 * (2000 / 2048) ** 0.0775);
  close(getLr("Qwen/Qwen3-4B-Instruct-2507"), 5e-4 * (2000 / 2560) ** 0.0775);
  close(getLr("meta-llama/Llama-3.1-70B", { isLora: false }), 5e-5 * (2000 / 8192) ** 0.781);
  close(getLr("meta-llama/Llama-3.1-8B-Instruct"), getLr("meta-llama/Llama-3.1-8B"));
  // Worked values of docs/cookbook-parity.md#learning-rate-helpers.
  assert.equal(getLr("meta-llama/Llama-3.2-1B").toExponential(2), "4.91e-4");
  assert.equal(getLr("Qwen/Qwen3-8B").toExponential(2), "4.73e-4");
  assert.equal(getLr("Qwen/Qwen3-0.6B").toExponential(2), "5.27e-4");
});

test("uncalibrated families and unknown models raise clear errors", () => {
  for (const name of ["deepseek-ai/DeepSeek-V3.1", "openai/gpt-oss-20b", "moonshotai/Kimi-K2.6", "nvidia/Nemotron-3-8B"]) {
    assert.throws(
      () => getLr(name),
      (err: unknown) => err instanceof UncalibratedModelError && err.message.startsWith(`get_lr is not yet calibrated for ${name}`),
    );
  }
  assert.throws(
    () => getLr("HuggingFaceTB/SmolLM2-135M"),
    (err: unknown) =>
      err instanceof UnknownModelError &&
      err.message === "unknown model HuggingFaceTB/SmolLM2-135M: get_lr supports Llama and Qwen models (by name or config.json model_type)",
  );
  assert.throws(() => getLr("someone/llama-custom-7b"), {
    message: "unknown model someone/llama-custom-7b: hidden_size is not in the built-in table and no config.json was found",
  });
});

test("hidden size and family come from the model's config when not in the table", () => {
  close(getLr("org/tiny-llama", { config: { hidden_size: 64 } }), 5e-4 * (2000 / 64) ** 0.781);
  close(getLr("org/vl-qwen", { config: { text_config: { hidden_size: 1000 } } }), 5e-4 * 2 ** 0.0775);
  const dir = mkdtempSync(join(tmpdir(), "cookbook-hp-"));
  const model = join(dir, "my-model");
  mkdirSync(model);
  writeFileSync(join(model, "config.json"), JSON.stringify({ model_type: "qwen3", hidden_size: 500 }));
  close(getLr(model), 5e-4 * 4 ** 0.0775, 1e-12);
  close(getLr("alias", { resolveConfig: () => join(model, "config.json") }), 5e-4 * 4 ** 0.0775);
  close(getLr("alias", { resolveConfig: () => ({ model_type: "llama", hidden_size: 2000 }) }), 5e-4);
});

test("LR schedules: linear, cosine, constant", () => {
  assert.equal(computeScheduleLrMultiplier("linear", 0, 100), 1);
  assert.equal(computeScheduleLrMultiplier("linear", 25, 100), 0.75);
  assert.equal(computeScheduleLrMultiplier("cosine", 0, 100), 1);
  close(computeScheduleLrMultiplier("cosine", 50, 100), 0.5);
  close(computeScheduleLrMultiplier("cosine", 25, 100), 0.5 * (1 + Math.cos(Math.PI / 4)));
  assert.equal(computeScheduleLrMultiplier("constant", 99, 100), 1);
});
