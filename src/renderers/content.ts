// Helpers over message content (string or parts), shared by the renderers.
import { RendererError, type Content, type ContentPart, type Message, type ToolCall, type UnparsedToolCall } from "./types.ts";
import { pythonJsonDumps } from "./pyjson.ts";

/** The content as text; parts other than text are refused. */
export function ensureText(content: Content): string {
  if (typeof content === "string") return content;
  if (content.length === 1 && content[0]!.type === "text") return content[0]!.text;
  if (content.every((p) => p.type === "text")) return content.map((p) => (p.type === "text" ? p.text : "")).join("");
  throw new RendererError(`expected text-only content here, got parts of types [${content.map((p) => p.type).join(", ")}]`);
}

export function ensureList(content: Content): ContentPart[] {
  return typeof content === "string" ? (content === "" ? [] : [{ type: "text", text: content }]) : content;
}

/** Whether content carries reasoning: a thinking part, or an opening <think> in a string. */
export function hasThinking(content: Content): boolean {
  if (typeof content === "string") return content.includes("<think>");
  return content.some((p) => p.type === "thinking");
}

export function removeThinking(parts: ContentPart[]): ContentPart[] {
  return parts.filter((p) => p.type !== "thinking");
}

/** The visible text of a message: its text parts joined, thinking left out. */
export function getTextContent(message: Message): string {
  const c = message.content;
  if (typeof c === "string") return c;
  return c.map((p) => (p.type === "text" ? p.text : "")).join("");
}

export function thinkingText(content: Content): string {
  if (typeof content === "string") return "";
  return content.map((p) => (p.type === "thinking" ? p.thinking : "")).join("");
}

/** Content as one string for display, thinking shown in <think> tags. */
export function formatContentAsString(content: Content, separator = "\n"): string {
  if (typeof content === "string") return content;
  return content
    .map((p) => (p.type === "text" ? p.text : p.type === "thinking" ? `<think>${p.thinking}</think>` : `<image>${describeImageSource(p.image)}</image>`))
    .join(separator);
}

/** A short description of an image source for display (data URIs are not printed in full). */
export function describeImageSource(source: string): string {
  if (!source.startsWith("data:")) return source;
  const comma = source.indexOf(",");
  return `${source.slice(0, comma === -1 ? 30 : comma)},…(${source.length} chars)`;
}

export function hasImages(content: Content): boolean {
  return typeof content !== "string" && content.some((p) => p.type === "image");
}

export function parseToolCallJson(json: string, rawText: string): ToolCall | UnparsedToolCall {
  let value: unknown;
  try {
    value = JSON.parse(json.trim());
  } catch (err) {
    return { raw_text: rawText, error: `Invalid JSON: ${(err as Error).message}` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { raw_text: rawText, error: "Tool call is not a JSON object" };
  }
  const obj = value as Record<string, unknown>;
  if (typeof obj["name"] !== "string") return { raw_text: rawText, error: "Missing or invalid 'name' field" };
  const args = obj["arguments"];
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    return { raw_text: rawText, error: "Missing or invalid 'arguments' field" };
  }
  const id = typeof obj["id"] === "string" ? obj["id"] : null;
  return { type: "function", id, function: { name: obj["name"], arguments: pythonJsonDumps(args) } };
}

export function isToolCall(t: ToolCall | UnparsedToolCall): t is ToolCall {
  return "function" in t;
}

/**
 * Splits text holding <think>…</think> and <tool_call>…</tool_call> blocks into parts and tool
 * calls, keeping the whitespace outside the blocks exactly. Null when there is neither tag.
 */
export function parseContentBlocks(content: string): { parts: ContentPart[]; toolCalls: (ToolCall | UnparsedToolCall)[] } | null {
  if (!content.includes("<think>") && !content.includes("<tool_call>")) return null;
  const parts: ContentPart[] = [];
  const toolCalls: (ToolCall | UnparsedToolCall)[] = [];
  const pattern = /<think>([\s\S]*?)<\/think>|<tool_call>([\s\S]*?)<\/tool_call>/g;
  let pos = 0;
  for (const m of content.matchAll(pattern)) {
    const before = content.slice(pos, m.index);
    if (before) parts.push({ type: "text", text: before });
    if (m[1] !== undefined) {
      if (m[1]) parts.push({ type: "thinking", thinking: m[1] });
    } else {
      toolCalls.push(parseToolCallJson(m[2] ?? "", m[0]));
    }
    pos = m.index + m[0].length;
  }
  const rest = content.slice(pos);
  if (rest) parts.push({ type: "text", text: rest });
  return { parts, toolCalls };
}

/** Splits text holding only <think>…</think> blocks into parts; null when there is none. */
export function parseThinkBlocks(content: string): ContentPart[] | null {
  if (!content.includes("<think>")) return null;
  const parts: ContentPart[] = [];
  let pos = 0;
  for (const m of content.matchAll(/<think>([\s\S]*?)<\/think>/g)) {
    const before = content.slice(pos, m.index);
    if (before) parts.push({ type: "text", text: before });
    if (m[1]) parts.push({ type: "thinking", thinking: m[1] });
    pos = m.index + m[0].length;
  }
  const rest = content.slice(pos);
  if (rest) parts.push({ type: "text", text: rest });
  return parts;
}

export const UNTERMINATED_TOOL_BLOCK_ERROR = "unterminated tool block";

const DETAIL_MAX_CHARS = 16384;

function countOf(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

/**
 * A tool block opened more often than closed, reported as an unparsed call so a response that
 * ended cleanly but left its call open is a retryable content failure, not silent plain text.
 */
export function detectUnterminatedToolBlock(content: string, open: string, close: string): UnparsedToolCall | null {
  const opens = countOf(content, open);
  if (opens === 0 || opens <= countOf(content, close)) return null;
  return {
    raw_text: content.slice(content.lastIndexOf(open)).slice(0, DETAIL_MAX_CHARS),
    error: `${UNTERMINATED_TOOL_BLOCK_ERROR}: '${open}' opened without a matching '${close}'`,
  };
}

export type ParseFailureKind = "structural" | "content";

/**
 * The parse failure in a parseResponse result, if any: "structural" when the framing broke (no
 * clean termination; not recoverable within an episode), "content" when it ended cleanly but a tool
 * block did not parse (the model can be asked again). Structural wins when both apply.
 */
export function classifyParseFailure(message: Message, termination: "stop_sequence" | "eos" | "malformed"): { kind: ParseFailureKind; detail: string } | null {
  if (termination === "malformed") {
    return {
      kind: "structural",
      detail: "response did not terminate cleanly (termination=malformed): expected the renderer's stop signal or EOS, so the message framing is broken",
    };
  }
  const unparsed = message.unparsed_tool_calls ?? [];
  if (unparsed.length > 0) {
    return {
      kind: "content",
      detail: unparsed
        .map((u) => u.error)
        .join("\n")
        .slice(0, DETAIL_MAX_CHARS),
    };
  }
  return null;
}
