// What every RL recipe shares around its environment: the common config fields (with per-recipe
// defaults), and one call that picks the engine, loads the tokenizer and renderer, and runs the
// RL loop with transcripts decoded to text. Recipes only say how to build their dataset.
import { z } from "zod";
import { LogDirBehaviorSchema } from "../config/common.ts";
import type { RecipeContext } from "../config/recipe.ts";
import { getRenderer } from "../renderers/registry.ts";
import type { Renderer } from "../renderers/base.ts";
import { createServiceClient } from "../service.ts";
import { resolveRendererName } from "../modelInfo.ts";
import type { ServiceClient } from "../tinker/clients.ts";
import { getTokenizer, type Tokenizer } from "../tokenizers/index.ts";
import { RLLossFnSchema, type RLConfigInput } from "./config.ts";
import { main as rlMain, type RLMainOptions, type RLRunResult } from "./train.ts";
import type { RLDatasetBuilder } from "./types.ts";

export interface RLRecipeDefaults {
  log_path: string;
  learning_rate: number;
  max_tokens: number;
  lora_rank: number;
  max_steps: number | null;
  eval_every: number;
  save_every: number;
}

/** Recipe-level async settings: groups_per_batch defaults to the recipe's own. */
const RecipeAsyncSchema = z.object({
  max_steps_off_policy: z.number().int().min(0).default(1).describe("groups sampled by a sampler more than this many steps old are resampled"),
  groups_per_batch: z.number().int().positive().nullable().default(null).describe("groups per training step (default: the recipe's groups_per_batch)"),
});

const RecipeStreamSchema = z.object({
  groups_per_batch: z.number().int().positive().nullable().default(null).describe("groups per iteration (default: the recipe's groups_per_batch)"),
  num_minibatches: z.number().int().positive().default(2).describe("forward_backward calls per optimizer substep"),
});

/** The fields every RL recipe takes; spread into the recipe's z.object with its own defaults. */
export function rlRecipeFields(d: RLRecipeDefaults) {
  return {
    log_path: z.string().default(d.log_path).describe("Run directory (metrics.jsonl, checkpoints.jsonl, iteration_NNNNNN/ transcripts)"),
    model_name: z.string().default("tiny-chat").describe("Base model: a shipped fixture name, a local HF folder, or a hub id"),
    renderer_name: z.string().nullable().default(null).describe("Chat format (default: the model's recommended one, else role_colon)"),
    learning_rate: z.number().positive().default(d.learning_rate).describe("Adam learning rate (constant)"),
    max_tokens: z.number().int().positive().default(d.max_tokens).describe("Maximum sampled tokens per turn"),
    temperature: z.number().positive().default(1.0).describe("Sampling temperature"),
    lora_rank: z.number().int().positive().default(d.lora_rank).describe("LoRA rank"),
    seed: z.number().int().default(0).describe("Seed of the data stream and of the adapter initialization"),
    max_steps: z.number().int().positive().nullable().default(d.max_steps).describe("Stop after this many iterations (null: the whole dataset)"),
    eval_every: z.number().int().min(0).default(d.eval_every).describe("Evaluate on the test set every N iterations (0 = never)"),
    save_every: z.number().int().min(0).default(d.save_every).describe("Checkpoint every N iterations (0 = only the final one)"),
    num_substeps: z.number().int().positive().default(1).describe("Optimizer steps per iteration"),
    loss_fn: RLLossFnSchema.default("importance_sampling").describe("Policy-gradient loss"),
    remove_constant_reward_groups: z.boolean().default(false).describe("Drop groups whose members all earned the same reward"),
    num_groups_to_log: z.number().int().min(0).default(4).describe("Groups per iteration shown in iteration_NNNNNN/train.html"),
    async_config: RecipeAsyncSchema.nullable().default(null).describe("Set (e.g. async_config.max_steps_off_policy=2) to train off-policy asynchronously"),
    stream_minibatch_config: RecipeStreamSchema.nullable()
      .default(null)
      .describe("Set (e.g. stream_minibatch_config.num_minibatches=2) to train minibatches while sampling continues"),
    base_url: z.string().nullable().default(null).describe("Tinker-compatible server (default: the embedded engine)"),
    load_checkpoint_path: z.string().nullable().default(null).describe("Start from these weights (fresh optimizer)"),
    behavior_if_log_dir_exists: LogDirBehaviorSchema.default("ask").describe("What to do when log_path already has a run"),
  };
}

