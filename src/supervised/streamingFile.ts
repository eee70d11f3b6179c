// A conversation file read in blocks instead of whole (`stream=true` on a .jsonl dataset): one pass
// at build time checks every line (JSON, messages, roles) and keeps only where each block of rows
// starts; training then reads one block at a time (a few dozen batches of rows) with positioned
// reads. Each epoch visits the blocks in a seeded order and shuffles the rows inside a block, the
// streaming counterpart of a full shuffle (as a shuffle buffer is for Hugging Face's streaming
// datasets). The held-out rows are the file's first `test_size` conversations.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
// This file keeps to the file and its rows (no renderer), so a process can stream with little loaded.
import type { Message } from "../renderers/types.ts";
import type { Datum } from "../tinker/types.ts";
import { seededPermutation, seededShuffle } from "../data/shuffle.ts";
import { checkRoles, DataFormatError, parseConversationLine } from "./conversationFile.ts";
import type { SupervisedDataset } from "./types.ts";

const CHUNK_BYTES = 1 << 20;
/** Batches of rows in one block: what is in memory at a time. */
export const BLOCK_BATCHES = 32;

interface LineAt {
  /** Byte offset of the line's first byte. */
  offset: number;
  /** 1-based line number. */
  line: number;
  text: string;
}

/** Every non-blank line of a file with its byte offset, read 1 MiB at a time. */
function* fileLines(path: string, from = 0, to = Number.POSITIVE_INFINITY, firstLine = 1): Generator<LineAt> {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    throw new DataFormatError(`${path}: cannot read (${(err as Error).message})`);
  }
  try {
    const end = Math.min(to, fstatSync(fd).size);
    const buffer = Buffer.alloc(CHUNK_BYTES);
    let pending: Buffer = Buffer.alloc(0);
    let pendingOffset = from;
    let line = firstLine;
    const emit = function* (bytes: Buffer, offset: number): Generator<LineAt> {
      const text = bytes.toString("utf8").replace(/\r$/, "");
      if (text.trim() !== "") yield { offset, line, text };
      line += 1;
    };
    for (let position = from; position < end; ) {
      const n = readSync(fd, buffer, 0, Math.min(CHUNK_BYTES, end - position), position);
      if (n === 0) break;
      const data = pending.length > 0 ? Buffer.concat([pending, buffer.subarray(0, n)]) : buffer.subarray(0, n);
      let start = 0;
      for (let nl = data.indexOf(10, start); nl >= 0; nl = data.indexOf(10, start)) {
        yield* emit(data.subarray(start, nl), pendingOffset + start);
        start = nl + 1;
      }
      pending = Buffer.from(data.subarray(start));
      pendingOffset += start;
      position += n;
    }
    if (pending.length > 0) yield* emit(pending, pendingOffset);
  } finally {
    closeSync(fd);
  }
}

/** A streamed conversation and its file:line (the shape of data.ts's Conversation). */
export interface StreamedConversation {
  messages: Message[];
  where: string;
}

interface Block {
  offset: number;
  line: number;
  rows: number;
}

/** The training rows of a streamed file, one block in memory at a time. */
export class StreamingConversationDataset implements SupervisedDataset {
  private order: number[];
  private seed: number | null = null;
  private cached: { block: number; rows: StreamedConversation[] } | null = null;

  constructor(
    readonly filePath: string,
    private readonly blocks: readonly Block[],
    readonly batchSize: number,
    private readonly map: (conv: StreamedConversation) => Datum,
  ) {
    this.order = blocks.map((_, i) => i);
  }

  /**
   * One pass over the file: every line is checked (JSON, messages, and roles when `roles` is
   * given) and the first `testSize` conversations kept; of the rest only where each block of
   * `blockRows` starts is kept.
   */
  static scan(
    path: string,
    options: {
      testSize: number;
      blockRows: number;
      batchSize: number;
      roles?: { names: readonly string[]; renderer: string };
      map: (conv: StreamedConversation) => Datum;
    },
  ): { train: StreamingConversationDataset; test: StreamedConversation[] } {
    if (options.blockRows % options.batchSize !== 0)
      throw new DataFormatError(`blockRows=${options.blockRows} must be a multiple of batch_size=${options.batchSize}`);
    const test: StreamedConversation[] = [];
    const blocks: Block[] = [];
    let rows = 0;
    for (const { offset, line, text } of fileLines(path)) {
      const where = `${path}:${line}`;
      const messages = parseConversationLine(text, where);
      if (options.roles !== undefined) checkRoles(messages, options.roles.names, options.roles.renderer, where);
      if (test.length < options.testSize) {
        test.push({ messages, where });
        continue;
      }
      if (rows % options.blockRows === 0) blocks.push({ offset, line, rows: 0 });
      blocks.at(-1)!.rows += 1;
      rows += 1;
    }
    if (rows + test.length === 0) throw new DataFormatError(`${path}: the dataset is empty (no conversations)`);
    if (rows === 0)
      throw new DataFormatError(`${path}: test_size=${options.testSize} leaves no training examples (the dataset has ${test.length}); lower test_size`);
    if (options.batchSize > rows)
      throw new DataFormatError(`${path}: batch_size=${options.batchSize} is larger than the ${rows} training examples; lower batch_size`);
    return { train: new StreamingConversationDataset(path, blocks, options.batchSize, options.map), test };
  }

  get length(): number {
    return this.blocks.reduce((n, b) => n + Math.floor(b.rows / this.batchSize), 0);
  }

  /** Block order and in-block shuffles from the epoch's seed (file order before the first). */
  setEpoch(seed: number): void {
    this.seed = seed;
    this.order = seededPermutation(this.blocks.length, seed);
    this.cached = null;
  }

  /** The conversations of batch `index` of this epoch (reads its block when it is not the one held). */
  rowsOfBatch(index: number): StreamedConversation[] {
    if (!Number.isInteger(index) || index < 0 || index >= this.length) {
      throw new RangeError(`batch ${index} is out of range: the dataset has ${this.length} batches of ${this.batchSize}`);
    }
    let rest = index;
    for (const block of this.order) {
      const batches = Math.floor(this.blocks[block]!.rows / this.batchSize);
      if (rest < batches) return this.blockRows(block).slice(rest * this.batchSize, (rest + 1) * this.batchSize);
      rest -= batches;
    }
    throw new RangeError(`batch ${index} not found`);
  }

  getBatch(index: number): Datum[] {
    return this.rowsOfBatch(index).map(this.map);
  }

  private blockRows(block: number): StreamedConversation[] {
    if (this.cached?.block === block) return this.cached.rows;
    const b = this.blocks[block]!;
    const to = this.blocks[block + 1]?.offset ?? Number.POSITIVE_INFINITY;
    const rows: StreamedConversation[] = [];
    for (const { line, text } of fileLines(this.filePath, b.offset, to, b.line)) {
      const where = `${this.filePath}:${line}`;
      rows.push({ messages: parseConversationLine(text, where), where });
    }
    if (rows.length !== b.rows)
      throw new DataFormatError(`${this.filePath} changed while training: block at line ${b.line} has ${rows.length} rows, had ${b.rows}`);
    const shuffled = this.seed === null ? rows : seededShuffle(rows, this.seed * 1_000_003 + block);
    this.cached = { block, rows: shuffled };
    return shuffled;
  }
}
