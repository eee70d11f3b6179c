// Every JSON response schema the HTTP client reads, fed its documented shape (the official SDK's
// types: every field present) and, for each optional field found by walking the schema, that
// field as null, absent and present; each required field as null; unknown fields everywhere.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { parseResponse } from "../../../src/tinker/http/context.ts";
import { RESPONSE_SCHEMAS } from "../../../src/tinker/types.ts";

type Json = unknown;
type Path = (string | number)[];

const checkpoint = {
  checkpoint_id: "weights/step_10",
  checkpoint_type: "training",
  time: "2026-11-26T10:00:00Z",
  tinker_path: "tinker://run-1/weights/step_10",
  size_bytes: 1024,
  public: true,
  expires_at: "2026-12-26T10:00:00Z",
};
const trainingRun = {
  training_run_id: "run-1",
  base_model: "Qwen/Qwen3-4B",
  model_owner: "me",
  is_lora: true,
  corrupted: true,
  lora_rank: 32,
  last_request_time: "2026-11-26T10:00:00Z",
  last_checkpoint: checkpoint,
  last_sampler_checkpoint: { ...checkpoint, checkpoint_type: "sampler", tinker_path: "tinker://run-1/sampler_weights/s" },
  user_metadata: { recipe_name: "sl_basic" },
};
const cursor = { offset: 0, limit: 20, total_count: 1 };

/** The documented shape of each response with every field present (extra `type` tags as sent). */
const DOCUMENTED: Record<keyof typeof RESPONSE_SCHEMAS, Json> = {
  UntypedFuture: { request_id: "req-1", model_id: "run-1" },
  CreateSessionResponse: { type: "create_session", session_id: "s", info_message: "hi", warning_message: "careful", error_message: "oops" },
  CreateModelResponse: { type: "create_model", model_id: "run-1" },
  CreateSamplingSessionResponse: { type: "create_sampling_session", sampling_session_id: "samp-1" },
  GetSamplerResponse: { sampler_id: "samp-1", base_model: "Qwen/Qwen3-4B", model_path: "tinker://run-1/sampler_weights/s" },
  ServerCapabilities: { supported_models: [{ model_name: "Qwen/Qwen3-4B", max_context_length: 32768 }], max_lora_rank: 64 },
  GetInfoResponse: {
    type: "get_info",
    model_data: { arch: "qwen3", model_name: "Qwen/Qwen3-4B", tokenizer_id: "Qwen/Qwen3-4B" },
    model_id: "run-1",
    is_lora: true,
    lora_rank: 32,
    model_name: "Qwen/Qwen3-4B",
  },
  ForwardBackwardOutput: {
    loss_fn_output_type: "CrossEntropyLossReturn",
    loss_fn_outputs: [
      {
        logprobs: { data: [-0.5, -1], dtype: "float32", shape: [2], sparse_crow_indices: [0, 2], sparse_col_indices: [0, 1] },
      },
    ],
    metrics: { "loss:sum": 1.5 },
  },
  OptimStepResponse: { metrics: { "lr:mean": 0.001 } },
  SaveWeightsResponse: { type: "save_weights", path: "tinker://run-1/weights/step_10" },
  LoadWeightsResponse: { type: "load_weights", path: "tinker://run-1/weights/step_10", model_id: "run-2" },
  SaveWeightsForSamplerResponse: { type: "save_weights_for_sampler", path: "tinker://run-1/sampler_weights/s", sampling_session_id: "samp-2" },
  SampleResponse: {
    type: "sample",
    sequences: [{ stop_reason: "stop", tokens: [5, 6], logprobs: [-0.1, -0.2] }],
    prompt_logprobs: [null, -1.5],
    topk_prompt_logprobs: [
      null,
      [
        [3, -0.1],
        [4, -2.5],
      ],
    ],
    prompt_cache_hit_tokens: 1,
  },
  WeightsInfo: { base_model: "Qwen/Qwen3-4B", is_lora: true, lora_rank: 32, train_unembed: false, train_mlp: true, train_attn: true },
  TrainingRun: trainingRun,
  TrainingRunsList: { training_runs: [trainingRun], cursor },
  CheckpointsList: { checkpoints: [checkpoint], cursor },
  CheckpointArchiveUrlResponse: { url: "https://dl.example/a.tar", expires: "2026-11-26T11:00:00Z" },
};

interface Field {
  path: Path;
  optional: boolean;
  nullable: boolean;
}

/** Strips optional/default/nullable layers, noting which were there. */
function peel(s: z.ZodType): { inner: z.ZodType; optional: boolean; nullable: boolean } {
  let inner = s;
  let optional = false;
  let nullable = false;
  for (;;) {
    if (inner instanceof z.ZodOptional || inner instanceof z.ZodDefault) optional = true;
    else if (inner instanceof z.ZodNullable) nullable = true;
    else return { inner, optional, nullable };
    inner = (inner as z.ZodOptional<z.ZodType>).unwrap() as z.ZodType;
  }
}

