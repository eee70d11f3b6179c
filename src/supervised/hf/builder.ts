// Chat datasets from the Hugging Face hub (or local parquet files): the cookbook's builders over
// `datasets.load_dataset`, reading the split's parquet files instead.
import {
  ChatDatasetCommonConfigSchema,
  type ChatDatasetCommonConfig,
  type ChatDatasetCommonConfigInput,
  type SupervisedDatasetBuilder,
  type SupervisedDatasets,
} from "../types.ts";
import { conversationDatasets, rendererFor, SupervisedDatasetFromRows } from "../data.ts";
import { readParquetConversations } from "./parquet.ts";
import { resolveDatasetSplitFiles, type HubOptions } from "../../hf/datasets.ts";

export interface FromHFDatasetOptions {
  common: ChatDatasetCommonConfigInput;
  /** "org/name" on the hub, or a local parquet file or folder. */
  path: string;
  /** Configuration (subset) name. */
  name?: string | null;
  split?: string;
  /** A split of the dataset to hold out as the test set (e.g. "test"); else test_size rows of the train split. */
  testSplit?: string | null;
  testSize?: number;
  shuffleSeed?: number;
  messageField?: string;
  revision?: string;
  hub?: HubOptions;
}

export class FromHFDatasetBuilder implements SupervisedDatasetBuilder {
  readonly common: ChatDatasetCommonConfig;

  constructor(readonly options: FromHFDatasetOptions) {
    this.common = ChatDatasetCommonConfigSchema.parse(options.common);
  }

  async build(): Promise<SupervisedDatasets> {
    const o = this.options;
    const name = o.name ?? null;
    const split = o.split ?? "train";
    const messageField = o.messageField ?? "messages";
    const refOf = (s: string) => ({ path: o.path, name, split: s, ...(o.revision !== undefined ? { revision: o.revision } : {}) });
    const trainFiles = await resolveDatasetSplitFiles(refOf(split), o.hub);
    const conversations = await readParquetConversations(trainFiles, messageField);
    const renderer = await rendererFor(this.common);
    const source = `${o.path} (split ${split})`;
    const built = conversationDatasets(conversations, {
      common: this.common,
      renderer,
      testSize: o.testSplit ? 0 : (o.testSize ?? 0),
      shuffleSeed: o.shuffleSeed ?? 0,
      source,
    });
    if (!o.testSplit) return built;
    const testFiles = await resolveDatasetSplitFiles(refOf(o.testSplit), o.hub);
    const testConversations = await readParquetConversations(testFiles, messageField);
    // Only the split and batching are wanted here: a one-row-per-batch build reuses the checks.
    const held = conversationDatasets(testConversations, {
      common: { ...this.common, batch_size: 1 },
      renderer,
      testSize: 0,
      shuffleSeed: o.shuffleSeed ?? 0,
      source: `${o.path} (split ${o.testSplit})`,
    }).train as SupervisedDatasetFromRows<unknown>;
    const limit = o.testSize !== undefined && o.testSize > 0 ? Math.min(o.testSize, held.numRows) : held.numRows;
    const rows = Array.from({ length: limit }, (_, i) => held.getBatch(i)[0]!);
    return { train: built.train, test: new SupervisedDatasetFromRows(rows, rows.length, (d) => d) };
  }
}
