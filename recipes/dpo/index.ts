// Direct Preference Optimization (the cookbook's preference/dpo recipe): LoRA training on labeled
// comparisons with the DPO loss against a frozen snapshot of the initial weights. Default data:
// the shipped pirate-style comparisons, which tiny-chat has never seen, so held-out pair accuracy
// climbs from chance within a minute or two; dataset=hhh|helpsteer3|ultrafeedback load the hub sets.
import { z } from "zod";
import { chatDatasetFields } from "../../src/supervised/datasetSpec.ts";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { resolveRendererName } from "../../src/modelInfo.ts";
import { comparisonSourceFields, loadComparisons } from "../../src/preference/datasets.ts";
import { dpoDatasetBuilder } from "../../src/preference/dpoData.ts";
import { DpoConfigSchema, main as dpoMain } from "../../src/preference/train.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { overrideDefaults } from "../../src/training/config.ts";

export const configSchema = overrideDefaults(
  DpoConfigSchema.extend({
    ...comparisonSourceFields,
    batch_size: chatDatasetFields.batch_size,
    max_length: z.number().int().positive().nullable().default(512).describe("Truncate each sequence to this many tokens"),
  }),
  { batch_size: 16, log_path: "/tmp/tinker-examples/dpo", learning_rate: 2e-4, lora_rank: 16, max_steps: 60, eval_every: 5, save_every: 20 },
);
export type DpoRecipeConfig = z.output<typeof configSchema>;

async function main(config: DpoRecipeConfig, context?: RecipeContext): Promise<void> {
  const renderer = getRenderer(resolveRendererName(config.model_name, config.renderer_name), await getTokenizer(config.model_name));
  await dpoMain(
    config,
    dpoDatasetBuilder(() => loadComparisons(config), renderer, config.batch_size, config.max_length),
    { context },
  );
}

export default defineRecipe({
  name: "dpo",
  description: "Direct Preference Optimization on labeled comparisons (default: shipped pirate-style pairs; hhh, helpsteer3, ultrafeedback from the hub)",
  configSchema,
  main,
});
