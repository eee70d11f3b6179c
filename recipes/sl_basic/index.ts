// The template for supervised fine-tuning: pick a model and a conversation file, and hand both to
// the cookbook's pipelined loop (src/supervised/train.ts). The defaults teach the project's tiny
// chat model a voice it has never seen — the pirate persona chats of fixtures/data/persona_train.jsonl
// ("Arr, 12 + 7 be 19, matey!") — with a LoRA: a fine-tune with a visible effect
// (what the defaults reach: docs/supervised.md#sl_basics-defaults).
// Its own pretraining chats (chats_train.jsonl) would start near the model's floor and barely move.
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { fixtureDataPath } from "../../src/data/fixtures.ts";
import { SupervisedConfigSchema } from "../../src/supervised/config.ts";
import { chatDatasetFields, chatDatasetFromConfig } from "../../src/supervised/datasetSpec.ts";
import { main as train } from "../../src/supervised/train.ts";
import { overrideDefaults } from "../../src/training/config.ts";
import type { z } from "zod";

export const configSchema = overrideDefaults(SupervisedConfigSchema.extend(chatDatasetFields), {
  log_path: "/tmp/tinker-examples/sl_basic",
  dataset: fixtureDataPath("persona_train.jsonl"),
  test_size: 64,
  batch_size: 16,
  max_length: 512,
  train_on_what: "all_assistant_messages",
  learning_rate: 1e-2,
  max_steps: 80,
});
export type SlBasicConfig = z.output<typeof configSchema>;

async function main(config: SlBasicConfig, context?: RecipeContext): Promise<void> {
  await train(config, chatDatasetFromConfig(config), { context });
}

export default defineRecipe({
  name: "sl_basic",
  description: "Supervised fine-tuning template: LoRA on chat conversations with the pipelined SL loop (default: teach tiny-chat a pirate persona)",
  configSchema,
  main,
});
