// Chat SFT on any conversation dataset and any model: a JSONL file, a parquet file or folder, a
// Hugging Face hub dataset (downloaded into the HF cache), or the cookbook's short names
// no_robots / tulu3. Trains a LoRA with the pipelined supervised loop and reports test/nll.
import type { z } from "zod";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { fixtureDataPath } from "../../src/data/fixtures.ts";
import { SupervisedConfigSchema } from "../../src/supervised/config.ts";
import { chatDatasetFields, chatDatasetFromConfig } from "../../src/supervised/datasetSpec.ts";
import { main as train } from "../../src/supervised/train.ts";
import { overrideDefaults } from "../../src/training/config.ts";

export const configSchema = overrideDefaults(SupervisedConfigSchema.extend(chatDatasetFields), {
  log_path: "/tmp/tinker-examples/chat_sl",
  dataset: fixtureDataPath("chats_train.jsonl"),
  test_size: 128,
  batch_size: 256,
  max_length: 16384,
  eval_every: 20,
});
export type ChatSlConfig = z.output<typeof configSchema>;

async function main(config: ChatSlConfig, context?: RecipeContext): Promise<void> {
  await train(config, chatDatasetFromConfig(config), { context });
}

export default defineRecipe({
  name: "chat_sl",
  description: "Chat SFT on any JSONL, parquet or Hugging Face dataset and any model",
  configSchema,
  main,
});
