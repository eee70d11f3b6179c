import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineRecipe, loadRecipe, type RecipeEntry } from "../../src/config/recipe.ts";
import { recipes } from "../../recipes/registry.ts";
import { listConfigFields } from "../../src/config/fields.ts";

test("loadRecipe imports lazily and suggests names for unknown recipes", async () => {
  let loaded = 0;
  const demo = defineRecipe({ name: "demo", description: "d", configSchema: z.object({}), main: async () => {} });
  const entries: RecipeEntry[] = [
    {
      name: "demo",
      description: "d",
      load: async () => {
        loaded++;
        return { default: demo };
      },
    },
    { name: "sl_basic", description: "s", load: async () => ({}) },
  ];
  assert.equal(loaded, 0);
  assert.equal(await loadRecipe(entries, "demo"), demo);
  assert.equal(loaded, 1);
  await assert.rejects(loadRecipe(entries, "sl_basc"), { name: "UsageError", message: 'unknown recipe "sl_basc"; closest: sl_basic (see cookbook recipes)' });
  await assert.rejects(loadRecipe(entries, "sl_basic"), { message: "recipe module for sl_basic exports neither default nor recipe" });
});

test("every registered recipe loads, matches its entry and has described, defaulted fields", async () => {
  for (const entry of recipes) {
    const recipe = await loadRecipe(recipes, entry.name);
    assert.equal(recipe.name, entry.name);
    assert.equal(recipe.description, entry.description);
    const parsed = recipe.configSchema.safeParse({});
    assert.ok(parsed.success, `${entry.name}: every field needs a default`);
    for (const field of listConfigFields(recipe.configSchema)) {
      assert.ok(field.description, `${entry.name}: ${field.path} needs .describe()`);
    }
  }
});
