// Conversations from parquet files (the format the Hugging Face hub stores datasets in), read
// with hyparquet. A `messages` column may hold a list of {role, content} structs (what the hub's
// chat datasets use) or a JSON string of that list.
import { DatasetRowError, streamParquetRows } from "../../hf/parquetRows.ts";
import { MessageSchema, type Message } from "../../renderers/types.ts";
import { DataFormatError } from "../conversationFile.ts";
import type { Conversation } from "../data.ts";

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

/** Every row's conversation, in file order; rows are named "<file> row <n>" (0-based) in errors. */
export async function readParquetConversations(files: readonly string[], messageField = "messages"): Promise<Conversation[]> {
  const out: Conversation[] = [];
  for (const file of files) {
    try {
      for await (const { row, values } of streamParquetRows(file, [messageField])) {
        const where = `${file} row ${row}`;
        if (!(messageField in values)) throw new DataFormatError(`${where}: no "${messageField}" column`);
        out.push({ messages: toMessages(values[messageField], where, messageField), where });
      }
    } catch (err) {
      if (err instanceof DatasetRowError) throw new DataFormatError(`${file}: cannot read as parquet with a "${messageField}" column: ${err.message}`);
      throw err;
    }
  }
  return out;
}
