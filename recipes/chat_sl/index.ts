// Chat SFT on any conversation dataset and any model: a JSONL file, a parquet file or folder, a
// Hugging Face hub dataset (downloaded into the HF cache), or the cookbook's short names
// no_robots / tulu3. Trains a LoRA with the pipelined supervised loop and reports test/nll.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { LogDirBehaviorSchema, LrScheduleSchema } from "../../src/config/common.ts";
import { type RecipeContext, defineRecipe } from "../../src/config/recipe.ts";
import { TrainOnWhatSchema } from "../../src/renderers/types.ts";
import { resolveRendererName } from "../../src/modelInfo.ts";
import { ChatDatasetSpecSchema, chatDatasetBuilder } from "../../src/supervised/datasetSpec.ts";
import { main as train } from "../../src/supervised/train.ts";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

export const configSchema = ChatDatasetSpecSchema.extend({
  dataset: z.string().default(path.join(REPO_ROOT, "fixtures", "data", "chats_train.jsonl")).describe(ChatDatasetSpecSchema.shape.dataset.description ?? ""),
  test_size: z.number().int().min(0).default(128).describe(ChatDatasetSpecSchema.shape.test_size.description ?? ""),
  log_path: z.string().default("/tmp/tinker-examples/chat_sl").describe("Run directory"),
  model_name: z.string().default("tiny-chat").describe("Base model: a shipped fixture name, a local HF folder, or a hub id"),
  load_checkpoint_path: z.string().nullable().default(null).describe("Start from these weights (fresh optimizer; ignored when resuming)"),
  renderer_name: z.string().nullable().default(null).describe("Chat format (default: the model's recommended one, else role_colon)"),
  train_on_what: TrainOnWhatSchema.nullable().default(null).describe("Which tokens carry loss (null = all_assistant_messages)"),
  learning_rate: z.number().positive().default(1e-4).describe("Peak learning rate"),
  lr_schedule: LrScheduleSchema.default("linear").describe("Learning-rate schedule"),
  num_epochs: z.number().int().positive().default(1).describe("Passes over the data"),
  lora_rank: z.number().int().positive().default(32).describe("LoRA rank"),
  batch_size: z.number().int().positive().default(256).describe("Conversations per step"),
  max_length: z.number().int().positive().nullable().default(16384).describe("Truncate examples to this many tokens"),
  eval_every: z.number().int().min(0).default(20).describe("Compute test/nll every N steps"),
  infrequent_eval_every: z.number().int().min(0).default(100).describe("Run infrequent evaluators every N steps"),
  save_every: z.number().int().min(0).default(20).describe("Checkpoint every N steps"),
  max_steps: z.number().int().positive().nullable().default(null).describe("Stop after this many steps"),
  seed: z.number().int().default(0).describe("Seed of the adapter initialization"),
  base_url: z.string().nullable().default(null).describe("Tinker-compatible server (default: the embedded engine)"),
  behavior_if_log_dir_exists: LogDirBehaviorSchema.default("ask").describe("What to do when log_path already has a run"),
  wandb_project: z.string().nullable().default(null).describe("Accepted for compatibility; metrics stay in metrics.jsonl"),
  wandb_name: z.string().nullable().default(null).describe("Accepted for compatibility"),
});
export type ChatSlConfig = z.output<typeof configSchema>;

async function main(config: ChatSlConfig, context?: RecipeContext): Promise<void> {
  const rendererName = resolveRendererName(config.model_name, config.renderer_name);
  const builder = chatDatasetBuilder(config, {
    model_name_for_tokenizer: config.model_name,
    renderer_name: rendererName,
    max_length: config.max_length,
    batch_size: config.batch_size,
    train_on_what: config.train_on_what,
  });
  await train(
    {
      log_path: config.log_path,
      model_name: config.model_name,
      recipe_name: "chat_sl",
      renderer_name: rendererName,
      load_checkpoint_path: config.load_checkpoint_path,
      learning_rate: config.learning_rate,
      lr_schedule: config.lr_schedule,
      num_epochs: config.num_epochs,
      lora_rank: config.lora_rank,
      seed: config.seed,
      max_steps: config.max_steps,
      eval_every: config.eval_every,
      infrequent_eval_every: config.infrequent_eval_every,
      save_every: config.save_every,
      base_url: config.base_url,
      behavior_if_log_dir_exists: config.behavior_if_log_dir_exists,
      wandb_project: config.wandb_project,
      wandb_name: config.wandb_name,
    },
    builder,
    { recipeConfig: config, ...(context !== undefined ? { argv: context.argv, commandLine: context.commandLine } : {}) },
  );
}

export default defineRecipe({
  name: "chat_sl",
  description: "Chat SFT on any JSONL, parquet or Hugging Face dataset and any model",
  configSchema,
  main,
});
