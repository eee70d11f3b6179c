// Nemotron 3 (Nano, Super) and Nemotron 3 Ultra / 3.5 Lightning: Qwen3.5's turn syntax and XML
// tool calls with their own template details (docs/cookbook-parity.md#family-formats): tools declared in
// XML after the system prompt, an (empty) system block always written, <think></think> on every
// assistant turn whose reasoning is not shown (history included), one newline after </think>
// (Ultra: none), tool responses that end with their own newline, and "<think></think>" with no
// newlines as the thinking-off prompt suffix.
import type { Tokenizer } from "../tokenizers/types.ts";
import { hasThinking } from "./content.ts";
import { pythonJsonDumps } from "./pyjson.ts";
import { Qwen3_5Renderer, xmlToolsText } from "./qwenVl.ts";
import { RendererError, type Message, type RenderContext, type RenderedMessage, type ToolSpec } from "./types.ts";

/** Extra schema keys as <key>value</key> lines: containers as JSON, scalars as Python's str(). */
function extraKeys(obj: Record<string, unknown>, handled: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(obj)) {
    if (handled.has(k)) continue;
    const text = v !== null && typeof v === "object" ? pythonJsonDumps(v) : typeof v === "boolean" ? (v ? "True" : "False") : v === null ? "None" : String(v);
    out.push(`<${k}>${text}</${k}>`);
  }
  return out;
}

const PARAM_KEYS = new Set(["name", "type", "description", "enum"]);
const PARAMS_KEYS = new Set(["type", "properties", "required"]);
const TOOL_KEYS = new Set(["type", "name", "description", "parameters"]);

/** One tool in Nemotron 3's XML declaration format. */
export function nemotronToolDeclaration(tool: ToolSpec): string {
  const lines = ["<function>", `<name>${tool.name}</name>`];
  if (tool.description.trim()) lines.push(`<description>${tool.description.trim()}</description>`);
  lines.push("<parameters>");
  const params = tool.parameters;
  const props = params["properties"];
  if (props !== null && typeof props === "object") {
    for (const [name, fieldsIn] of Object.entries(props as Record<string, unknown>)) {
      const fields = (fieldsIn ?? {}) as Record<string, unknown>;
      lines.push("<parameter>", `<name>${name}</name>`);
      if ("type" in fields) lines.push(`<type>${typeof fields["type"] === "string" ? fields["type"] : pythonJsonDumps(fields["type"])}</type>`);
      if (typeof fields["description"] === "string") lines.push(`<description>${fields["description"].trim()}</description>`);
      if ("enum" in fields) lines.push(`<enum>${pythonJsonDumps(fields["enum"])}</enum>`);
      lines.push(...extraKeys(fields, PARAM_KEYS), "</parameter>");
    }
  }
  lines.push(...extraKeys(params, PARAMS_KEYS));
  if ("required" in params) lines.push(`<required>${pythonJsonDumps(params["required"])}</required>`);
  lines.push("</parameters>", ...extraKeys(tool as unknown as Record<string, unknown>, TOOL_KEYS), "</function>");
  return lines.join("\n");
}

export interface Nemotron3Options {
  stripThinkingFromHistory?: boolean;
  /** Super's low-effort mode: "{reasoning effort: low}" after the last user message. */
  effortSuffix?: string | null;
}

export class Nemotron3Renderer extends Qwen3_5Renderer {
  protected readonly effortSuffix: string | null;

  constructor(tokenizer: Tokenizer, name = "nemotron3", options: Nemotron3Options = {}) {
    super(tokenizer, name, { stripThinkingFromHistory: options.stripThinkingFromHistory ?? true });
    this.effortSuffix = options.effortSuffix ?? null;
  }

  override get supportsImages(): boolean {
    return false;
  }

  /** Only the variants that keep history reasoning render every turn the way it was sampled. */
  override get hasExtensionProperty(): boolean {
    return !this.stripThinkingFromHistory;
  }

  /** The template always writes a system block, empty when the conversation has none. */
  protected override prepareMessages(messages: readonly Message[]): Message[] {
    if (messages[0]?.role === "system") return [...messages];
    const system: Message = { role: "system", content: "" };
    if (messages.some((m) => m.trainable !== undefined)) system.trainable = false;
    return [system, ...messages];
  }

