// GPT-OSS (Harmony): <|start|>ROLE<|channel|>CH<|message|>TEXT<|end|>, no BOS, no newlines.
// Reasoning goes to the analysis channel, the answer to final, tool calls to commentary with a
// `to=functions.NAME` recipient. Unlike HF's template, analysis is kept in history (no stripping),
// and the final assistant message ends <|return|> while historical ones end <|end|>.
import type { Tokenizer } from "../tokenizers/types.ts";
import { Renderer, requireSingleToken } from "./base.ts";
import { ensureList, ensureText } from "./content.ts";
import {
  RendererError,
  type ContentPart,
  type Message,
  type ParsedResponse,
  type RenderContext,
  type RenderedMessage,
  type ToolCall,
  type ToolSpec,
  type UnparsedToolCall,
} from "./types.ts";
import { formatToolDefinition } from "./harmonyTools.ts";

/** Renders as a real `system` message (user "system" messages become `developer`). */
const INTERNAL_SYSTEM_ROLE = "_gptoss_internal_system";

export type ReasoningEffort = "low" | "medium" | "high";

export interface GptOssOptions {
  /** Prepend OpenAI's built-in system prompt with this reasoning effort; null = no system prompt. */
  reasoningEffort?: ReasoningEffort | null;
  /** Date written in the system prompt (YYYY-MM-DD); default today, set it for reproducible prompts. */
  currentDate?: string | null;
}

function today(): string {
  const d = new Date();
  const pad = (n: number): string => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

export class GptOssRenderer extends Renderer {
  readonly reasoningEffort: ReasoningEffort | null;
  readonly currentDate: string | null;
  private readonly returnToken: number;
  private readonly callToken: number;

  constructor(tokenizer: Tokenizer, name = "gpt_oss_no_sysprompt", options: GptOssOptions = {}) {
    super(tokenizer, name);
    this.reasoningEffort = options.reasoningEffort ?? null;
    this.currentDate = options.currentDate ?? null;
    for (const t of ["<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|constrain|>"]) requireSingleToken(tokenizer, t, name);
    this.returnToken = requireSingleToken(tokenizer, "<|return|>", name);
    this.callToken = requireSingleToken(tokenizer, "<|call|>", name);
  }

  override knownRoles(): readonly string[] {
    return ["system", "developer", "user", "assistant", "tool"];
  }

  systemPromptText(): string | null {
    if (this.reasoningEffort === null) return null;
    return (
      "You are ChatGPT, a large language model trained by OpenAI.\n" +
      "Knowledge cutoff: 2024-06\n" +
      `Current date: ${this.currentDate ?? today()}\n\n` +
      `Reasoning: ${this.reasoningEffort}\n\n` +
      "# Valid channels: analysis, commentary, final. Channel must be included for every message."
    );
  }

  protected override prepareMessages(messages: readonly Message[]): Message[] {
    const system = this.systemPromptText();
    return system === null ? [...messages] : [{ role: INTERNAL_SYSTEM_ROLE, content: system }, ...messages];
  }

  private enc(s: string): number[] {
    return this.tokenizer.encode(s, { addSpecialTokens: false });
  }

  renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    if (message.role === "tool") return this.renderToolResult(message);
    const role = message.role === INTERNAL_SYSTEM_ROLE ? "system" : message.role === "system" ? "developer" : message.role;
    let out = "";
    let hasCalls = false;
    if (message.role === "assistant") {
      const parts = ensureList(message.content);
      const text = parts.map((p) => (p.type === "text" ? p.text : "")).join("");
      const thinking = parts.map((p) => (p.type === "thinking" ? p.thinking : "")).join("");
      const calls = message.tool_calls ?? [];
      hasCalls = calls.length > 0;
      if (thinking) out += `<|channel|>analysis<|message|>${thinking}<|end|><|start|>assistant`;
      if (hasCalls) {
        if (text) out += `<|channel|>commentary<|message|>${text}<|end|><|start|>assistant`;
        out += calls
          .map((tc) => ` to=functions.${tc.function.name}<|channel|>commentary <|constrain|>json<|message|>${tc.function.arguments}<|call|>`)
          .join("<|start|>assistant");
      } else {
        out += `<|channel|>final<|message|>${text}`;
      }
      if (!hasCalls) out += ctx.isLast ? "<|return|>" : "<|end|>";
    } else if (message.role === "system") {
      out += `<|message|># Instructions\n\n${ensureText(message.content)}\n\n<|end|>`;
    } else {
      out += `<|message|>${ensureText(message.content)}<|end|>`;
    }
    return { header: this.enc(`<|start|>${role}`), output: [this.enc(out)] };
  }

  private renderToolResult(message: Message): RenderedMessage {
    const name = message.name;
    if (!name) {
      throw new RendererError(
        `renderer ${this.rendererName}: a tool result message needs a "name" field (the function that was called), ` +
          `e.g. {"role": "tool", "name": "get_weather", "content": "..."}; Harmony addresses results by function name`,
      );
    }
    const qualified = name.startsWith("functions.") ? name : `functions.${name}`;
    return {
      header: this.enc(`<|start|>${qualified} to=assistant`),
      output: [this.enc(`<|channel|>commentary<|message|>${ensureText(message.content)}<|end|>`)],
    };
  }

  getStopSequences(): number[] {
    return [this.returnToken, this.callToken];
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const calls = tokens.filter((t) => t === this.callToken).length;
    const returns = tokens.filter((t) => t === this.returnToken).length;
    if (calls === 0 && returns === 0) {
      return { message: { role: "assistant", content: this.tokenizer.decode(tokens) }, termination: "malformed" };
    }
    if (calls > 1 || returns > 1) {
      throw new RendererError(
        `when parsing a response, expected at most one <|call|> and one <|return|>, found ${calls} and ${returns}; ` +
          `the sampler was probably not given this renderer's stop sequences`,
      );
    }
    const candidates = [tokens.indexOf(this.returnToken), tokens.indexOf(this.callToken)].filter((i) => i >= 0);
    const stop = Math.min(...candidates);
    const text = this.tokenizer.decode(tokens.slice(0, stop));
    const { parts, toolCalls, unparsed } = parseHarmonyOutput(text);
    const intents = text.split("to=functions.").length - 1;
    if (intents > toolCalls.length + unparsed.length) {
      const start = text.lastIndexOf("<|start|>");
      unparsed.push({
        raw_text: start === -1 ? text : text.slice(start),
        error: "unterminated tool block: 'to=functions.' tool-call header without a parsable arguments payload",
      });
    }
    // A turn that only calls tools has no text; the raw text stays available in unparsed calls.
    const onlyCalls = toolCalls.length > 0 || unparsed.length > 0;
    const message: Message = { role: "assistant", content: parts.length > 0 ? parts : onlyCalls ? "" : text };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    if (unparsed.length > 0) message.unparsed_tool_calls = unparsed;
    return { message, termination: "stop_sequence" };
  }

  override createConversationPrefixWithTools(tools: ToolSpec[], systemPrompt = ""): Message[] {
    const out: Message[] = [];
    if (tools.length > 0) {
      out.push({ role: INTERNAL_SYSTEM_ROLE, content: "Calls to these tools must go to the commentary channel: 'functions'." });
    }
    const sections: string[] = [];
    if (systemPrompt) sections.push(`# Instructions\n\n${systemPrompt}`);
    if (tools.length > 0) {
      const defs = tools.map(formatToolDefinition).join("\n\n");
      sections.push(`# Tools\n\n## functions\n\nnamespace functions {\n\n${defs}\n\n} // namespace functions`);
    }
    if (sections.length > 0) out.push({ role: "developer", content: sections.join("\n\n") });
    return out;
  }
}

