// The template for supervised fine-tuning: pick a model and a conversation file, and hand both to
// the cookbook's pipelined loop (src/supervised/train.ts). The defaults teach the project's tiny
// chat model a voice it has never seen — the pirate persona chats of fixtures/data/persona_train.jsonl
// ("Arr, 12 + 7 be 19, matey!") — with a LoRA, in one to three minutes on a busy 2-core CPU: a
// fine-tune with a visible effect (train_mean_nll ~10 → ~0.6, test/nll likewise; docs/supervised.md).
// Its own pretraining chats (chats_train.jsonl) would start near the model's floor and barely move.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { LogDirBehaviorSchema, LrScheduleSchema } from "../../src/config/common.ts";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { TrainOnWhatSchema } from "../../src/renderers/types.ts";
import { resolveRendererName } from "../../src/modelInfo.ts";
import { chatDatasetBuilder } from "../../src/supervised/datasetSpec.ts";
import { main as train } from "../../src/supervised/train.ts";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

export const configSchema = z.object({
  log_path: z.string().default("/tmp/tinker-examples/sl_basic").describe("Run directory (metrics.jsonl, checkpoints.jsonl, logs.log)"),
  model_name: z.string().default("tiny-chat").describe("Base model: a shipped fixture name, a local HF folder, or a hub id"),
  renderer_name: z.string().nullable().default(null).describe("Chat format (default: the model's recommended one, else role_colon)"),
  dataset: z.string().default(path.join(REPO_ROOT, "fixtures", "data", "persona_train.jsonl")).describe("Conversations: .jsonl, parquet file/folder, or hub id"),
  test_size: z.number().int().min(0).default(64).describe("Conversations held out for test/nll"),
  batch_size: z.number().int().positive().default(16).describe("Conversations per step"),
  max_length: z.number().int().positive().nullable().default(512).describe("Truncate examples to this many tokens"),
  train_on_what: TrainOnWhatSchema.default("all_assistant_messages").describe("Which tokens carry loss"),
  learning_rate: z.number().positive().default(1e-2).describe("Peak learning rate"),
  lr_schedule: LrScheduleSchema.default("linear").describe("Learning-rate schedule"),
  num_epochs: z.number().int().positive().default(1).describe("Passes over the data"),
  lora_rank: z.number().int().positive().default(32).describe("LoRA rank"),
  max_steps: z.number().int().positive().nullable().default(80).describe("Stop after this many steps (null: the whole dataset, ~245 steps)"),
  eval_every: z.number().int().min(0).default(10).describe("Compute test/nll every N steps"),
  save_every: z.number().int().min(0).default(20).describe("Checkpoint every N steps"),
  seed: z.number().int().default(0).describe("Seed of the adapter initialization"),
  base_url: z.string().nullable().default(null).describe("Tinker-compatible server (default: the embedded engine)"),
  load_checkpoint_path: z.string().nullable().default(null).describe("Start from these weights (fresh optimizer)"),
  behavior_if_log_dir_exists: LogDirBehaviorSchema.default("ask").describe("What to do when log_path already has a run"),
});
export type SlBasicConfig = z.output<typeof configSchema>;

async function main(config: SlBasicConfig, context?: RecipeContext): Promise<void> {
  const rendererName = resolveRendererName(config.model_name, config.renderer_name);
  const builder = chatDatasetBuilder(
    { dataset: config.dataset, subset: null, split: "train", test_split: null, message_field: "messages", test_size: config.test_size, shuffle_seed: 0 },
    {
      model_name_for_tokenizer: config.model_name,
      renderer_name: rendererName,
      max_length: config.max_length,
      batch_size: config.batch_size,
      train_on_what: config.train_on_what,
    },
  );
  await train(
    {
      log_path: config.log_path,
      model_name: config.model_name,
      recipe_name: "sl_basic",
      renderer_name: rendererName,
      load_checkpoint_path: config.load_checkpoint_path,
      learning_rate: config.learning_rate,
      lr_schedule: config.lr_schedule,
      num_epochs: config.num_epochs,
      lora_rank: config.lora_rank,
      seed: config.seed,
      max_steps: config.max_steps,
      eval_every: config.eval_every,
      save_every: config.save_every,
      base_url: config.base_url,
      behavior_if_log_dir_exists: config.behavior_if_log_dir_exists,
    },
    builder,
    { recipeConfig: config, ...(context !== undefined ? { argv: context.argv, commandLine: context.commandLine } : {}) },
  );
}

export default defineRecipe({
  name: "sl_basic",
  description: "Supervised fine-tuning template: LoRA on chat conversations with the pipelined SL loop (default: teach tiny-chat a pirate persona)",
  configSchema,
  main,
});