  override renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    if (this.effortSuffix !== null && message.role === "user" && ctx.idx === ctx.lastUserIndex) {
      if (typeof message.content !== "string") {
        throw new RendererError(`${this.rendererName}: the reasoning-effort mode appends to the last user message, which must be a string`);
      }
      message = { ...message, content: `${message.content}\n\n${this.effortSuffix}` };
    }
    return super.renderMessage(message, ctx);
  }

  /** Reasoning is dropped only before the last user message (truncate_history_thinking). */
  protected override stripsThinkingFor(message: Message, ctx: RenderContext): boolean {
    return this.stripThinkingFromHistory && message.role === "assistant" && ctx.idx < ctx.lastUserIndex;
  }

  protected override assistantHeaderSuffix(message: Message, ctx: RenderContext): string {
    const historical = ctx.idx < ctx.lastUserIndex;
    const reasoned = hasThinking(message.content);
    if (reasoned && (!historical || !this.stripThinkingFromHistory)) return "";
    // The template keeps the newline that followed the stripped block when text follows it
    // (but trims it away on tool-call turns).
    if (historical && reasoned) {
      const text = typeof message.content !== "string" && message.content.some((p) => p.type === "text" && p.text !== "");
      if (text && !(message.tool_calls && message.tool_calls.length > 0)) return "<think></think>\n";
    }
    return "<think></think>";
  }

  protected override formatThinking(thinking: string): string {
    return `<think>\n${thinking}\n</think>\n`;
  }

  protected override toolResponseWrap(): [string, string] {
    return ["<tool_response>\n", "\n</tool_response>\n"];
  }

  protected override toolResponseContinuationHeader(): string {
    return "";
  }

  protected override formatToolCalls(message: Message): string {
    const c = message.content;
    const thinkingPart = typeof c !== "string" && c.some((p) => p.type === "thinking");
    const text = typeof c !== "string" && c.some((p) => p.type === "text" && p.text !== "");
    // A rendered reasoning block already ends with a newline.
    const prefix = thinkingPart && !text ? "" : "\n";
    return prefix + (message.tool_calls ?? []).map((tc) => this.toolCallXml(tc) + "\n").join("");
  }

  protected override cleanTextAfterThinking(text: string): string {
    return text.startsWith("\n") ? text.slice(1) : text;
  }

  override createConversationPrefixWithTools(tools: ToolSpec[], systemPrompt = ""): Message[] {
    if (tools.length === 0) return [{ role: "system", content: systemPrompt }];
    const text = xmlToolsText(tools.map(nemotronToolDeclaration).join("\n"));
    return [{ role: "system", content: systemPrompt ? systemPrompt + "\n\n" + text : text }];
  }
}

/** Nemotron 3 with thinking off: the prompt ends "<think></think>". */
export class Nemotron3DisableThinkingRenderer extends Nemotron3Renderer {
  override readonly disablesThinking: boolean = true;

  constructor(tokenizer: Tokenizer, name = "nemotron3_disable_thinking", options: Nemotron3Options = {}) {
    super(tokenizer, name, options);
  }

  protected override generationSuffixText(role: string, ctx: RenderContext): string {
    return `${ctx.idx > 0 ? "\n" : ""}<|im_start|>${role}\n<think></think>`;
  }
}

/** Nemotron 3 Ultra and 3.5 Lightning: reasoning written <think>⏎R</think> with no separators. */
export class Nemotron3UltraRenderer extends Nemotron3Renderer {
  constructor(tokenizer: Tokenizer, name = "nemotron3_ultra", options: Nemotron3Options = {}) {
    super(tokenizer, name, options);
  }

  protected override assistantHeaderSuffix(message: Message, ctx: RenderContext): string {
    const historical = ctx.idx < ctx.lastUserIndex;
    if (hasThinking(message.content) && (!historical || !this.stripThinkingFromHistory)) return "";
    return "<think></think>";
  }

  protected override formatThinking(thinking: string): string {
    return `<think>\n${thinking}</think>`;
  }

  protected override formatToolCalls(message: Message): string {
    return "\n" + (message.tool_calls ?? []).map((tc) => this.toolCallXml(tc) + "\n").join("");
  }

  protected override cleanTextAfterThinking(text: string): string {
    return text;
  }
}

export class Nemotron3UltraDisableThinkingRenderer extends Nemotron3UltraRenderer {
  override readonly disablesThinking: boolean = true;

  constructor(tokenizer: Tokenizer, name = "nemotron3_ultra_disable_thinking", options: Nemotron3Options = {}) {
    super(tokenizer, name, options);
  }

  protected override generationSuffixText(role: string, ctx: RenderContext): string {
    return `${ctx.idx > 0 ? "\n" : ""}<|im_start|>${role}\n<think></think>`;
  }
}
