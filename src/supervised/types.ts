// Dataset interfaces of supervised learning (docs/cookbook-parity.md#supervised-datasets-and-datums): a dataset is a fixed number of batches of
// datums, reshuffled per epoch; a builder makes the train split and an optional test split.
import { z } from "zod";
import { TrainOnWhatSchema } from "../renderers/types.ts";
import type { Datum } from "../tinker/types.ts";

export interface SupervisedDataset {
  /** Number of full batches per epoch (a partial last batch is dropped). */
  readonly length: number;
  /** Batch `index` (0-based) of the current epoch's order (a streamed dataset: after `load(index)`). */
  getBatch(index: number): Datum[];
  /** Reads what batch `index` needs when the dataset is not in memory (src/supervised/stream.ts). */
  load?(index: number): Promise<void>;
  /** Reorders the examples for an epoch; the same seed always gives the same order. */
  setEpoch(seed: number): void;
  /** The source of each datum of batch `index` (a mixture's), or null when there is one source. */
  batchSources?(index: number): string[] | null;
}

export interface SupervisedDatasets {
  train: SupervisedDataset;
  /** Held-out data, scored by the NLL evaluator; null when the builder keeps none. */
  test: SupervisedDataset | null;
}

export interface SupervisedDatasetBuilder {
  build(): Promise<SupervisedDatasets>;
}

/** The fields every chat dataset builder needs to turn conversations into datums. */
export const ChatDatasetCommonConfigSchema = z.object({
  model_name_for_tokenizer: z.string().min(1).describe("model whose tokenizer renders the conversations"),
  renderer_name: z.string().min(1).describe("chat format (see `cookbook renderers`)"),
  max_length: z.number().int().positive().nullable().default(null).describe("truncate examples to this many tokens (null = no limit)"),
  batch_size: z.number().int().positive().describe("examples per training batch"),
  train_on_what: TrainOnWhatSchema.nullable().default(null).describe("which tokens carry loss (null = all_assistant_messages)"),
});
export type ChatDatasetCommonConfig = z.output<typeof ChatDatasetCommonConfigSchema>;
export type ChatDatasetCommonConfigInput = z.input<typeof ChatDatasetCommonConfigSchema>;
