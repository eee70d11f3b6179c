// How tools reach the model and its calls come back: renderers with a native tool format (Qwen3,
// DeepSeek V3, Kimi K2, GPT-OSS) declare tools and parse calls themselves; renderers without one
// (role_colon, llama3 here) get a plain-text convention, `<call>NAME {JSON}</call>`, declared in
// a system message and parsed from the decoded text, with `</call>` added to the stop strings.
// A tool whose only argument is a string may also be called as `<call>NAME raw text</call>`: the
// short form a very small model can learn (the tool_use recipe's tiny model garbles the JSON one).
import type { StopCondition } from "../completers.ts";
import { Renderer } from "../renderers/base.ts";
import type { Message, ParsedResponse, ToolCall, ToolSpec, UnparsedToolCall } from "../renderers/types.ts";

export interface ToolCallFormat {
  readonly kind: "native" | "text";
  /** Messages that open the conversation and declare the tools. */
  declareTools(tools: ToolSpec[], systemPrompt: string): Message[];
  stopCondition(): StopCondition;
  /** The assistant message with `tool_calls` / `unparsed_tool_calls`, and how the sample ended. */
  parse(tokens: readonly number[]): ParsedResponse;
  /** The message that hands a tool's result back to the model. */
  toolResultMessage(call: ToolCall, content: string): Message;
}

export function hasNativeTools(renderer: Renderer): boolean {
  return renderer.createConversationPrefixWithTools !== Renderer.prototype.createConversationPrefixWithTools;
}

export class NativeToolCallFormat implements ToolCallFormat {
  readonly kind = "native" as const;
  constructor(readonly renderer: Renderer) {}

  declareTools(tools: ToolSpec[], systemPrompt: string): Message[] {
    return this.renderer.createConversationPrefixWithTools(tools, systemPrompt);
  }

  stopCondition(): StopCondition {
    return this.renderer.getStopSequences();
  }

  parse(tokens: readonly number[]): ParsedResponse {
    return this.renderer.parseResponse(tokens);
  }

  toolResultMessage(call: ToolCall, content: string): Message {
    const message: Message = { role: "tool", content, name: call.function.name };
    if (call.id) message.tool_call_id = call.id;
    return message;
  }
}

export const CALL_OPEN = "<call>";
export const CALL_CLOSE = "</call>";
const CALL_BODY_RE = /^\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*([\s\S]*?)\s*$/;

/** The text of one call in the plain-text convention (what synthetic transcripts write). */
export function textToolCall(name: string, args: Record<string, unknown>): string {
  return `${CALL_OPEN}${name} ${JSON.stringify(args)}${CALL_CLOSE}`;
}

/** The short form for a tool with one string argument: `<call>NAME text</call>`. */
export function textToolCallShort(name: string, text: string): string {
  return `${CALL_OPEN}${name} ${text}${CALL_CLOSE}`;
}

/** The name of a spec's only parameter when it is a string, else null. */
export function singleStringParameter(spec: ToolSpec): string | null {
  const props = (spec.parameters["properties"] ?? {}) as Record<string, { type?: unknown }>;
  const keys = Object.keys(props);
  return keys.length === 1 && props[keys[0]!]?.type === "string" ? keys[0]! : null;
}

/**
 * Parses `NAME {JSON object}` from the inside of a `<call>` block, or `NAME text` when `specs`
 * gives NAME a single string parameter.
 */
export function parseCallBody(body: string, index: number, specs: ReadonlyMap<string, ToolSpec> = new Map()): ToolCall | UnparsedToolCall {
  const raw_text = `${CALL_OPEN}${body}${CALL_CLOSE}`;
  const m = CALL_BODY_RE.exec(body);
  if (m === null) return { raw_text, error: "a call is <call>NAME {JSON arguments}</call>; no tool name found" };
  const spec = specs.get(m[1]!);
  const single = spec === undefined ? null : singleStringParameter(spec);
  if (single !== null && !m[2]!.trim().startsWith("{")) {
    return { type: "function", id: `call_${index}`, function: { name: m[1]!, arguments: JSON.stringify({ [single]: m[2]!.trim() }) } };
  }
  const argsText = m[2]!.trim() === "" ? "{}" : m[2]!;
  let args: unknown;
  try {
    args = JSON.parse(argsText);
  } catch (err) {
    return { raw_text, error: `arguments are not valid JSON: ${(err as Error).message}` };
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) return { raw_text, error: "arguments must be a JSON object" };
  return { type: "function", id: `call_${index}`, function: { name: m[1]!, arguments: JSON.stringify(args) } };
}

export class TextToolCallFormat implements ToolCallFormat {
  readonly kind = "text" as const;
  private readonly baseStops: string[];
  private readonly specs = new Map<string, ToolSpec>();

  constructor(readonly renderer: Renderer) {
    const stops = renderer.getStopSequences();
    if (stops.length > 0 && typeof stops[0] === "number") {
      throw new Error(
        `renderer ${renderer.rendererName} stops on token ids and has no native tool format; the text tool-call convention needs string stop sequences`,
      );
    }
    this.baseStops = stops as string[];
  }

  declareTools(tools: ToolSpec[], systemPrompt: string): Message[] {
    for (const t of tools) this.specs.set(t.name, t);
    const lines = tools.map((t) => {
      const props = (t.parameters["properties"] ?? {}) as Record<string, unknown>;
      return `${t.name}(${Object.keys(props).join(", ")}): ${t.description}`;
    });
    const head = systemPrompt.trim() === "" ? "" : `${systemPrompt.trim()}\n`;
    return [{ role: "system", content: `${head}Tools: ${lines.join("; ")}. Call one with ${CALL_OPEN}NAME {JSON}${CALL_CLOSE}.` }];
  }

  stopCondition(): StopCondition {
    return [...this.baseStops, CALL_CLOSE];
  }

  parse(tokens: readonly number[]): ParsedResponse {
    const eos = this.renderer.tokenizer.eosTokenId;
    const body = eos !== null && tokens.length > 0 && tokens[tokens.length - 1] === eos ? tokens.slice(0, -1) : tokens;
    const text = this.renderer.tokenizer.decode([...body]);
    const open = text.indexOf(CALL_OPEN);
    if (open < 0) return this.renderer.parseResponse(tokens);
    // The sampler stops at the first `</call>`, so one call per turn; text before it is kept.
    const rest = text.slice(open + CALL_OPEN.length);
    const close = rest.indexOf(CALL_CLOSE);
    const content = text.slice(0, close < 0 ? text.length : open + CALL_OPEN.length + close + CALL_CLOSE.length).replace(/^ /, "");
    const message: Message = { role: "assistant", content };
    if (close < 0) {
      message.unparsed_tool_calls = [{ raw_text: text.slice(open), error: `no ${CALL_CLOSE} after ${CALL_OPEN}` }];
      return { message, termination: "malformed" };
    }
    const call = parseCallBody(rest.slice(0, close), 0, this.specs);
    if ("raw_text" in call) message.unparsed_tool_calls = [call];
    else message.tool_calls = [call];
    return { message, termination: "stop_sequence" };
  }

  toolResultMessage(call: ToolCall, content: string): Message {
    return { role: "tool", content, name: call.function.name };
  }
}

/** The renderer's own tool format when it has one, else the text convention. */
export function toolCallFormatFor(renderer: Renderer): ToolCallFormat {
  return hasNativeTools(renderer) ? new NativeToolCallFormat(renderer) : new TextToolCallFormat(renderer);
}