/** Every object field of `schema` reachable through `example` (arrays by their first element, records by their first key). */
function fields(schema: z.ZodType, example: Json, path: Path = []): Field[] {
  const { inner } = peel(schema);
  const out: Field[] = [];
  if (inner instanceof z.ZodObject && typeof example === "object" && example !== null) {
    for (const [key, fieldSchema] of Object.entries(inner.shape as Record<string, z.ZodType>)) {
      const p = peel(fieldSchema);
      out.push({ path: [...path, key], optional: p.optional, nullable: p.nullable });
      out.push(...fields(fieldSchema, (example as Record<string, Json>)[key], [...path, key]));
    }
  } else if (inner instanceof z.ZodArray && Array.isArray(example) && example.length > 0) {
    out.push(...fields(inner.element as z.ZodType, example[0], [...path, 0]));
  } else if (inner instanceof z.ZodRecord && typeof example === "object" && example !== null) {
    const first = Object.keys(example)[0];
    if (first !== undefined) out.push(...fields(inner.valueType as z.ZodType, (example as Record<string, Json>)[first], [...path, first]));
  }
  return out;
}

function getAt(v: Json, path: Path): Json {
  let cur = v;
  for (const k of path) {
    if (typeof cur !== "object" || cur === null) return undefined;
    cur = (cur as Record<string | number, Json>)[k];
  }
  return cur;
}

/** A deep copy with the value at `path` replaced (`undefined` deletes the key). */
function withAt(v: Json, path: Path, value: Json | undefined): Json {
  const copy = structuredClone(v);
  const parent = getAt(copy, path.slice(0, -1)) as Record<string | number, Json>;
  const last = path[path.length - 1]!;
  if (value === undefined) delete parent[last];
  else parent[last] = value;
  return copy;
}

/** Adds an unknown field to every object the schema declares with fixed keys (not to records). */
function withUnknownFields(schema: z.ZodType, v: Json): Json {
  const { inner } = peel(schema);
  if (inner instanceof z.ZodArray && Array.isArray(v)) return v.map((x) => withUnknownFields(inner.element as z.ZodType, x));
  if (inner instanceof z.ZodRecord && typeof v === "object" && v !== null) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, withUnknownFields(inner.valueType as z.ZodType, x)]));
  }
  if (!(inner instanceof z.ZodObject) || typeof v !== "object" || v === null) return v;
  const shape = inner.shape as Record<string, z.ZodType>;
  const out: Record<string, Json> = { field_from_a_newer_server: { nested: [1, null] } };
  for (const [k, x] of Object.entries(v)) out[k] = shape[k] === undefined ? x : withUnknownFields(shape[k], x);
  return out;
}

const hasUnknown = (v: Json): boolean =>
  Array.isArray(v) ? v.some(hasUnknown) : typeof v === "object" && v !== null && ("field_from_a_newer_server" in v || Object.values(v).some(hasUnknown));

test("every response schema has a documented shape to test, and every http module reads its answers through types.ts", () => {
  assert.deepEqual(Object.keys(DOCUMENTED).sort(), Object.keys(RESPONSE_SCHEMAS).sort());
  const dir = join(import.meta.dirname, "../../../src/tinker/http");
  for (const f of readdirSync(dir).filter((n) => n.endsWith(".ts"))) {
    assert.doesNotMatch(
      readFileSync(join(dir, f), "utf8"),
      /z\.object\(/,
      `${f} declares its own response schema; add it to RESPONSE_SCHEMAS in src/tinker/types.ts`,
    );
  }
});

for (const [name, schema] of Object.entries(RESPONSE_SCHEMAS) as [keyof typeof RESPONSE_SCHEMAS, z.ZodType][]) {
  test(`${name}: documented shape, each optional field null/absent/present, each required field null, unknown fields`, () => {
    const doc = DOCUMENTED[name];
    const full = parseResponse(schema, doc, name) as Json;
    const all = fields(schema, doc);
    const optional = all.filter((f) => f.optional);
    assert.ok(all.length > 0, `${name}: no fields found`);
    for (const f of all) {
      const at = f.path.join(".");
      // null is read as absent, so a field that may be null must also be allowed to be absent.
      assert.ok(!f.nullable || f.optional, `${name}.${at} is nullable but required; make it optional`);
      assert.notEqual(getAt(doc, f.path), undefined, `${name}: the documented shape lacks ${at}`);
    }
    for (const f of optional) {
      const at = f.path.join(".");
      const absent = parseResponse(schema, withAt(doc, f.path, undefined), name) as Json;
      const asNull = parseResponse(schema, withAt(doc, f.path, null), name) as Json;
      assert.deepEqual(asNull, absent, `${name}.${at}: null must read like an absent field`);
      assert.deepEqual(getAt(full, f.path), getAt(doc, f.path), `${name}.${at}: a present value must be kept`);
    }
    for (const f of all.filter((x) => !x.optional)) {
      const at = f.path.join(".");
      assert.throws(
        () => parseResponse(schema, withAt(doc, f.path, null), name),
        (err: Error) => err.message.includes(`from ${name}: ${at}:`) && err.message.includes("(the server sent null)"),
        `${name}.${at}: a null required field must be an error naming it`,
      );
    }
    const extra = parseResponse(schema, withUnknownFields(schema, doc), name) as Json;
    assert.equal(hasUnknown(extra), false, `${name}: unknown fields must be dropped`);
    assert.deepEqual(extra, full);
  });
}