interface HarmonyMessage {
  channel: string | null;
  recipient: string | null;
  content: string;
  rawText: string;
}

function parseHarmonyMessages(content: string): HarmonyMessage[] {
  const out: HarmonyMessage[] = [];
  const ends = ["<|end|>", "<|call|>", "<|return|>"];
  let idx = 0;
  for (;;) {
    const messageIdx = content.indexOf("<|message|>", idx);
    if (messageIdx === -1) break;
    let headerStart = content.lastIndexOf("<|start|>", messageIdx);
    if (headerStart < idx) headerStart = idx;
    const header = content.slice(headerStart, messageIdx);
    const bodyStart = messageIdx + "<|message|>".length;
    let endIdx = content.length;
    let endToken = "";
    for (const e of ends) {
      const i = content.indexOf(e, bodyStart);
      if (i !== -1 && i < endIdx) {
        endIdx = i;
        endToken = e;
      }
    }
    out.push({
      channel: /<\|channel\|>([^<\s]+)/.exec(header)?.[1] ?? null,
      recipient: /to=([^\s<]+)/.exec(header)?.[1] ?? null,
      content: content.slice(bodyStart, endIdx),
      rawText: endToken ? content.slice(headerStart, endIdx + endToken.length) : content.slice(headerStart),
    });
    idx = endIdx + endToken.length;
  }
  return out;
}

function parseHarmonyOutput(content: string): { parts: ContentPart[]; toolCalls: ToolCall[]; unparsed: UnparsedToolCall[] } {
  const parts: ContentPart[] = [];
  const toolCalls: ToolCall[] = [];
  const unparsed: UnparsedToolCall[] = [];
  for (const m of parseHarmonyMessages(content)) {
    if (!m.content.trim()) continue;
    if (m.recipient?.startsWith("functions.")) {
      const name = m.recipient.slice("functions.".length);
      try {
        JSON.parse(m.content);
        toolCalls.push({ type: "function", id: null, function: { name, arguments: m.content.trim() } });
      } catch (err) {
        unparsed.push({ raw_text: m.rawText, error: `Invalid JSON: ${(err as Error).message}` });
      }
      continue;
    }
    if (m.channel === "analysis") parts.push({ type: "thinking", thinking: m.content });
    else if (m.channel === "final" || m.channel === "commentary") parts.push({ type: "text", text: m.content });
  }
  return { parts, toolCalls, unparsed };
}
