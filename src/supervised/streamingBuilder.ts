// The chat dataset builder of `stream=true`: a .jsonl file, a parquet file or folder, a hub split
// (its parquet shards in the cache, read shard by shard, row group by row group), or a mixture of
// those, checked in one pass and then trained on block by block (src/supervised/stream.ts).
import type { TrainOnWhat } from "../renderers/types.ts";
import type { Datum } from "../tinker/types.ts";
import { mixtureProbabilities, type StoppingStrategy } from "../data/mixture.ts";
import { resolveDatasetSplitFiles, type HubOptions } from "../hf/datasets.ts";
import { datumFor, rendererFor, SupervisedDatasetFromRows } from "./data.ts";
import { scanParquetConversations } from "./hf/parquet.ts";
import { type ChatMixtureSource, sourceName } from "./mixture.ts";
import { mixtureStream } from "./mixtureStream.ts";
import { type ConversationStream, type ScanChecks, type StreamedConversation, splitStream } from "./stream.ts";
import { scanConversationFile } from "./streamingFile.ts";
import { ChatDatasetCommonConfigSchema, type ChatDatasetCommonConfigInput, type SupervisedDatasetBuilder, type SupervisedDatasets } from "./types.ts";

/** One streamed dataset: a .jsonl file, or parquet (a local file or folder, or a hub id). */
export interface StreamedDatasetRef {
  dataset: string;
  subset?: string | null;
  split?: string;
  message_field?: string;
}

export interface StreamingChatOptions {
  common: ChatDatasetCommonConfigInput;
  /** One dataset, or a weighted mixture of them (each source streamed). */
  data: StreamedDatasetRef | { mixture: readonly ChatMixtureSource[]; stoppingStrategy: StoppingStrategy; seed: number };
  /** Held-out rows: the stream's first, or at most this many rows of `testSplit` (0 = all of it). */
  testSize?: number;
  /** A hub split held out whole (or its first test_size rows) instead of the stream's first rows. */
  testSplit?: string | null;
  /** Rows per block, a multiple of batch_size (default BLOCK_BATCHES batches). */
  blockRows?: number;
  hub?: HubOptions;
}

/** Seconds between two progress lines of a long check pass. */
const PROGRESS_SECONDS = 10;

async function openStream(
  ref: StreamedDatasetRef,
  roles: ScanChecks["roles"],
  hub: HubOptions | undefined,
  split = ref.split ?? "train",
): Promise<ConversationStream> {
  const name = ref.dataset.endsWith(".jsonl") ? ref.dataset : `${ref.dataset} (split ${split})`;
  // A check pass over gigabytes takes minutes: say how far it got now and then.
  const log = hub?.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const started = Date.now();
  let said = started;
  const progress = (rows: number): void => {
    const now = Date.now();
    if (now - said < PROGRESS_SECONDS * 1000) return;
    said = now;
    log(`stream=true: checked ${rows.toLocaleString("en-US")} rows of ${name} in ${Math.round((now - started) / 1000)} s`);
  };
  if (ref.dataset.endsWith(".jsonl")) return scanConversationFile(ref.dataset, { roles, progress });
  const files = await resolveDatasetSplitFiles({ path: ref.dataset, name: ref.subset ?? null, split }, hub);
  return scanParquetConversations(name, files, ref.message_field ?? "messages", { roles, progress });
}

export class StreamingChatDatasetBuilder implements SupervisedDatasetBuilder {
  constructor(readonly options: StreamingChatOptions) {}

  async build(): Promise<SupervisedDatasets> {
    const { data, hub } = this.options;
    const common = ChatDatasetCommonConfigSchema.parse(this.options.common);
    const renderer = await rendererFor(common);
    const roles = { names: renderer.knownRoles(), renderer: renderer.rendererName };
    const trainOnWhat: TrainOnWhat = common.train_on_what ?? "all_assistant_messages";
    const map = (conv: StreamedConversation): Datum => datumFor(conv, renderer, common.max_length, trainOnWhat);
    let stream: ConversationStream;
    if ("mixture" in data) {
      const names = data.mixture.map(sourceName);
      const members = [];
      for (const [i, source] of data.mixture.entries()) members.push({ name: names[i]!, stream: await openStream(source, roles, hub) });
      const probabilities = mixtureProbabilities(
        data.mixture.map((s) => s.weight),
        members.map((m) => m.stream.rows),
        names,
      );
      stream = mixtureStream(members, probabilities, data.seed, data.stoppingStrategy);
    } else {
      stream = await openStream(data, roles, hub);
    }
    const testSplit = "mixture" in data || data.dataset.endsWith(".jsonl") ? null : (this.options.testSplit ?? null);
    const testSize = this.options.testSize ?? 0;
    const { train, test } = await splitStream(stream, {
      testSize: testSplit === null ? testSize : 0,
      batchSize: common.batch_size,
      map,
      ...(this.options.blockRows !== undefined ? { blockRows: this.options.blockRows } : {}),
    });
    let held = test;
    if (testSplit !== null && !("mixture" in data)) {
      const testStream = await openStream(data, roles, hub, testSplit);
      held = await testStream.read(0, testSize > 0 ? Math.min(testSize, testStream.rows) : testStream.rows);
    }
    const sourceOf = held.some((c) => c.source !== undefined) ? (c: StreamedConversation) => c.source : undefined;
    return { train, test: held.length > 0 ? new SupervisedDatasetFromRows(held, held.length, map, sourceOf) : null };
  }
}
