// Supervised datasets from conversations (docs/cookbook-parity.md#supervised-datasets-and-datums): rows are shuffled with a seed, the first
// `test_size` become the test split, and the rest are cut into fixed-size batches that are
// reshuffled per epoch. Datums are rendered when a batch is asked for, so big files cost little
// until used. Every problem a bad file can cause is reported before training starts, naming the
// file and line (or dataset row).
import { getRenderer } from "../renderers/registry.ts";
import type { Renderer } from "../renderers/base.ts";
import type { Message, TrainOnWhat } from "../renderers/types.ts";
import { modelInputLength } from "../tinker/modelInput.ts";
import type { Datum } from "../tinker/types.ts";
import { getTokenizer } from "../tokenizers/index.ts";
import { conversationToDatum, DataValidationError } from "./common.ts";
import { checkRoles, readConversationFile } from "./conversationFile.ts";
import { seededPermutation, seededShuffle } from "../data/shuffle.ts";
import {
  ChatDatasetCommonConfigSchema,
  type ChatDatasetCommonConfig,
  type ChatDatasetCommonConfigInput,
  type SupervisedDataset,
  type SupervisedDatasetBuilder,
  type SupervisedDatasets,
} from "./types.ts";

export { DataValidationError } from "./common.ts";
export { DataFormatError } from "./conversationFile.ts";

/** One conversation and where it came from ("file.jsonl:12", "org/data train row 7"). */
export interface Conversation {
  messages: Message[];
  where: string;
  /** The mixture source it was drawn from (src/supervised/mixture.ts); per-source metrics use it. */
  source?: string;
}

/**
 * A list of rows cut into `batchSize` batches (the partial last batch dropped), mapped to datums
 * on demand. setEpoch(seed) reorders the rows from their original order, so an epoch's order
 * depends only on its seed.
 */
export class SupervisedDatasetFromRows<R> implements SupervisedDataset {
  private order: readonly R[];

  constructor(
    private readonly rows: readonly R[],
    readonly batchSize: number,
    private readonly mapFn: (row: R) => Datum | Datum[],
    /** Names each row's source (a mixture's; rows that map to one datum each); batchSources is null without it. */
    private readonly sourceOf?: (row: R) => string | undefined,
  ) {
    if (!Number.isInteger(batchSize) || batchSize <= 0) throw new DataValidationError(`batch_size must be a positive integer, got ${batchSize}`);
    this.order = rows;
  }

  get length(): number {
    return Math.floor(this.rows.length / this.batchSize);
  }

  get numRows(): number {
    return this.rows.length;
  }

  getBatch(index: number): Datum[] {
    if (!Number.isInteger(index) || index < 0 || index >= this.length) {
      throw new RangeError(`batch ${index} is out of range: the dataset has ${this.length} batches of ${this.batchSize}`);
    }
    const out: Datum[] = [];
    for (const row of this.order.slice(index * this.batchSize, (index + 1) * this.batchSize)) {
      const mapped = this.mapFn(row);
      if (Array.isArray(mapped)) out.push(...mapped);
      else out.push(mapped);
    }
    return out;
  }

  setEpoch(seed: number): void {
    this.order = seededShuffle(this.rows, seed);
  }

  batchSources(index: number): string[] | null {
    const sourceOf = this.sourceOf;
    if (sourceOf === undefined) return null;
    return this.order.slice(index * this.batchSize, (index + 1) * this.batchSize).map((row) => sourceOf(row) ?? "");
  }
}

export interface ConversationDatasetOptions {
  common: ChatDatasetCommonConfig;
  renderer: Renderer;
  /** Held-out conversations taken from the front of the shuffled rows (0 = no test split). */
  testSize: number;
  shuffleSeed: number;
  /** Names the source in errors, e.g. the file path. */
  source: string;
}

/** How many rows the max_length check renders: enough to be sure, bounded for big datasets. */
const LENGTH_CHECK_ROWS = 256;

export function datumFor(conv: Conversation, renderer: Renderer, maxLength: number | null, trainOnWhat: TrainOnWhat): Datum {
  try {
    return conversationToDatum(conv.messages, renderer, maxLength, trainOnWhat);
  } catch (err) {
    throw new DataValidationError(`${conv.where}: ${(err as Error).message}`, { cause: err });
  }
}

