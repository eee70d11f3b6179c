// Direct Preference Optimization (the cookbook's preference/dpo recipe): LoRA training on labeled
// comparisons with the DPO loss against a frozen snapshot of the initial weights. Default data:
// the shipped pirate-style comparisons, which tiny-chat has never seen, so held-out pair accuracy
// climbs from chance within a minute or two; dataset=hhh|helpsteer3|ultrafeedback load the hub sets.
import { z } from "zod";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { resolveRendererName } from "../../src/modelInfo.ts";
import { comparisonSourceFields, loadComparisons } from "../../src/preference/datasets.ts";
import { dpoDatasetBuilder } from "../../src/preference/dpoData.ts";
import { DpoConfigSchema, main as dpoMain } from "../../src/preference/train.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { createServiceClient } from "../../src/service.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";

export const configSchema = DpoConfigSchema.omit({ recipe_name: true }).extend({
  log_path: z.string().default("/tmp/tinker-examples/dpo").describe("Run directory (metrics.jsonl, checkpoints.jsonl, logs.log)"),
  model_name: z.string().default("tiny-chat").describe("Base model: a shipped fixture name, a local HF folder, or a hub id"),
  learning_rate: z.number().positive().default(2e-4).describe("Peak learning rate"),
  lora_rank: z.number().int().positive().default(16).describe("LoRA rank"),
  max_steps: z.number().int().positive().nullable().default(60).describe("Stop after this many steps (null: num_epochs over the data)"),
  eval_every: z.number().int().min(0).default(5).describe("Held-out DPO metrics and test/nll every N steps"),
  save_every: z.number().int().min(0).default(20).describe("Checkpoint every N steps"),
  ...comparisonSourceFields,
  batch_size: z.number().int().positive().default(16).describe("Comparisons per step (two datums each)"),
  max_length: z.number().int().positive().nullable().default(512).describe("Truncate each sequence to this many tokens"),
});
export type DpoRecipeConfig = z.output<typeof configSchema>;

async function main(config: DpoRecipeConfig, context?: RecipeContext): Promise<void> {
  const rendererName = resolveRendererName(config.model_name, config.renderer_name);
  const renderer = getRenderer(rendererName, await getTokenizer(config.model_name));
  const service = await createServiceClient(config.base_url !== null ? { baseUrl: config.base_url } : {});
  try {
    await dpoMain(
      { ...config, recipe_name: "dpo", renderer_name: rendererName },
      dpoDatasetBuilder(() => loadComparisons(config), renderer, config.batch_size, config.max_length),
      service,
      context !== undefined ? { argv: context.argv, commandLine: context.commandLine } : {},
    );
  } finally {
    await service.close();
  }
}

export default defineRecipe({
  name: "dpo",
  description: "Direct Preference Optimization on labeled comparisons (default: shipped pirate-style pairs; hhh, helpsteer3, ultrafeedback from the hub)",
  configSchema,
  main,
});
