// A conversation file read back by range instead of whole (`stream=true` on a .jsonl dataset): one
// pass at build time checks every line (JSON, messages, roles) and keeps only where every
// CHECKPOINT_ROWS-th row starts; a range is then read with positioned reads from the checkpoint
// before it. How rows become batches is src/supervised/stream.ts's.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { DataFormatError, parseConversationLine } from "./conversationFile.ts";
import { checkScanned, type ConversationStream, type ScanChecks, type StreamedConversation } from "./stream.ts";

const CHUNK_BYTES = 1 << 20;
/** Rows between two kept line offsets: a read starts at most this many lines early. */
const CHECKPOINT_ROWS = 64;

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

/** The checked rows of a .jsonl file. */
export function scanConversationFile(path: string, checks?: ScanChecks): ConversationStream {
  const offsets: number[] = [];
  const lines: number[] = [];
  let rows = 0;
  for (const { offset, line, text } of fileLines(path)) {
    const where = `${path}:${line}`;
    checkScanned({ messages: parseConversationLine(text, where), where }, rows, checks);
    if (rows % CHECKPOINT_ROWS === 0) {
      offsets.push(offset);
      lines.push(line);
    }
    rows += 1;
  }
  const read = (start: number, end: number): StreamedConversation[] => {
    const out: StreamedConversation[] = [];
    if (end <= start) return out;
    const checkpoint = Math.floor(start / CHECKPOINT_ROWS);
    let row = checkpoint * CHECKPOINT_ROWS;
    for (const { line, text } of fileLines(path, offsets[checkpoint], Number.POSITIVE_INFINITY, lines[checkpoint])) {
      if (row >= start) {
        const where = `${path}:${line}`;
        out.push({ messages: parseConversationLine(text, where), where });
      }
      row += 1;
      if (row >= end) break;
    }
    return out;
  };
  return { name: path, rows, read: async (start, end) => read(start, end) };
}
