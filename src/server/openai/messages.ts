// OpenAI chat messages and tools in, the renderer's messages out (and back for the reply). The
// renderer builds the prompt exactly as training and evaluation do; tools go through its own
// declaration format, so only renderers with tool calling accept them.
import { randomBytes } from "node:crypto";
import type { Renderer } from "../../renderers/base.ts";
import { getTextContent, thinkingText } from "../../renderers/content.ts";
import type { Message, ToolSpec } from "../../renderers/types.ts";
import { HttpError } from "../http.ts";
import type { ChatCompletionRequest, ChatMessage } from "./schemas.ts";

export function invalidRequest(message: string, param: string | null = null, status = 400): HttpError {
  return new HttpError(status, { error: { message, type: "invalid_request_error", param, code: null } });
}

function textOf(m: ChatMessage, index: number): string {
  if (m.content === null || m.content === undefined) return "";
  if (typeof m.content === "string") return m.content;
  return m.content
    .map((p, j) => {
      if (p.type === "text" && typeof p["text"] === "string") return p["text"];
      throw invalidRequest(
        `messages[${index}].content[${j}] is of type ${JSON.stringify(p.type)}; this server takes text parts only`,
        `messages[${index}].content`,
      );
    })
    .join("");
}

function toMessage(m: ChatMessage, index: number): Message {
  const out: Message = { role: m.role === "developer" ? "system" : m.role, content: textOf(m, index) };
  if (m.reasoning_content)
    out.content = [
      { type: "thinking", thinking: m.reasoning_content },
      { type: "text", text: textOf(m, index) },
    ];
  if (m.tool_calls && m.tool_calls.length > 0) {
    out.tool_calls = m.tool_calls.map((tc) => ({
      type: "function",
      id: tc.id ?? null,
      function: { name: tc.function.name, arguments: tc.function.arguments },
    }));
  }
  if (m.tool_call_id) out.tool_call_id = m.tool_call_id;
  if (m.name) out.name = m.name;
  return out;
}

/** The conversation to render: a leading system message folds into the tool declarations when there are tools. */
export function conversation(req: ChatCompletionRequest, renderer: Renderer): Message[] {
  const messages = req.messages.map(toMessage);
  const tools = req.tool_choice === "none" ? [] : (req.tools ?? []);
  if (tools.length === 0) return messages;
  const specs: ToolSpec[] = tools.map((t) => ({
    name: t.function.name,
    description: t.function.description ?? "",
    parameters: t.function.parameters ?? { type: "object", properties: {} },
  }));
  const system = messages[0]?.role === "system" ? messages.shift()! : null;
  let prefix: Message[];
  try {
    prefix = renderer.createConversationPrefixWithTools(specs, system === null ? "" : getTextContent(system));
  } catch (err) {
    throw invalidRequest(`${(err as Error).message}; the model's renderer cannot declare tools, so send the request without "tools"`, "tools");
  }
  return [...prefix, ...messages];
}

export interface OpenAIToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** The reply as an OpenAI assistant message, with tool calls given ids when the model wrote none. */
export function replyMessage(m: Message, content: string): { content: string; reasoning_content?: string; tool_calls?: OpenAIToolCall[] } {
  const out: { content: string; reasoning_content?: string; tool_calls?: OpenAIToolCall[] } = { content };
  const reasoning = thinkingText(m.content);
  if (reasoning) out.reasoning_content = reasoning;
  if (m.tool_calls && m.tool_calls.length > 0) {
    out.tool_calls = m.tool_calls.map((tc) => ({
      id: tc.id ?? `call_${randomBytes(6).toString("hex")}`,
      type: "function",
      function: { name: tc.function.name, arguments: tc.function.arguments },
    }));
  }
  return out;
}

/** The text up to the first of `stops`, and whether one was found. */
export function cutAtStop(text: string, stops: readonly string[]): { text: string; stopped: boolean } {
  let at = -1;
  for (const s of stops) {
    const i = text.indexOf(s);
    if (i !== -1 && (at === -1 || i < at)) at = i;
  }
  return at === -1 ? { text, stopped: false } : { text: text.slice(0, at), stopped: true };
}
