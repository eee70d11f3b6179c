// Trains a preference (reward) model: a LoRA that reads a prompt and two completions and answers
// "A" or "B" (the cookbook's reward-model stage, on its own). Reports test/pm_accuracy — the
// greedy verdict's agreement with held-out labels — every eval_every steps. Default data: the
// shipped concise-vs-rambling comparisons; hhh / helpsteer3 / ultrafeedback load the hub sets.
import { join } from "node:path";
import { z } from "zod";
import { LogDirBehaviorSchema } from "../../src/config/common.ts";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { comparisonSourceFields } from "../../src/preference/datasets.ts";
import { openPipeline, preferenceModelStage } from "../../src/preference/rlhf.ts";

export const configSchema = z.object({
  log_path: z.string().default("/tmp/tinker-examples/preference_model").describe("Run directory"),
  model_name: z.string().default("tiny-chat").describe("Base model"),
  renderer_name: z.string().nullable().default(null).describe("Chat format (default: the model's recommended one)"),
  ...comparisonSourceFields,
  dataset: comparisonSourceFields.dataset.default("concise").describe("Comparisons to learn from (see dpo's dataset)"),
  learning_rate: z.number().positive().default(1e-3).describe("Peak learning rate (linear decay)"),
  batch_size: z.number().int().positive().default(16).describe("Comparisons per step"),
  max_steps: z.number().int().positive().default(80).describe("Training steps"),
  lora_rank: z.number().int().positive().default(16).describe("LoRA rank"),
  seed: z.number().int().default(0).describe("Seed of the adapter and the data order"),
  eval_every: z.number().int().min(0).default(10).describe("test/pm_accuracy and test/nll every N steps"),
  save_every: z.number().int().min(0).default(20).describe("Checkpoint every N steps"),
  base_url: z.string().nullable().default(null).describe("Tinker-compatible server (default: the embedded engine)"),
  behavior_if_log_dir_exists: LogDirBehaviorSchema.default("ask").describe("What to do when log_path already has a run"),
});
export type PreferenceModelConfig = z.output<typeof configSchema>;

async function main(config: PreferenceModelConfig, context?: RecipeContext): Promise<void> {
  const p = await openPipeline(config, context, (l) => console.log(l));
  try {
    const pm = await preferenceModelStage(p, config.log_path, {
      learningRate: config.learning_rate,
      steps: config.max_steps,
      batchSize: config.batch_size,
      recipeName: "preference_model",
    });
    console.log(`preference model: ${pm.record.sampler_path ?? "(no sampler path)"}`);
  } finally {
    await p.service.close();
  }
}

export default defineRecipe({
  name: "preference_model",
  description: "Train a preference (reward) model that answers A or B for a comparison; reports held-out accuracy",
  configSchema,
  main,
});
