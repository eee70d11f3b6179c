// Qwen3.5 as released: a qwen3_5 (multimodal) config whose decoder sits in text_config, and weights
// under model.language_model. beside a vision tower and an MTP head. The engine loads the decoder
// from it, and a merged export keeps the checkpoint's names.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getKernels } from "../../../src/engine/kernels/index.ts";
import { EngineModel } from "../../../src/engine/model/model.ts";
import { readSafetensors, readSafetensorsHeader, writeSafetensors } from "../../../src/engine/safetensors/index.ts";
import { loadModelDir } from "../../../src/engine/storage/loadModel.ts";
import { pairLoraTensors } from "../../../src/export/lora.ts";
import { writeMergedModel } from "../../../src/export/merged.ts";
import { tempDir } from "../helpers.ts";

const FIXTURE = join(import.meta.dirname, "..", "..", "..", "fixtures", "families", "qwen3_5_text");
const reference = JSON.parse(readFileSync(join(FIXTURE, "reference.json"), "utf8")) as { tokens: number[]; logprobs: number[] };

function logprobsOf(model: EngineModel, tokens: number[]): Float32Array {
  const input = {
    inputTokens: Int32Array.from(tokens.slice(0, -1)),
    lossInputs: { target_tokens: Int32Array.from(tokens.slice(1)), weights: new Float32Array(tokens.length - 1).fill(1) },
  };
  return model.forwardBackward([input], "cross_entropy", undefined, false).logprobs[0]!;
}

/** The fixture re-laid out as a Qwen3_5ForConditionalGeneration checkpoint. */
function multimodalCopy(dir: string): void {
  const text = JSON.parse(readFileSync(join(FIXTURE, "config.json"), "utf8")) as Record<string, unknown>;
  const config = {
    architectures: ["Qwen3_5ForConditionalGeneration"],
    model_type: "qwen3_5",
    text_config: text,
    vision_config: { depth: 1 },
    tie_word_embeddings: false,
  };
  writeFileSync(join(dir, "config.json"), JSON.stringify(config));
  const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [name, t] of readSafetensors(join(FIXTURE, "model.safetensors"))) {
    tensors.set(name.startsWith("model.") ? `model.language_model.${name.slice("model.".length)}` : name, { shape: t.shape, data: t.data as Float32Array });
  }
  tensors.set("model.visual.patch_embed.proj.weight", { shape: [4, 3], data: new Float32Array(12).fill(0.5) });
  tensors.set("mtp.fc.weight", { shape: [2, 2], data: new Float32Array(4) });
  writeSafetensors(join(dir, "model.safetensors"), tensors);
}

test("a qwen3_5 checkpoint (text_config, model.language_model. names, vision and MTP tensors) loads as the text model", () => {
  const { dir, cleanup } = tempDir("qwen35-");
  try {
    multimodalCopy(dir);
    const plain = loadModelDir(FIXTURE);
    const nested = loadModelDir(dir);
    assert.deepEqual(nested.config, plain.config);
    assert.deepEqual([...nested.weights.keys()].sort(), [...plain.weights.keys()].sort());
    const model = EngineModel.create(nested.config, nested.weights, { mode: "full", seed: 0 }, getKernels());
    const lp = logprobsOf(model, reference.tokens);
    assert.ok(
      lp.every((v, i) => Math.abs(v - reference.logprobs[i]!) < 1e-5),
      "logprobs differ from transformers'",
    );
  } finally {
    cleanup();
  }
});

test("a merged export of a qwen3_5 checkpoint keeps its names and carries the adapter", () => {
  const { dir, cleanup } = tempDir("qwen35-");
  try {
    const base = join(dir, "base");
    const out = join(dir, "merged");
    for (const d of [base, out]) mkdirSync(d);
    multimodalCopy(base);
    const { config, weights } = loadModelDir(base);
    const model = EngineModel.create(config, weights, { mode: "lora", rank: 2, seed: 4, trainAttn: true, trainMlp: true, trainUnembed: false }, getKernels());
    const trained = model.trainableTensors();
    let k = 0;
    for (const [name, t] of trained) if (name.includes("lora_B")) for (let i = 0; i < t.length; i++) t[i] = Math.sin(++k) * 0.1;
    model.loadTrainableTensors(trained);
    const shaped = new Map([...model.parameters()].map((t) => [t.name, { shape: [...t.shape], data: Float32Array.from(t.data) }]));
    const adapter = pairLoraTensors(shaped, 2, 32, "test");
    assert.ok(adapter.modules.has("model.layers.0.linear_attn.in_proj_qkv"));
    const result = writeMergedModel(base, adapter, out, { dtype: "fp32", maxShardBytes: 1 << 30 });
    assert.equal(result.mergedModules, adapter.modules.size);
    const names = [...readSafetensorsHeader(join(out, "model.safetensors")).entries.keys()];
    assert.ok(names.includes("model.language_model.layers.0.linear_attn.in_proj_qkv.weight") && names.includes("model.visual.patch_embed.proj.weight"));
    const merged = loadModelDir(out);
    const ours = logprobsOf(model, reference.tokens);
    const mergedLp = logprobsOf(EngineModel.create(merged.config, merged.weights, { mode: "full", seed: 0 }, getKernels()), reference.tokens);
    assert.ok(
      ours.every((v, i) => Math.abs(v - mergedLp[i]!) < 1e-4),
      "the merged model scores differently from the adapted one",
    );
    assert.ok(
      ours.some((v, i) => Math.abs(v - reference.logprobs[i]!) > 1e-3),
      "the adapter changed nothing",
    );
  } finally {
    cleanup();
  }
});
