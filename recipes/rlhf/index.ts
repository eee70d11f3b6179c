// RLHF in three stages — SFT, preference model, RL against it — each its own run under log_path
// (the cookbook's preference/rlhf pipeline). Default data: the shipped concise-vs-rambling
// comparisons, so the whole pipeline runs offline on tiny-chat.
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { rlhfConfigSchema, runRlhfPipeline, type RlhfConfig } from "../../src/preference/rlhf.ts";

export const configSchema = rlhfConfigSchema;

async function main(config: RlhfConfig, context?: RecipeContext): Promise<void> {
  const result = await runRlhfPipeline(config, context);
  console.log(`rlhf: stages run this time: ${result.stagesRun.join(", ") || "none (all finished)"}; policy ${result.rlSamplerPath}`);
}

export default defineRecipe({
  name: "rlhf",
  description: "RLHF pipeline: SFT → preference model → RL against it, each stage resumable (default: prefer concise answers, offline)",
  configSchema,
  main,
});
