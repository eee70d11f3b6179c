import { z } from "zod";
import { tagGroup } from "../../src/config/groups.ts";
import { chatDatasetFields } from "../../src/supervised/datasetSpec.ts";
import { SupervisedConfigSchema } from "../../src/supervised/config.ts";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { closePipeline, openPipeline, pipelineFields, preferenceModelStage } from "../../src/preference/rlhf.ts";
import { overrideDefaults } from "../../src/training/config.ts";

export const configSchema = overrideDefaults(
  z.object({
    ...pipelineFields,
    learning_rate: SupervisedConfigSchema.shape.learning_rate,
    batch_size: chatDatasetFields.batch_size,
    max_steps: tagGroup("optimizer", z.number().int().positive().default(80).describe("Training steps")),
  }),
  { learning_rate: 1e-3, batch_size: 16, log_path: "/tmp/tinker-examples/preference_model", dataset: "concise", lora_rank: 16, eval_every: 10 },
);
export type PreferenceModelConfig = z.output<typeof configSchema>;

async function main(config: PreferenceModelConfig, context?: RecipeContext): Promise<void> {
  const p = await openPipeline(config, context, (l) => console.log(l), { standalone: true });
  try {
    const pm = await preferenceModelStage(p, config.log_path, {
      learningRate: config.learning_rate,
      steps: config.max_steps,
      batchSize: config.batch_size,
      recipeName: "preference_model",
      skipFinished: false,
    });
    console.log(`preference model: ${pm.record.sampler_path ?? "(no sampler path)"}`);
  } finally {
    await closePipeline(p);
  }
}

export default defineRecipe({
  name: "preference_model",
  description: "Train a preference (reward) model that answers A or B for a comparison; reports held-out accuracy",
  configSchema,
  main,
});