function renderedLength(conv: Conversation, renderer: Renderer, trainOnWhat: TrainOnWhat): number {
  try {
    return modelInputLength(renderer.buildSupervisedExample(conv.messages, trainOnWhat).modelInput);
  } catch (err) {
    throw new DataValidationError(`${conv.where}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Splits and batches conversations. Throws before any training when the data cannot work: no
 * rows, a test split that leaves nothing to train on, a batch larger than the training split,
 * unknown roles, or a max_length shorter than every example.
 */
export function conversationDatasets(conversations: readonly Conversation[], options: ConversationDatasetOptions): SupervisedDatasets {
  const { common, renderer, testSize, shuffleSeed, source } = options;
  if (conversations.length === 0) throw new DataValidationError(`${source}: the dataset is empty (no conversations)`);
  if (!Number.isInteger(testSize) || testSize < 0) throw new DataValidationError(`test_size must be a non-negative integer, got ${testSize}`);
  if (testSize >= conversations.length) {
    throw new DataValidationError(`${source}: test_size=${testSize} leaves no training examples (the dataset has ${conversations.length}); lower test_size`);
  }
  const roles = renderer.knownRoles();
  for (const conv of conversations) checkRoles(conv.messages, roles, renderer.rendererName, conv.where);

  const shuffled = seededPermutation(conversations.length, shuffleSeed).map((i) => conversations[i]!);
  const testRows = shuffled.slice(0, testSize);
  const trainRows = shuffled.slice(testSize);
  if (common.batch_size > trainRows.length) {
    throw new DataValidationError(
      `${source}: batch_size=${common.batch_size} is larger than the ${trainRows.length} training examples` +
        (testSize > 0 ? ` (after holding out test_size=${testSize})` : "") +
        `; lower batch_size`,
    );
  }
  const trainOnWhat: TrainOnWhat = common.train_on_what ?? "all_assistant_messages";
  const maxLength = common.max_length;
  if (maxLength !== null) {
    let shortest = Infinity;
    let shortestWhere = "";
    for (const conv of trainRows.slice(0, LENGTH_CHECK_ROWS)) {
      const n = renderedLength(conv, renderer, trainOnWhat);
      if (n < shortest) {
        shortest = n;
        shortestWhere = conv.where;
      }
      if (shortest <= maxLength) break;
    }
    if (shortest > maxLength) {
      const checked = Math.min(LENGTH_CHECK_ROWS, trainRows.length);
      throw new DataValidationError(
        `${source}: max_length=${maxLength} is shorter than every example checked (${checked} rows; the shortest, ${shortestWhere}, has ${shortest} tokens); raise max_length`,
      );
    }
  }
  const map = (conv: Conversation): Datum => datumFor(conv, renderer, maxLength, trainOnWhat);
  const sourceOf = conversations.some((c) => c.source !== undefined) ? (conv: Conversation) => conv.source : undefined;
  const train = new SupervisedDatasetFromRows(trainRows, common.batch_size, map, sourceOf);
  const test = testRows.length > 0 ? new SupervisedDatasetFromRows(testRows, testRows.length, map, sourceOf) : null;
  return { train, test };
}

/** Tokenizer + renderer of a chat dataset config. */
export async function rendererFor(common: ChatDatasetCommonConfig): Promise<Renderer> {
  const tokenizer = await getTokenizer(common.model_name_for_tokenizer);
  return getRenderer(common.renderer_name, tokenizer);
}

export interface FromConversationFileOptions {
  common: ChatDatasetCommonConfigInput;
  filePath: string;
  testSize?: number;
  shuffleSeed?: number;
}

/** The cookbook's FromConversationFileBuilder: JSONL with one {"messages": [...]} per line. */
export class FromConversationFileBuilder implements SupervisedDatasetBuilder {
  readonly common: ChatDatasetCommonConfig;
  readonly filePath: string;
  readonly testSize: number;
  readonly shuffleSeed: number;

  constructor(options: FromConversationFileOptions) {
    this.common = ChatDatasetCommonConfigSchema.parse(options.common);
    this.filePath = options.filePath;
    this.testSize = options.testSize ?? 0;
    this.shuffleSeed = options.shuffleSeed ?? 0;
  }

  async build(): Promise<SupervisedDatasets> {
    const rows = readConversationFile(this.filePath);
    const conversations = rows.map((r) => ({ messages: r.messages, where: `${this.filePath}:${r.line}` }));
    return conversationDatasets(conversations, {
      common: this.common,
      renderer: await rendererFor(this.common),
      testSize: this.testSize,
      shuffleSeed: this.shuffleSeed,
      source: this.filePath,
    });
  }
}
