// What every RL recipe does around its environment: load the tokenizer and renderer for the
// model, build the recipe's dataset, and run the RL loop with transcripts decoded to text. A
// recipe's config is the loop's schema extended with its environment's fields, so it is handed to
// the loop as it is.
import { resolveRendererName } from "../modelInfo.ts";
import type { Renderer } from "../renderers/base.ts";
import { getRenderer } from "../renderers/registry.ts";
import type { RecipeContext } from "../config/recipe.ts";
import { getTokenizer, type Tokenizer } from "../tokenizers/index.ts";
import type { RLConfig } from "./config.ts";
import { main as rlMain, type RLMainOptions, type RLRunResult } from "./train.ts";
import type { RLDatasetBuilder } from "./types.ts";

export interface RLRecipeSetup {
  renderer: Renderer;
  rendererName: string;
  tokenizer: Tokenizer;
}

/** Builds the recipe's dataset with the model's renderer and runs the RL loop. */
export async function runRLRecipe(
  config: RLConfig,
  makeDataset: (setup: RLRecipeSetup) => RLDatasetBuilder | Promise<RLDatasetBuilder>,
  context?: RecipeContext,
  options: Omit<RLMainOptions, "decode" | "context"> = {},
): Promise<RLRunResult> {
  const tokenizer = await getTokenizer(config.model_name);
  const rendererName = resolveRendererName(config.model_name, config.renderer_name);
  const renderer = getRenderer(rendererName, tokenizer);
  const datasetBuilder = await makeDataset({ renderer, rendererName, tokenizer });
  return rlMain(config, datasetBuilder, { ...options, context, decode: (tokens: readonly number[]) => tokenizer.decode(tokens) });
}
