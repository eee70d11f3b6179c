// Rows of the public preference datasets the cookbook trains on, as labeled comparisons. The row
// shape is recognised from its columns, so a local parquet copy of any of them works too:
//   Anthropic/hh-rlhf                           chosen, rejected (whole "Human: … Assistant: …" transcripts)
//   nvidia/HelpSteer3 (config "preference")     context (messages), response1, response2, overall_preference (−3…3)
//   argilla/ultrafeedback-binarized-preferences instruction, chosen_response, rejected_response
//   the cookbook's own JSONL rows               comparison {prompt_conversation, completion_A, completion_B}, label
import { MessageSchema, type Message } from "../renderers/types.ts";
import { DataFormatError } from "../supervised/conversationFile.ts";
import { ComparisonRowSchema, labeledComparisonFromRow, type LabeledComparison } from "./types.ts";

export type RowFormat = "hh_rlhf" | "helpsteer3" | "ultrafeedback" | "cookbook";

/** Skipped rows (ties, malformed transcripts) return null, as in the cookbook's builders. */
export type RowParser = (row: Record<string, unknown>, where: string) => LabeledComparison | null;

const FORMAT_COLUMNS: Record<RowFormat, readonly string[]> = {
  cookbook: ["comparison", "label"],
  hh_rlhf: ["chosen", "rejected"],
  helpsteer3: ["context", "response1", "response2", "overall_preference"],
  ultrafeedback: ["instruction", "chosen_response", "rejected_response"],
};

export function detectRowFormat(columns: readonly string[], where: string): RowFormat {
  for (const [format, needed] of Object.entries(FORMAT_COLUMNS) as [RowFormat, readonly string[]][]) {
    if (needed.every((c) => columns.includes(c))) return format;
  }
  const known = Object.entries(FORMAT_COLUMNS)
    .map(([f, cols]) => `${f} (${cols.join(", ")})`)
    .join("; ");
  throw new DataFormatError(`${where}: columns [${columns.join(", ")}] match no known comparison format; expected one of: ${known}`);
}

function str(row: Record<string, unknown>, key: string, where: string): string {
  const v = row[key];
  if (typeof v !== "string") throw new DataFormatError(`${where}: column "${key}" must be a string, got ${v === null ? "null" : typeof v}`);
  return v;
}

/** "\n\nHuman: hi\n\nAssistant: hello" → messages (the hh-rlhf transcript format). */
export function parseHhTranscript(text: string): Message[] {
  const parts = text.split(/(Human:|Assistant:)/);
  const out: Message[] = [];
  for (let i = 1; i + 1 < parts.length; i += 2) {
    out.push({ role: parts[i] === "Human:" ? "user" : "assistant", content: parts[i + 1]!.trim() });
  }
  return out;
}

function sameMessage(a: Message, b: Message): boolean {
  return a.role === b.role && JSON.stringify(a.content) === JSON.stringify(b.content);
}

const parseHh: RowParser = (row, where) => {
  const chosen = parseHhTranscript(str(row, "chosen", where));
  const rejected = parseHhTranscript(str(row, "rejected", where));
  // The two transcripts must share everything but their final assistant turn; a few rows do not.
  if (chosen.length === 0 || chosen.length !== rejected.length) return null;
  const last = chosen.length - 1;
  for (let i = 0; i < last; i++) if (!sameMessage(chosen[i]!, rejected[i]!)) return null;
  if (sameMessage(chosen[last]!, rejected[last]!) || chosen[last]!.role !== "assistant") return null;
  return { comparison: { promptConversation: chosen.slice(0, last), completionA: [chosen[last]!], completionB: [rejected[last]!] }, label: "A" };
};

function messagesColumn(value: unknown, where: string, key: string): Message[] {
  let raw = value;
  if (typeof raw === "string") {
    try {
      raw = JSON.parse(raw);
    } catch {
      throw new DataFormatError(`${where}: column "${key}" holds a string that is not a JSON list of messages`);
    }
  }
  if (!Array.isArray(raw)) throw new DataFormatError(`${where}: column "${key}" must be a list of {role, content} messages`);
  return raw.map((m: unknown, i) => {
    // Parquet structs carry every schema field; absent ones come back null.
    const cleaned = m !== null && typeof m === "object" ? Object.fromEntries(Object.entries(m).filter(([, v]) => v !== null && v !== undefined)) : m;
    const parsed = MessageSchema.safeParse(cleaned);
    if (!parsed.success) throw new DataFormatError(`${where}: ${key}[${i}]: ${parsed.error.issues[0]!.message}`);
    return parsed.data;
  });
}

const parseHelpSteer3: RowParser = (row, where) => {
  const pref = Number(row["overall_preference"]);
  if (!Number.isFinite(pref))
    throw new DataFormatError(`${where}: column "overall_preference" must be a number from -3 to 3, got ${JSON.stringify(row["overall_preference"])}`);
  if (pref === 0) return null;
  return {
    comparison: {
      promptConversation: messagesColumn(row["context"], where, "context"),
      completionA: [{ role: "assistant", content: str(row, "response1", where) }],
      completionB: [{ role: "assistant", content: str(row, "response2", where) }],
    },
    // Negative means response1 is better.
    label: pref < 0 ? "A" : "B",
  };
};

const parseUltraFeedback: RowParser = (row, where) => ({
  comparison: {
    promptConversation: [{ role: "user", content: str(row, "instruction", where) }],
    completionA: [{ role: "assistant", content: str(row, "chosen_response", where) }],
    completionB: [{ role: "assistant", content: str(row, "rejected_response", where) }],
  },
  label: "A",
});

const parseCookbook: RowParser = (row, where) => {
  let comparison = row["comparison"];
  if (typeof comparison === "string") {
    try {
      comparison = JSON.parse(comparison) as unknown;
    } catch {
      throw new DataFormatError(`${where}: column "comparison" holds a string that is not JSON`);
    }
  }
  const value = { comparison: stripNulls(comparison), label: row["label"] };
  const parsed = ComparisonRowSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new DataFormatError(`${where}: ${issue.path.map(String).join(".") || "(row)"}: ${issue.message}`);
  }
  return labeledComparisonFromRow(parsed.data);
};

/** Parquet structs come back with every schema field, absent ones null; zod wants them absent. */
function stripNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripNulls);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [k, stripNulls(v)]),
  );
}

export const ROW_PARSERS: Record<RowFormat, RowParser> = {
  hh_rlhf: parseHh,
  helpsteer3: parseHelpSteer3,
  ultrafeedback: parseUltraFeedback,
  cookbook: parseCookbook,
};
