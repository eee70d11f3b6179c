// Training on conversations that are not loaded whole (`stream=true`), whatever they come from: a
// .jsonl file, parquet files (local or a hub split), or a mixture of those. Every source is a
// `ConversationStream`, rows that can be read back by range; this file owns how a stream becomes
// batches. The training rows are cut into blocks of `blockRows` consecutive rows (a multiple of
// batch_size, so no batch spans two blocks); each epoch visits the blocks in a seeded order and
// shuffles the rows inside a block, the streaming counterpart of a full shuffle (as a shuffle
// buffer is for Hugging Face's streaming datasets). One block is held at a time. The held-out rows
// are the stream's first `test_size`.
// This file keeps to rows (no renderer), so a process can stream with little loaded.
import type { Message } from "../renderers/types.ts";
import type { Datum } from "../tinker/types.ts";
import { seededPermutation, seededShuffle } from "../data/shuffle.ts";
import { checkRoles, DataFormatError } from "./conversationFile.ts";
import type { SupervisedDataset } from "./types.ts";

/** Batches of rows in one block: what is in memory at a time. */
export const BLOCK_BATCHES = 32;

/** A streamed conversation, where it came from, and (in a mixture) its source's name. */
export interface StreamedConversation {
  messages: Message[];
  where: string;
  source?: string;
}

/** Rows checked once at build time and read back by range while training. */
export interface ConversationStream {
  /** Names the data in errors ("data.jsonl", "org/name (split train)"). */
  readonly name: string;
  readonly rows: number;
  /** Rows [start, end) in stream order; throws when the data changed since it was checked. */
  read(start: number, end: number): Promise<StreamedConversation[]>;
}

/** What a stream's check pass checks besides the format, and whom it tells how far it got. */
export interface ScanChecks {
  /** The roles a renderer can write; others fail naming the row. */
  roles?: { names: readonly string[]; renderer: string };
  /** Called with the rows checked so far, every SCAN_PROGRESS_ROWS rows. */
  progress?: (rows: number) => void;
}

const SCAN_PROGRESS_ROWS = 10_000;

/** The checks of row number `index` (0-based) of a stream's check pass. */
export function checkScanned(conv: StreamedConversation, index: number, checks: ScanChecks | undefined): void {
  if (checks?.roles !== undefined) checkRoles(conv.messages, checks.roles.names, checks.roles.renderer, conv.where);
  if ((index + 1) % SCAN_PROGRESS_ROWS === 0) checks?.progress?.(index + 1);
}

/** Checks that `got` rows were read back where `want` were counted at build time. */
export function checkReadBack(name: string, start: number, want: number, got: number): void {
  if (got !== want) throw new DataFormatError(`${name} changed while training: rows ${start}.. read back ${got} rows, had ${want}`);
}

/** The training rows of a stream after its first `offset` (the held-out ones), one block in memory at a time. */
export class StreamingConversationDataset implements SupervisedDataset {
  private order: number[];
  private seed: number | null = null;
  private cached: { block: number; rows: StreamedConversation[] } | null = null;
  private readonly rows: number;
  private readonly blocks: number;

  constructor(
    readonly stream: ConversationStream,
    private readonly offset: number,
    private readonly blockRows: number,
    readonly batchSize: number,
    private readonly map: (conv: StreamedConversation) => Datum,
  ) {
    if (!Number.isInteger(batchSize) || batchSize <= 0) throw new DataFormatError(`batch_size must be a positive integer, got ${batchSize}`);
    if (blockRows % batchSize !== 0) throw new DataFormatError(`blockRows=${blockRows} must be a multiple of batch_size=${batchSize}`);
    this.rows = stream.rows - offset;
    this.blocks = Math.ceil(this.rows / blockRows);
    this.order = Array.from({ length: this.blocks }, (_, i) => i);
  }

  get length(): number {
    return Math.floor(this.rows / this.blockRows) * (this.blockRows / this.batchSize) + Math.floor((this.rows % this.blockRows) / this.batchSize);
  }

