// Conversations from JSONL, one {"messages": [...]} object per line (the cookbook's
// FromConversationFileBuilder format). Every problem names the file and line.
import { jsonlInputLines } from "../files/jsonlInput.ts";
import { MessageSchema, type Message } from "../renderers/types.ts";

export class DataFormatError extends Error {
  override name = "DataFormatError";
}

export interface ConversationRow {
  /** 1-based line number in the file. */
  line: number;
  messages: Message[];
}

/** Parses one JSONL line; `where` (e.g. "data.jsonl:3") prefixes every error. */
export function parseConversationLine(text: string, where: string): Message[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new DataFormatError(`${where}: not valid JSON (${(err as Error).message})`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value) || !("messages" in value)) {
    throw new DataFormatError(`${where}: expected an object with a "messages" list, e.g. {"messages": [{"role": "user", "content": "Hi"}]}`);
  }
  const raw = (value as { messages: unknown }).messages;
  if (!Array.isArray(raw)) throw new DataFormatError(`${where}: "messages" must be a list of messages, got ${typeof raw}`);
  return raw.map((m, i) => {
    const parsed = MessageSchema.safeParse(m);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const path = issue.path.length > 0 ? `.${issue.path.map(String).join(".")}` : "";
      throw new DataFormatError(`${where}: messages[${i}]${path}: ${issue.message}`);
    }
    return parsed.data;
  });
}

/** Checks every role against those a renderer can write. */
export function checkRoles(messages: readonly Message[], knownRoles: readonly string[], rendererName: string, where: string): void {
  messages.forEach((m, i) => {
    if (!knownRoles.includes(m.role)) {
      throw new DataFormatError(
        `${where}: messages[${i}] has unknown role ${JSON.stringify(m.role)} for renderer ${rendererName} (expected one of: ${knownRoles.join(", ")})`,
      );
    }
  });
}

/** Every non-empty line of a conversation file. */
export function readConversationFile(file: string): ConversationRow[] {
  return jsonlInputLines(file, { makeError: (m) => new DataFormatError(m) }).map(({ where, line, text }) => ({
    line,
    messages: parseConversationLine(text, where),
  }));
}
