// Conversations from parquet files (the format the Hugging Face hub stores datasets in), read
// with hyparquet. A `messages` column may hold a list of {role, content} structs (what the hub's
// chat datasets use) or a JSON string of that list.
import { DatasetRowError, readParquetRowRange, streamParquetRows } from "../../hf/parquetRows.ts";
import { MessageSchema, type Message } from "../../renderers/types.ts";
import { DataFormatError } from "../conversationFile.ts";
import type { Conversation } from "../data.ts";
import { checkReadBack, checkScanned, type ConversationStream, type ScanChecks, type StreamedConversation } from "../stream.ts";

function toMessages(value: unknown, where: string, field: string): Message[] {
  let raw = value;
  if (typeof raw === "string") {
    try {
      raw = JSON.parse(raw);
    } catch {
      throw new DataFormatError(`${where}: column "${field}" holds a string that is not a JSON list of messages`);
    }
  }
  if (!Array.isArray(raw)) {
    throw new DataFormatError(`${where}: column "${field}" must be a list of {role, content} messages, got ${raw === null ? "null" : typeof raw}`);
  }
  return raw.map((m: unknown, i) => {
    // Parquet structs carry every field of the schema; absent ones come back as null.
    const cleaned = m !== null && typeof m === "object" ? Object.fromEntries(Object.entries(m).filter(([, v]) => v !== null && v !== undefined)) : m;
    const parsed = MessageSchema.safeParse(cleaned);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const path = issue.path.length > 0 ? `.${issue.path.map(String).join(".")}` : "";
      throw new DataFormatError(`${where}: ${field}[${i}]${path}: ${issue.message}`);
    }
    return parsed.data;
  });
}

function conversationOf(file: string, row: number, values: Record<string, unknown>, messageField: string): Conversation {
  const where = `${file} row ${row}`;
  if (!(messageField in values)) throw new DataFormatError(`${where}: no "${messageField}" column`);
  return { messages: toMessages(values[messageField], where, messageField), where };
}

async function* fileConversations(file: string, messageField: string): AsyncGenerator<Conversation> {
  try {
    for await (const { row, values } of streamParquetRows(file, [messageField])) yield conversationOf(file, row, values, messageField);
  } catch (err) {
    if (err instanceof DatasetRowError) throw new DataFormatError(`${file}: cannot read as parquet with a "${messageField}" column: ${err.message}`);
    throw err;
  }
}

/** Every row's conversation, in file order; rows are named "<file> row <n>" (0-based) in errors. */
export async function readParquetConversations(files: readonly string[], messageField = "messages"): Promise<Conversation[]> {
  const out: Conversation[] = [];
  for (const file of files) for await (const conv of fileConversations(file, messageField)) out.push(conv);
  return out;
}

/**
 * The conversations of parquet files as a stream (`stream=true`): one pass, a row group at a time,
 * checks every row and keeps only each file's row count; a
 * range is read back from the row groups it falls in.
 */
export async function scanParquetConversations(
  name: string,
  files: readonly string[],
  messageField = "messages",
  checks?: ScanChecks,
): Promise<ConversationStream> {
  const counts: number[] = [];
  let rows = 0;
  for (const file of files) {
    let n = 0;
    for await (const conv of fileConversations(file, messageField)) checkScanned(conv, rows + n++, checks);
    counts.push(n);
    rows += n;
  }
  const read = async (start: number, end: number): Promise<StreamedConversation[]> => {
    const out: StreamedConversation[] = [];
    let first = 0;
    for (const [i, file] of files.entries()) {
      const from = Math.max(start, first);
      const to = Math.min(end, first + counts[i]!);
      if (from < to) {
        let got: Awaited<ReturnType<typeof readParquetRowRange>>;
        try {
          got = await readParquetRowRange(file, from - first, to - first, [messageField]);
        } catch (err) {
          if (err instanceof DatasetRowError) throw new DataFormatError(`${name} changed while training: ${err.message}`);
          throw err;
        }
        checkReadBack(file, from - first, to - from, got.length);
        for (const r of got) out.push(conversationOf(file, r.row, r.values, messageField));
      }
      first += counts[i]!;
      if (first >= end) break;
    }
    return out;
  };
  return { name, rows, read };
}
