// A weighted mixture of chat datasets for supervised learning (the cookbook's
// InterleavedChatDatasetBuilder over `interleave_datasets`): each source is a JSONL file, a parquet
// file or folder, or a hub dataset; rows are interleaved by weight (src/data/mixture.ts), then
// shuffled and split like any chat dataset. Every conversation keeps its source's name, so the
// loop logs the loss of each source (`source/<name>/train_mean_nll`).
import { basename } from "node:path";
import { z } from "zod";
import { MixtureError, type StoppingStrategy, interleaveRows, mixtureProbabilities } from "../data/mixture.ts";
import { resolveDatasetSplitFiles, type HubOptions } from "../hf/datasets.ts";
import { readConversationFile } from "./conversationFile.ts";
import { type Conversation, conversationDatasets, rendererFor } from "./data.ts";
import { readParquetConversations } from "./hf/parquet.ts";
import { ChatDatasetCommonConfigSchema, type ChatDatasetCommonConfigInput, type SupervisedDatasetBuilder, type SupervisedDatasets } from "./types.ts";

export const ChatMixtureSourceSchema = z.object({
  dataset: z.string().min(1).describe("a .jsonl file, a parquet file or folder, or a hub id"),
  weight: z.number().positive().nullable().default(null).describe("relative weight (null on every source = weight by size)"),
  name: z.string().min(1).nullable().default(null).describe("name in the per-source metrics (default: the file's or dataset's name)"),
  subset: z.string().nullable().default(null),
  split: z.string().default("train"),
  message_field: z.string().default("messages"),
});
export type ChatMixtureSource = z.output<typeof ChatMixtureSourceSchema>;

export const StoppingStrategySchema = z.enum(["first_exhausted", "all_exhausted", "all_exhausted_without_replacement"]);

/** A metric-friendly name: the file's stem or the hub id's last part. */
export function sourceName(source: ChatMixtureSource): string {
  if (source.name !== null) return source.name;
  const stem = basename(source.dataset).replace(/\.(jsonl|parquet)$/, "");
  return stem.replace(/[^A-Za-z0-9_.-]+/g, "_");
}

async function readSource(source: ChatMixtureSource, name: string, hub: HubOptions | undefined): Promise<Conversation[]> {
  if (source.dataset.endsWith(".jsonl")) {
    return readConversationFile(source.dataset).map((r) => ({ messages: r.messages, where: `${source.dataset}:${r.line}`, source: name }));
  }
  const files = await resolveDatasetSplitFiles({ path: source.dataset, name: source.subset, split: source.split }, hub);
  return (await readParquetConversations(files, source.message_field)).map((c) => ({ ...c, source: name }));
}

export interface InterleavedChatOptions {
  common: ChatDatasetCommonConfigInput;
  sources: readonly ChatMixtureSource[];
  stoppingStrategy: StoppingStrategy;
  testSize: number;
  shuffleSeed: number;
  hub?: HubOptions;
}

export class InterleavedChatDatasetBuilder implements SupervisedDatasetBuilder {
  constructor(readonly options: InterleavedChatOptions) {
    if (options.sources.length === 0) throw new MixtureError("mixture: at least one source is needed");
    const names = options.sources.map(sourceName);
    if (new Set(names).size !== names.length) throw new MixtureError(`mixture: two sources have the same name (${names.join(", ")}); set "name" on them`);
  }

  async build(): Promise<SupervisedDatasets> {
    const { sources, stoppingStrategy, shuffleSeed } = this.options;
    const common = ChatDatasetCommonConfigSchema.parse(this.options.common);
    const names = sources.map(sourceName);
    const rows = await Promise.all(sources.map((s, i) => readSource(s, names[i]!, this.options.hub)));
    rows.forEach((r, i) => {
      if (r.length === 0) throw new MixtureError(`mixture source ${names[i]} (${sources[i]!.dataset}) has no conversations`);
    });
    const probabilities = mixtureProbabilities(
      sources.map((s) => s.weight),
      rows.map((r) => r.length),
      names,
    );
    const mixed = interleaveRows(
      rows.map((r) => r.length),
      probabilities,
      shuffleSeed,
      stoppingStrategy,
    ).map(([source, row]) => rows[source]![row]!);
    return conversationDatasets(mixed, {
      common,
      renderer: await rendererFor(common),
      testSize: this.options.testSize,
      shuffleSeed,
      source: `mixture of ${names.join(", ")}`,
    });
  }
}
