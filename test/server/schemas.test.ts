// The request schemas accept both SDK serialisations (docs/protocol.md#request-serialisation): SDK 0.3–0.16 omit unset defaults
// (chunks without `type`, adam_params with only learning_rate) and send None as null; SDK ≥ 0.18
// send defaults and omit None. Both parse to the same record; genuinely bad bodies still fail.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  CreateModelSchema,
  CreateSamplingSessionSchema,
  CreateSessionSchema,
  ForwardSchema,
  LoadWeightsSchema,
  OptimStepSchema,
  SampleSchema,
  SaveWeightsForSamplerSchema,
  SaveWeightsSchema,
} from "../../src/server/schemas.ts";
import { dropNullFields } from "../../src/tinker/types.ts";
import type { z } from "zod";

function same<S extends z.ZodType>(schema: S, legacy: unknown, modern: unknown): z.output<S> {
  const a = schema.safeParse(legacy);
  assert.ok(a.success, `0.16 form refused: ${a.success ? "" : a.error.message}`);
  const b = schema.safeParse(modern);
  assert.ok(b.success, `≥ 0.18 form refused: ${b.success ? "" : b.error.message}`);
  assert.deepEqual(a.data, b.data);
  return a.data;
}

const TOKENS = [1, 5, 9];

test("a forward body: untyped chunks, null shape and loss_fn_config (0.16) equal the tagged form (≥ 0.18)", () => {
  const out = same(
    ForwardSchema,
    {
      forward_input: {
        data: [{ loss_fn_inputs: { target_tokens: { data: [5, 9, 33], dtype: "int64", shape: null } }, model_input: { chunks: [{ tokens: TOKENS }] } }],
        loss_fn: "cross_entropy",
        loss_fn_config: null,
      },
      model_id: "m",
      seq_id: 1,
    },
    {
      forward_input: {
        data: [
          { loss_fn_inputs: { target_tokens: { data: [5, 9, 33], dtype: "int64" } }, model_input: { chunks: [{ type: "encoded_text", tokens: TOKENS }] } },
        ],
        loss_fn: "cross_entropy",
      },
      model_id: "m",
      seq_id: 1,
      type: "forward",
    },
  );
  assert.deepEqual(out.forward_input.data[0]!.model_input.chunks[0], { type: "encoded_text", tokens: TOKENS });
  assert.equal(out.forward_input.loss_fn_config, undefined);
});

test("create_model: lora_config.seed null and user_metadata null mean unset; omitted flags default to true", () => {
  const out = same(
    CreateModelSchema,
    { session_id: "s", model_seq_id: 1, base_model: "tiny-chat", user_metadata: null, lora_config: { rank: 8, seed: null } },
    {
      session_id: "s",
      model_seq_id: 1,
      base_model: "tiny-chat",
      lora_config: { rank: 8, train_unembed: true, train_mlp: true, train_attn: true },
      type: "create_model",
    },
  );
  assert.equal(out.lora_config?.seed, undefined);
  assert.equal(out.lora_config?.train_mlp, true);
});

test("optim_step with only learning_rate gets the service's Adam defaults", () => {
  const out = same(
    OptimStepSchema,
    { adam_params: { learning_rate: 0.01 }, model_id: "m", seq_id: 5 },
    {
      adam_params: { learning_rate: 0.01, beta1: 0.9, beta2: 0.95, eps: 1e-12, weight_decay: 0, grad_clip_norm: 0 },
      model_id: "m",
      seq_id: 5,
      type: "optim_step",
    },
  );
  assert.equal(out.adam_params.beta2, 0.95);
});

test("sample, save, load and session bodies: null fields are unset", () => {
  const s = same(
    SampleSchema,
    {
      num_samples: 1,
      prompt: { chunks: [{ tokens: TOKENS }] },
      sampling_params: { max_tokens: 3, seed: null, stop: null },
      sampling_session_id: "x",
      seq_id: 0,
      prompt_logprobs: false,
      topk_prompt_logprobs: 0,
    },
    {
      num_samples: 1,
      prompt: { chunks: [{ type: "encoded_text", tokens: TOKENS }] },
      sampling_params: { max_tokens: 3, temperature: 1, top_k: -1, top_p: 1 },
      sampling_session_id: "x",
      seq_id: 0,
      type: "sample",
    },
  );
  assert.equal(s.sampling_params.stop, undefined);
  same(
    SaveWeightsSchema,
    { model_id: "m", path: "p", seq_id: 6, ttl_seconds: null },
    { model_id: "m", path: "p", seq_id: 6, overwrite: false, type: "save_weights" },
  );
  same(
    SaveWeightsForSamplerSchema,
    { model_id: "m", sampling_session_seq_id: 0, seq_id: 10, ttl_seconds: null },
    { model_id: "m", sampling_session_seq_id: 0, seq_id: 10, type: "save_weights_for_sampler" },
  );
  same(
    LoadWeightsSchema,
    { model_id: "m", path: "tinker://a/weights/b", seq_id: 7 },
    { model_id: "m", path: "tinker://a/weights/b", optimizer: false, seq_id: 7, type: "load_weights" },
  );
  same(
    CreateSamplingSessionSchema,
    { session_id: "s", sampling_session_seq_id: 1, base_model: null, model_path: "tinker://a/sampler_weights/b" },
    { session_id: "s", sampling_session_seq_id: 1, model_path: "tinker://a/sampler_weights/b", type: "create_sampling_session" },
  );
  same(
    CreateSessionSchema,
    { tags: [], user_metadata: {}, sdk_version: "0.16.1", project_id: null },
    { tags: [], user_metadata: {}, sdk_version: "0.16.1", type: "create_session" },
  );
});

test("bad bodies still fail, naming the field: a chunk with neither type nor content, a null required field, a wrong type", () => {
  const noContent = ForwardSchema.safeParse({
    model_id: "m",
    forward_input: { data: [{ model_input: { chunks: [{}] }, loss_fn_inputs: {} }], loss_fn: "cross_entropy" },
  });
  assert.equal(noContent.success, false);
  assert.match(JSON.stringify(noContent.error?.issues.map((i) => i.path)), /chunks/);
  const nullRequired = CreateModelSchema.safeParse({ session_id: "s", model_seq_id: 0, base_model: null });
  assert.equal(nullRequired.success, false);
  assert.deepEqual(nullRequired.error?.issues[0]?.path, ["base_model"]);
  const wrongType = OptimStepSchema.safeParse({ model_id: "m", adam_params: { learning_rate: "fast" } });
  assert.equal(wrongType.success, false);
  assert.deepEqual(wrongType.error?.issues[0]?.path, ["adam_params", "learning_rate"]);
  // A typed chunk of an unknown kind is not guessed at.
  const unknownType = SampleSchema.safeParse({ prompt: { chunks: [{ type: "video", tokens: [1] }] }, sampling_params: {} });
  assert.equal(unknownType.success, false);
});

test("dropNullFields keeps nulls inside lists (they are data) and leaves number arrays untouched", () => {
  const nums = [1, 2, 3];
  const out = dropNullFields({ a: null, b: { c: null, d: [null, { e: null, f: 1 }] }, n: nums }) as Record<string, unknown>;
  assert.deepEqual(out, { b: { d: [null, { f: 1 }] }, n: [1, 2, 3] });
  assert.equal(out["n"], nums, "number arrays are passed through without a copy");
});
