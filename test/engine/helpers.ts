// Shared helpers of the engine tests: a tiny random decoder written in Hugging Face format, temp
// folders, and datums for it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseModelConfig } from "../../src/engine/model/config.ts";
import { EngineModel } from "../../src/engine/model/model.ts";
import { writeModelSafetensors, writeSafetensors } from "../../src/engine/safetensors/index.ts";
import { expectedTensorShapes } from "../../src/engine/model/config.ts";
import type { Datum } from "../../src/tinker/types.ts";

export const TINY_VOCAB = 64;

export function tinyConfigJson(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model_type: "llama",
    architectures: ["LlamaForCausalLM"],
    vocab_size: TINY_VOCAB,
    hidden_size: 32,
    intermediate_size: 64,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: 8,
    rms_norm_eps: 1e-5,
    rope_theta: 10000,
    max_position_embeddings: 128,
    tie_word_embeddings: false,
    hidden_act: "silu",
    ...overrides,
  };
}

export function tempDir(prefix = "engine-test-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Random HF weights for the tiny config, with their shapes. */
export function tinyWeights(seed = 1, configJson = tinyConfigJson()): Map<string, { shape: number[]; data: Float32Array }> {
  const config = parseModelConfig(configJson, "tiny config");
  const weights = EngineModel.randomWeights(config, seed);
  const shapes = expectedTensorShapes(config);
  const out = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [name, data] of weights) out.set(name, { shape: shapes.get(name) ?? [data.length], data });
  return out;
}

/** Writes a tiny model folder: config.json plus one file or shards, in F32 or BF16. */
export function writeTinyModel(
  dir: string,
  options: { seed?: number; dtype?: "F32" | "BF16"; sharded?: boolean; configJson?: Record<string, unknown> } = {},
): Map<string, { shape: number[]; data: Float32Array }> {
  const configJson = options.configJson ?? tinyConfigJson();
  mkdirSync(dir, { recursive: true });
  const tensors = tinyWeights(options.seed ?? 1, configJson);
  writeFileSync(join(dir, "config.json"), JSON.stringify(configJson, null, 2));
  if (options.sharded) writeModelSafetensors(dir, tensors, { dtype: options.dtype, maxShardBytes: 8 * 1024 });
  else writeSafetensors(join(dir, "model.safetensors"), tensors, { dtype: options.dtype, metadata: { format: "pt" } });
  return tensors;
}

/** A cross-entropy datum over `tokens`: input tokens[0..n-1], targets tokens[1..n]. */
export function ceDatum(tokens: number[], weights?: number[]): Datum {
  const input = tokens.slice(0, -1);
  const targets = tokens.slice(1);
  return {
    model_input: { chunks: [{ type: "encoded_text", tokens: input }] },
    loss_fn_inputs: {
      target_tokens: { data: targets, dtype: "int64", shape: [targets.length] },
      weights: { data: weights ?? targets.map(() => 1), dtype: "float32", shape: [targets.length] },
    },
  };
}

export function randomTokens(n: number, seed: number): number[] {
  let s = seed >>> 0;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out.push(s % TINY_VOCAB);
  }
  return out;
}
