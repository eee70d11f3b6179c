// Opening a play session on a recipe: its config from key=value overrides, the model's tokenizer
// and renderer, the environments the recipe exports, and the first environment of the chosen
// batch and group. Shared by `cookbook play` and the TUI's Play screen.
import { UsageError } from "../config/errors.ts";
import { parseConfigArgs } from "../config/parse.ts";
import { loadRecipeModule, type RecipeEntry } from "../config/recipe.ts";
import { resolveRendererName } from "../modelInfo.ts";
import { getRenderer } from "../renderers/registry.ts";
import type { RLDatasetBuilder } from "../rl/types.ts";
import { getTokenizer } from "../tokenizers/index.ts";
import { firstEnv, PlaySession } from "./session.ts";

function isDatasetBuilder(x: unknown): x is RLDatasetBuilder {
  return typeof x === "object" && x !== null && typeof (x as { build?: unknown }).build === "function";
}

export interface OpenedPlay {
  session: PlaySession;
  rendererName: string;
}

export async function openPlay(
  entries: readonly RecipeEntry[],
  recipeName: string,
  args: readonly string[] = [],
  options: { batch?: number; group?: number } = {},
): Promise<OpenedPlay> {
  const { recipe, module } = await loadRecipeModule(entries, recipeName);
  const makeEnvironments = module.environments as ((config: unknown, setup: unknown) => unknown) | undefined;
  if (makeEnvironments === undefined) {
    throw new UsageError(
      `recipe ${recipeName} has no environment to play (RL recipes export one: guess_number, rl_basic, math_rl, tool_use, code_rl, search_tool, rubric, tic_tac_toe, twenty_questions)`,
    );
  }
  const config = parseConfigArgs(recipe.configSchema, [...args]) as { model_name: string; renderer_name: string | null };
  const tokenizer = await getTokenizer(config.model_name);
  const rendererName = resolveRendererName(config.model_name, config.renderer_name);
  const renderer = getRenderer(rendererName, tokenizer);
  const builder = await makeEnvironments(config, { renderer, rendererName, tokenizer });
  if (!isDatasetBuilder(builder)) throw new Error(`recipe ${recipeName}'s environments() did not return a dataset builder`);
  const { env, groupBuilder } = await firstEnv(builder, options.batch ?? 0, options.group ?? 0);
  return { session: await PlaySession.start(env, groupBuilder, tokenizer), rendererName };
}
