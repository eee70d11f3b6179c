// What a recipe module exports, and the registry entry that loads it lazily.
import type { z } from "zod";
import { UsageError } from "./errors.ts";
import { closestMatches } from "./suggest.ts";

/** The `key=value` context a recipe was launched with, so it can record it in run.json/logs.log. */
export interface RecipeContext {
  /** The arguments after the recipe name, as typed. */
  argv: readonly string[];
  /** The whole command line (for logs.log and run.json). */
  commandLine: string;
  /** The recipe's registered name; filled in by defineRecipe, so recipes never repeat it. */
  recipeName?: string;
}

export interface Recipe<S extends z.ZodObject = z.ZodObject> {
  name: string;
  /** One line, shown by `cookbook recipes`. */
  description: string;
  /** Every field has `.default()` (or is optional) and `.describe()`: this is the help text. */
  configSchema: S;
  main(config: z.output<S>, context?: RecipeContext): Promise<void>;
}

/** Infers the config type of `main` from the schema, and hands `main` the recipe's name in its context. */
export function defineRecipe<S extends z.ZodObject>(recipe: Recipe<S>): Recipe<S> {
  return {
    ...recipe,
    main: (config, context) => recipe.main(config, { argv: [], commandLine: recipe.name, ...context, recipeName: recipe.name }),
  };
}

/** A line in recipes/registry.ts: listing recipes never imports them. */
export interface RecipeEntry {
  name: string;
  description: string;
  /** Resolves to a module whose default export (or `recipe` export) is the Recipe. */
  load: () => Promise<RecipeModule>;
}

export interface RecipeModule {
  default?: Recipe;
  recipe?: Recipe;
  /**
   * RL recipes: the environments their loop trains in, built from the parsed config and the
   * model's renderer and tokenizer (the function the recipe hands its loop), for `cookbook play`.
   * Typed loosely here because the config layer sits below the RL layer; src/play checks it.
   */
  environments?: (config: never, setup: never) => unknown;
}

/** Finds and imports a recipe's module by name; unknown names get the closest registered names. */
export async function loadRecipeModule(entries: readonly RecipeEntry[], name: string): Promise<{ recipe: Recipe; module: RecipeModule }> {
  const entry = entries.find((e) => e.name === name);
  if (!entry) {
    const suggestions = closestMatches(
      name,
      entries.map((e) => e.name),
    );
    throw new UsageError(`unknown recipe "${name}"; closest: ${suggestions.join(", ")} (see cookbook recipes)`);
  }
  const mod = await entry.load();
  const recipe = mod.default ?? mod.recipe;
  if (!recipe) throw new Error(`recipe module for ${name} exports neither default nor recipe`);
  return { recipe, module: mod };
}

/** Finds and imports a recipe by name; unknown names get the closest registered names. */
export async function loadRecipe(entries: readonly RecipeEntry[], name: string): Promise<Recipe> {
  return (await loadRecipeModule(entries, name)).recipe;
}