  /** Block order and in-block shuffles from the epoch's seed (stream order before the first). */
  setEpoch(seed: number): void {
    this.seed = seed;
    this.order = seededPermutation(this.blocks, seed);
    this.cached = null;
  }

  /** Reads the block batch `index` of this epoch is in, unless it is the one held. */
  async load(index: number): Promise<void> {
    const { block } = this.locate(index);
    if (this.cached?.block === block) return;
    const start = this.offset + block * this.blockRows;
    const end = Math.min(start + this.blockRows, this.stream.rows);
    const rows = await this.stream.read(start, end);
    checkReadBack(this.stream.name, start, end - start, rows.length);
    const shuffled = this.seed === null ? rows : seededShuffle(rows, this.seed * 1_000_003 + block);
    this.cached = { block, rows: shuffled };
  }

  /** The conversations of batch `index` of this epoch. */
  async rowsOfBatch(index: number): Promise<StreamedConversation[]> {
    await this.load(index);
    return this.heldRows(index);
  }

  /** The datums of batch `index`, whose block `load(index)` has read. */
  getBatch(index: number): Datum[] {
    return this.heldRows(index).map(this.map);
  }

  batchSources(index: number): string[] | null {
    const rows = this.heldRows(index);
    return rows.some((r) => r.source !== undefined) ? rows.map((r) => r.source ?? "") : null;
  }

  private heldRows(index: number): StreamedConversation[] {
    const { block, batch } = this.locate(index);
    if (this.cached?.block !== block) throw new Error(`batch ${index} is in block ${block}, which is not read: await load(${index}) first`);
    return this.cached.rows.slice(batch * this.batchSize, (batch + 1) * this.batchSize);
  }

  private locate(index: number): { block: number; batch: number } {
    if (!Number.isInteger(index) || index < 0 || index >= this.length) {
      throw new RangeError(`batch ${index} is out of range: the dataset has ${this.length} batches of ${this.batchSize}`);
    }
    let rest = index;
    for (const block of this.order) {
      const rows = Math.min(this.blockRows, this.rows - block * this.blockRows);
      const batches = Math.floor(rows / this.batchSize);
      if (rest < batches) return { block, batch: rest };
      rest -= batches;
    }
    throw new RangeError(`batch ${index} not found`);
  }
}

export interface StreamSplitOptions {
  testSize: number;
  /** Rows per block, a multiple of batchSize (default BLOCK_BATCHES batches). */
  blockRows?: number;
  batchSize: number;
  map: (conv: StreamedConversation) => Datum;
}

/**
 * The training rows and the held-out ones (the first `testSize`, read into memory) of a stream.
 * Throws before any training when the data cannot work: no rows, a test split that leaves nothing
 * to train on, or a batch larger than the training rows.
 */
export async function splitStream(
  stream: ConversationStream,
  options: StreamSplitOptions,
): Promise<{ train: StreamingConversationDataset; test: StreamedConversation[] }> {
  const { testSize, batchSize } = options;
  if (!Number.isInteger(testSize) || testSize < 0) throw new DataFormatError(`test_size must be a non-negative integer, got ${testSize}`);
  if (stream.rows === 0) throw new DataFormatError(`${stream.name}: the dataset is empty (no conversations)`);
  if (testSize >= stream.rows)
    throw new DataFormatError(`${stream.name}: test_size=${testSize} leaves no training examples (the dataset has ${stream.rows}); lower test_size`);
  const trainRows = stream.rows - testSize;
  if (batchSize > trainRows)
    throw new DataFormatError(`${stream.name}: batch_size=${batchSize} is larger than the ${trainRows} training examples; lower batch_size`);
  const test = testSize > 0 ? await stream.read(0, testSize) : [];
  checkReadBack(stream.name, 0, testSize, test.length);
  const train = new StreamingConversationDataset(stream, testSize, options.blockRows ?? batchSize * BLOCK_BATCHES, batchSize, options.map);
  return { train, test };
}
