// overrideDefaults: a recipe changes a loop field's default without re-declaring it; type, help
// text and validation stay the loop's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { listConfigFields } from "../../src/config/fields.ts";
import { SupervisedConfigSchema } from "../../src/supervised/config.ts";
import { RLConfigSchema } from "../../src/rl/config.ts";
import { adapterFields, optimizerFields, overrideDefaults } from "../../src/training/config.ts";
import { recipes } from "../../recipes/registry.ts";

test("overrideDefaults replaces defaults, keeps descriptions and validation, and fills required fields", () => {
  const schema = overrideDefaults(RLConfigSchema.extend({ extra: z.number().default(1).describe("an env field") }), {
    log_path: "/tmp/x",
    learning_rate: 3e-3,
    max_tokens: 8,
    lora_rank: 4,
    extra: 2,
  });
  const parsed = schema.parse({});
  assert.equal(parsed.learning_rate, 3e-3);
  assert.equal(parsed.lora_rank, 4);
  assert.equal(parsed.extra, 2);
  assert.equal(parsed.group_size, RLConfigSchema.shape.group_size.parse(undefined), "untouched fields keep the loop's default");
  assert.equal(schema.shape.learning_rate.description, RLConfigSchema.shape.learning_rate.description);
  assert.equal(schema.shape.lora_rank.description, RLConfigSchema.shape.lora_rank.description);
  assert.throws(() => schema.parse({ lora_rank: 0 }), "the loop's validation still applies");
  const help = listConfigFields(schema).find((f) => f.path === "learning_rate");
  assert.equal(help?.default, 3e-3);
});

test("overrideDefaults refuses an unknown key or a default that does not fit", () => {
  assert.throws(() => overrideDefaults(SupervisedConfigSchema, { no_such_field: 1 } as never), /no field "no_such_field"/);
  assert.throws(() => overrideDefaults(SupervisedConfigSchema, { lora_rank: -1 }), /lora_rank/);
});

test("each loop declares learning rate and LoRA rank once; recipes inherit them", async () => {
  const { recipes } = await import("../../recipes/registry.ts");
  const { loadRecipe } = await import("../../src/config/recipe.ts");
  for (const name of ["sl_basic", "chat_sl", "rl_basic", "math_rl", "guess_number"]) {
    const recipe = await loadRecipe(recipes, name);
    const loop = name.startsWith("sl") || name === "chat_sl" ? SupervisedConfigSchema : RLConfigSchema;
    const shape = recipe.configSchema.shape as Record<string, z.ZodType>;
    for (const key of ["learning_rate", "lora_rank", "seed", "save_every"]) {
      assert.equal(shape[key]!.description, loop.shape[key as keyof typeof loop.shape].description, `${name}.${key} is the loop's field`);
    }
  }
});

test("a LoRA rank that is not a power of two is refused when the config is parsed, before any run directory exists", () => {
  const schema = z.object(adapterFields);
  const error = schema.safeParse({ lora_rank: 24 });
  assert.equal(error.success, false);
  assert.match(error.error?.issues[0]?.message ?? "", /power of two/);
  assert.deepEqual(error.error?.issues[0]?.path, ["lora_rank"]);
  assert.equal(schema.parse({ lora_rank: 16 }).lora_rank, 16);
});

test("every training recipe declares the optimizer once: learning_rate and Adam's constants from optimizerFields", async () => {
  const optimizerKeys = Object.keys(optimizerFields);
  let training = 0;
  for (const entry of recipes) {
    const recipe = (await entry.load()).default;
    assert.ok(recipe !== undefined, entry.name);
    const shape = (recipe.configSchema as z.ZodObject).shape as Record<string, z.ZodType>;
    if (!("lora_rank" in shape) || !("learning_rate" in shape)) continue;
    training += 1;
    for (const key of optimizerKeys) {
      assert.ok(key in shape, `${entry.name}: no ${key}`);
      assert.equal(shape[key]!.description, (optimizerFields as Record<string, z.ZodType>)[key]!.description, `${entry.name}.${key}: declared again`);
    }
    assert.equal(shape["lora_rank"]!.safeParse(24).success, false, `${entry.name}: lora_rank=24 is accepted`);
  }
  assert.ok(training >= 17, `only ${training} training recipes found`);
});
