import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { listConfigFields } from "../../src/config/fields.ts";
import { formatConfigHelp } from "../../src/config/help.ts";
import { closestMatches, editDistance } from "../../src/config/suggest.ts";

const schema = z.object({
  model_name: z.string().describe("Base model"),
  lr: z.number().default(0.001).describe("Learning rate"),
  schedule: z.enum(["linear", "cosine"]).default("linear").describe("LR schedule"),
  max_steps: z.number().int().nullable().default(null),
  tag: z.string().optional(),
  nested: z.object({ k: z.number().int().default(2).describe("inner k"), flag: z.boolean() }).default({ k: 2, flag: true }),
  efforts: z.array(z.number()).default([0.5]),
});

test("listConfigFields flattens nested objects with dotted paths, in schema order", () => {
  const fields = listConfigFields(schema);
  assert.deepEqual(
    fields.map((f) => f.path),
    ["model_name", "lr", "schedule", "max_steps", "tag", "nested.k", "nested.flag", "efforts"],
  );
  const byPath = Object.fromEntries(fields.map((f) => [f.path, f]));
  assert.equal(byPath.model_name.required, true);
  assert.equal(byPath.model_name.description, "Base model");
  assert.equal(byPath.lr.kind, "number");
  assert.equal(byPath.lr.default, 0.001);
  assert.deepEqual(byPath.schedule.options, ["linear", "cosine"]);
  assert.equal(byPath.schedule.type, "linear | cosine");
  assert.equal(byPath.max_steps.kind, "integer");
  assert.equal(byPath.max_steps.nullable, true);
  assert.equal(byPath.max_steps.type, "integer | null");
  assert.equal(byPath.tag.optional, true);
  assert.equal(byPath.tag.required, false);
  assert.equal(byPath["nested.k"].description, "inner k");
  // A leaf without its own default takes the enclosing object's default.
  assert.equal(byPath["nested.flag"].hasDefault, true);
  assert.equal(byPath["nested.flag"].default, true);
  assert.equal(byPath.efforts.type, "list[number]");
  assert.deepEqual(byPath.efforts.default, [0.5]);
});

test("help text lists every field with type, default and description", () => {
  const help = formatConfigHelp({ name: "demo", description: "A demo recipe", configSchema: schema });
  assert.match(help, /^demo: A demo recipe\n/);
  assert.match(help, /\n {2}model_name: string \(required\)\n {6}Base model\n/);
  assert.match(help, /\n {2}lr: number = 0\.001\n {6}Learning rate\n/);
  assert.match(help, /\n {2}schedule: linear \| cosine = "linear"\n/);
  assert.match(help, /\n {2}nested\.k: integer = 2\n {6}inner k\n/);
  assert.match(help, /\n {2}tag: string \(optional\)/);
  assert.match(help, /\n {2}efforts: list\[number\] = \[0\.5\]/);
});

test("edit distance and closest matches", () => {
  assert.equal(editDistance("kitten", "sitting"), 3);
  assert.equal(editDistance("", "abc"), 3);
  assert.deepEqual(closestMatches("lr_shedule", ["lr_schedule", "learning_rate", "lora_rank"]), ["lr_schedule"]);
  assert.deepEqual(closestMatches("rank", ["a.rank", "b.rank", "zzzzzz"]), ["a.rank", "b.rank"]);
});
