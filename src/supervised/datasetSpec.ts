// One `dataset=` value for recipes: a JSONL file of conversations, a local parquet file/folder, a
// Hugging Face hub id, or a short name the cookbook knows (no_robots, tulu3).
import { z } from "zod";
import { inGroup } from "../config/groups.ts";
import { FromConversationFileBuilder } from "./data.ts";
import { FromHFDatasetBuilder } from "./hf/builder.ts";
import { StreamingChatDatasetBuilder } from "./streamingBuilder.ts";
import { ChatMixtureSourceSchema, InterleavedChatDatasetBuilder, StoppingStrategySchema } from "./mixture.ts";
import { resolveRendererName } from "../modelInfo.ts";
import { ChatDatasetCommonConfigSchema, type ChatDatasetCommonConfigInput, type SupervisedDatasetBuilder } from "./types.ts";

export const ChatDatasetSpecSchema = z.object({
  dataset: z.string().min(1).describe("conversations: a .jsonl file, a parquet file or folder, a hub id (org/name), or no_robots / tulu3"),
  subset: z.string().nullable().default(null).describe("hub dataset configuration (subset) name"),
  split: z.string().default("train").describe("hub split to train on"),
  test_split: z.string().nullable().default(null).describe("hub split held out for test/nll (else test_size rows of the training data)"),
  message_field: z.string().default("messages").describe("column holding the conversation"),
  test_size: z.number().int().min(0).default(0).describe("conversations held out for test/nll (0 = none, or the size cap of test_split)"),
  shuffle_seed: z.number().int().default(0).describe("seed of the shuffle before the train/test split"),
  stream: z
    .boolean()
    .default(false)
    .describe(
      "read the dataset (a .jsonl file, parquet, a hub split, or a mixture of them) in blocks instead of whole, for data larger than memory: blocks in a seeded order, rows shuffled inside a block; the held-out rows are its first test_size (or test_split)",
    ),
  mixture: z
    .array(ChatMixtureSourceSchema)
    .min(1)
    .nullable()
    .default(null)
    .describe('instead of dataset: a weighted mixture, e.g. [{"dataset":"a.jsonl","weight":3},{"dataset":"org/name","weight":1}] (loss logged per source)'),
  mixture_stopping_strategy: StoppingStrategySchema.default("all_exhausted").describe(
    "mixture: stop at the first spent source, when all are spent (small ones repeat), or all spent without repeats",
  ),
});
export type ChatDatasetSpec = z.output<typeof ChatDatasetSpecSchema>;

/** Hub datasets the Python cookbook's chat_sl knows by a short name. */
const KNOWN: Record<string, Partial<ChatDatasetSpec> & { dataset: string }> = {
  no_robots: { dataset: "HuggingFaceH4/no_robots", test_split: "test" },
  tulu3: { dataset: "allenai/tulu-3-sft-mixture", test_size: 1024 },
};

export function chatDatasetBuilder(specIn: ChatDatasetSpec, common: ChatDatasetCommonConfigInput): SupervisedDatasetBuilder {
  const known = KNOWN[specIn.dataset];
  // A short name fills its defaults; explicit non-default settings still win.
  const spec: ChatDatasetSpec = known
    ? {
        ...specIn,
        ...known,
        ...(specIn.test_split !== null ? { test_split: specIn.test_split } : {}),
        ...(specIn.test_size > 0 ? { test_size: specIn.test_size } : {}),
      }
    : specIn;
  if (spec.stream) {
    return new StreamingChatDatasetBuilder({
      common,
      data:
        spec.mixture !== null
          ? { mixture: spec.mixture, stoppingStrategy: spec.mixture_stopping_strategy, seed: spec.shuffle_seed }
          : { dataset: spec.dataset, subset: spec.subset, split: spec.split, message_field: spec.message_field },
      testSize: spec.test_size,
      testSplit: spec.test_split,
    });
  }
  if (spec.mixture !== null) {
    return new InterleavedChatDatasetBuilder({
      common,
      sources: spec.mixture,
      stoppingStrategy: spec.mixture_stopping_strategy,
      testSize: spec.test_size,
      shuffleSeed: spec.shuffle_seed,
    });
  }
  if (spec.dataset.endsWith(".jsonl")) {
    return new FromConversationFileBuilder({ common, filePath: spec.dataset, testSize: spec.test_size, shuffleSeed: spec.shuffle_seed });
  }
  return new FromHFDatasetBuilder({
    common,
    path: spec.dataset,
    name: spec.subset,
    split: spec.split,
    testSplit: spec.test_split,
    testSize: spec.test_size,
    shuffleSeed: spec.shuffle_seed,
    messageField: spec.message_field,
  });
}

const common = ChatDatasetCommonConfigSchema.shape;

/**
 * The chat dataset builder's fields as a recipe spreads them next to the loop's: where the
 * conversations come from and how they become batches. Recipes set the defaults.
 */
export const chatDatasetFields = inGroup("data", {
  ...ChatDatasetSpecSchema.shape,
  batch_size: common.batch_size,
  max_length: common.max_length,
  train_on_what: common.train_on_what,
});
const ChatDatasetConfigSchema = z.object(chatDatasetFields);
export type ChatDatasetConfig = z.output<typeof ChatDatasetConfigSchema>;

/** The builder a recipe's config describes (its model and renderer render the conversations). */
export function chatDatasetFromConfig(config: ChatDatasetConfig & { model_name: string; renderer_name: string | null }): SupervisedDatasetBuilder {
  return chatDatasetBuilder(config, {
    model_name_for_tokenizer: config.model_name,
    renderer_name: resolveRendererName(config.model_name, config.renderer_name),
    max_length: config.max_length,
    batch_size: config.batch_size,
    train_on_what: config.train_on_what,
  });
}