const commonSchema = z.object(rlRecipeFields({ log_path: "", learning_rate: 1, max_tokens: 1, lora_rank: 1, max_steps: null, eval_every: 0, save_every: 0 }));
export type RLRecipeCommonConfig = z.output<typeof commonSchema>;

export interface RLRecipeSetup {
  renderer: Renderer;
  rendererName: string;
  tokenizer: Tokenizer;
}

/** The RL loop's config from a recipe's common fields; groupsPerBatch fills async/stream defaults. */
export function toRLConfig(recipeName: string, config: RLRecipeCommonConfig, rendererName: string, groupsPerBatch: number): RLConfigInput {
  const a = config.async_config;
  const s = config.stream_minibatch_config;
  return {
    log_path: config.log_path,
    model_name: config.model_name,
    recipe_name: recipeName,
    renderer_name: rendererName,
    learning_rate: config.learning_rate,
    max_tokens: config.max_tokens,
    temperature: config.temperature,
    lora_rank: config.lora_rank,
    seed: config.seed,
    max_steps: config.max_steps,
    eval_every: config.eval_every,
    save_every: config.save_every,
    num_substeps: config.num_substeps,
    loss_fn: config.loss_fn,
    remove_constant_reward_groups: config.remove_constant_reward_groups,
    num_groups_to_log: config.num_groups_to_log,
    async_config: a === null ? null : { max_steps_off_policy: a.max_steps_off_policy, groups_per_batch: a.groups_per_batch ?? groupsPerBatch },
    stream_minibatch_config: s === null ? null : { groups_per_batch: s.groups_per_batch ?? groupsPerBatch, num_minibatches: s.num_minibatches },
    base_url: config.base_url,
    load_checkpoint_path: config.load_checkpoint_path,
    behavior_if_log_dir_exists: config.behavior_if_log_dir_exists,
  };
}

export interface RunRLRecipeOptions {
  /** Default: createServiceClient with config.base_url (closed at the end). */
  serviceClient?: ServiceClient;
  mainOptions?: Omit<RLMainOptions, "decode" | "argv" | "commandLine">;
}

/**
 * Picks the engine (base_url), loads tokenizer and renderer for model_name, builds the dataset
 * and runs the RL loop. Transcripts get a tokenizer-backed `decode`.
 */
export async function runRLRecipe(
  recipeName: string,
  config: RLRecipeCommonConfig,
  groupsPerBatch: number,
  makeDataset: (setup: RLRecipeSetup) => RLDatasetBuilder | Promise<RLDatasetBuilder>,
  context?: RecipeContext,
  options: RunRLRecipeOptions = {},
): Promise<RLRunResult> {
  const tokenizer = await getTokenizer(config.model_name);
  const rendererName = resolveRendererName(config.model_name, config.renderer_name);
  const renderer = getRenderer(rendererName, tokenizer);
  const datasetBuilder = await makeDataset({ renderer, rendererName, tokenizer });
  const ownsService = options.serviceClient === undefined;
  const service = options.serviceClient ?? (await createServiceClient(config.base_url !== null ? { baseUrl: config.base_url } : {}));
  try {
    return await rlMain(toRLConfig(recipeName, config, rendererName, groupsPerBatch), datasetBuilder, service, {
      ...options.mainOptions,
      decode: (tokens) => tokenizer.decode(tokens),
      ...(context !== undefined ? { argv: context.argv, commandLine: context.commandLine } : {}),
    });
  } finally {
    if (ownsService) await service.close();
  }
}
