import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { ConfigError } from "../../src/config/errors.ts";
import { parseConfigArgs, splitAssignment } from "../../src/config/parse.ts";

const schema = z.object({
  log_path: z.string().default("/tmp/run").describe("where"),
  learning_rate: z.number().default(1e-4),
  batch_size: z.number().int().default(128),
  use_kl: z.boolean().default(false),
  lr_schedule: z.enum(["linear", "cosine", "constant"]).default("linear"),
  max_steps: z.number().int().nullable().default(null),
  wandb_project: z.string().optional(),
  efforts: z.array(z.number()).default([]),
  stream_minibatch: z.object({ num_minibatches: z.number().int().default(1), groups_per_batch: z.number().int().default(4) }).optional(),
  renderer: z.object({ name: z.string().default("llama3"), extra: z.record(z.string(), z.number()).default({}) }).prefault({}),
});

test("defaults fill in when no arguments are given", () => {
  const c = parseConfigArgs(schema, []);
  assert.equal(c.learning_rate, 1e-4);
  assert.equal(c.max_steps, null);
  assert.equal(c.wandb_project, undefined);
  assert.equal(c.stream_minibatch, undefined);
  assert.deepEqual(c.renderer, { name: "llama3", extra: {} });
});

test("values are coerced by the schema: numbers, booleans, enums, nullable, optional", () => {
  const c = parseConfigArgs(schema, [
    "learning_rate=3e-5",
    "batch_size=64",
    "use_kl=true",
    "lr_schedule=cosine",
    "max_steps=10",
    "wandb_project=proj",
    "log_path=/tmp/a=b",
  ]);
  assert.equal(c.learning_rate, 3e-5);
  assert.equal(c.batch_size, 64);
  assert.equal(c.use_kl, true);
  assert.equal(c.lr_schedule, "cosine");
  assert.equal(c.max_steps, 10);
  assert.equal(c.wandb_project, "proj");
  assert.equal(c.log_path, "/tmp/a=b", "only the first = splits");
  assert.equal(parseConfigArgs(schema, ["max_steps=null"]).max_steps, null);
  assert.equal(parseConfigArgs(schema, ["max_steps=None"]).max_steps, null);
  assert.equal(parseConfigArgs(schema, ["use_kl=False"]).use_kl, false);
});

test("dotted keys build nested objects and inner defaults apply", () => {
  const c = parseConfigArgs(schema, ["stream_minibatch.num_minibatches=2", "renderer.name=qwen3"]);
  assert.deepEqual(c.stream_minibatch, { num_minibatches: 2, groups_per_batch: 4 });
  assert.equal(c.renderer.name, "qwen3");
});

test("lists and objects are JSON literals; a whole nested object can be given as JSON", () => {
  const c = parseConfigArgs(schema, ["efforts=[0.0,0.3]", 'renderer.extra={"a":1}', 'stream_minibatch={"groups_per_batch":8}']);
  assert.deepEqual(c.efforts, [0, 0.3]);
  assert.deepEqual(c.renderer.extra, { a: 1 });
  assert.deepEqual(c.stream_minibatch, { num_minibatches: 1, groups_per_batch: 8 });
});

test("later arguments override earlier ones", () => {
  assert.equal(parseConfigArgs(schema, ["batch_size=1", "batch_size=2"]).batch_size, 2);
});

test("unknown key names the key and the closest valid keys", () => {
  assert.throws(() => parseConfigArgs(schema, ["lerning_rate=1"]), {
    name: "ConfigError",
    message: 'unknown config key "lerning_rate"; closest valid keys: learning_rate',
  });
  assert.throws(() => parseConfigArgs(schema, ["num_minibatches=2"]), {
    message: 'unknown config key "num_minibatches"; closest valid keys: stream_minibatch.num_minibatches',
  });
});

test("bad values name key, value and expected type", () => {
  const cases: [string, string][] = [
    ["batch_size=abc", 'invalid value for batch_size: "abc" (expected an integer)'],
    ["batch_size=1.5", 'invalid value for batch_size: "1.5" (expected an integer)'],
    ["learning_rate=fast", 'invalid value for learning_rate: "fast" (expected a number)'],
    ["use_kl=maybe", 'invalid value for use_kl: "maybe" (expected true or false)'],
    ["lr_schedule=step", 'invalid value for lr_schedule: "step" (expected one of linear, cosine, constant)'],
    ["efforts=0.3", 'invalid value for efforts: "0.3" (expected a JSON list like [1,2] of list[number])'],
    ["stream_minibatch={bad", 'invalid value for stream_minibatch: "{bad" (expected a JSON object)'],
  ];
  for (const [arg, message] of cases) assert.throws(() => parseConfigArgs(schema, [arg]), { name: "ConfigError", message }, arg);
});

test("schema checks after coercion report the key and value", () => {
  assert.throws(
    () => parseConfigArgs(schema, ['efforts=["a"]']),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /^invalid value for efforts: "\["a"\]" \(expected list\[number\]; at efforts\.0: /);
      return true;
    },
  );
  const bounded = z.object({ n: z.number().int().min(1).default(1) });
  assert.throws(() => parseConfigArgs(bounded, ["n=0"]), { message: /^invalid value for n: "0" \(expected integer: Too small/ });
});

test("missing required key is reported", () => {
  const s = z.object({ model_name: z.string().describe("model") });
  assert.throws(() => parseConfigArgs(s, []), { message: "missing required config key model_name (string)" });
});

test("arguments without = are rejected", () => {
  assert.throws(() => splitAssignment("learning_rate"), { message: 'expected key=value, got "learning_rate"' });
  assert.throws(() => parseConfigArgs(schema, ["=3"]), { message: 'expected key=value, got "=3"' });
});
