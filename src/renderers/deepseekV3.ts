// DeepSeek V3.1: <｜begin▁of▁sentence｜>SYSTEM<｜User｜>…<｜Assistant｜>…<｜end▁of▁sentence｜>.
// Non-thinking mode puts </think> in the (untrained) assistant header; thinking mode prefills
// <think> in the prompt and closes history turns with </think> in their headers.
import type { Tokenizer } from "../tokenizers/types.ts";
import { parseResponseForStopToken, Renderer, requireSingleToken } from "./base.ts";
import { detectUnterminatedToolBlock, ensureText, hasThinking, parseThinkBlocks } from "./content.ts";
import { pythonJsonDumps } from "./pyjson.ts";
import type { StreamingMarkup } from "./streaming.ts";
import {
  RendererError,
  type Message,
  type OutputChunk,
  type ParsedResponse,
  type RenderContext,
  type RenderedMessage,
  type ToolCall,
  type ToolSpec,
  type UnparsedToolCall,
} from "./types.ts";

const CALLS_BEGIN = "<｜tool▁calls▁begin｜>";
const CALLS_END = "<｜tool▁calls▁end｜>";
const CALL_BEGIN = "<｜tool▁call▁begin｜>";
const CALL_END = "<｜tool▁call▁end｜>";
const SEP = "<｜tool▁sep｜>";

abstract class DeepSeekV3BaseRenderer extends Renderer {
  protected readonly bos: number;
  protected readonly eos: number;
  protected readonly userToken: number;
  protected readonly assistantToken: number;

  constructor(
    tokenizer: Tokenizer,
    name: string,
    readonly systemRoleAsUser = false,
    readonly stripThinkingFromHistory = true,
  ) {
    super(tokenizer, name);
    this.bos = requireSingleToken(tokenizer, "<｜begin▁of▁sentence｜>", name);
    this.eos = requireSingleToken(tokenizer, "<｜end▁of▁sentence｜>", name);
    this.userToken = requireSingleToken(tokenizer, "<｜User｜>", name);
    this.assistantToken = requireSingleToken(tokenizer, "<｜Assistant｜>", name);
  }

  override get hasExtensionProperty(): boolean {
    return !this.stripThinkingFromHistory;
  }

  protected override bosTokens(): number[] {
    return [this.bos];
  }

  protected enc(s: string): number[] {
    return this.tokenizer.encode(s, { addSpecialTokens: false });
  }

  renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const followsTool = ctx.prevMessage !== null && ctx.prevMessage.role === "tool";
    const content = message.content;
    let header: number[];
    let out: string;
    if (message.role === "system") {
      out = ensureText(content);
      if (ctx.idx === 0) header = [];
      else if (this.systemRoleAsUser) header = [this.userToken];
      else {
        throw new RendererError(
          `renderer ${this.rendererName}: DeepSeek only supports a system message at the start (message ${ctx.idx} is a ` +
            `system message); convert later system messages to user messages`,
        );
      }
    } else if (message.role === "user") {
      header = [this.userToken];
      out = ensureText(content);
    } else if (message.role === "assistant") {
      const hasCalls = (message.tool_calls?.length ?? 0) > 0;
      const strip = this.stripThinkingFromHistory && !hasCalls && !ctx.isLast;
      if (typeof content === "string") out = content;
      else {
        out = content.map((p) => (p.type === "thinking" ? (strip ? "" : `<think>${p.thinking}</think>`) : p.type === "text" ? p.text : "")).join("");
      }
      header = followsTool ? [] : [this.assistantToken];
    } else if (message.role === "tool") {
      header = this.enc("<｜tool▁output▁begin｜>");
      out = ensureText(content) + "<｜tool▁output▁end｜>";
    } else {
      throw new RendererError(`renderer ${this.rendererName}: unsupported role ${JSON.stringify(message.role)} (expected system, user, assistant or tool)`);
    }
    if (message.tool_calls && message.tool_calls.length > 0) {
      out += CALLS_BEGIN;
      for (const tc of message.tool_calls) out += `${CALL_BEGIN}${tc.function.name}${SEP}${tc.function.arguments}${CALL_END}`;
      out += CALLS_END;
    }
    const tokens = this.enc(out);
    // End of sentence closes every produced assistant message -- also one that only calls tools,
    // as in V3.1's template -- but not the empty message whose header is the generation prompt.
    const nonEmpty = typeof content === "string" ? content !== "" : content.length > 0;
    if (message.role === "assistant" && (nonEmpty || (message.tool_calls?.length ?? 0) > 0)) tokens.push(this.eos);
    return { header, output: [tokens] };
  }

  getStopSequences(): number[] {
    return [this.eos];
  }

  /** Restores text the generation prompt supplied (the thinking renderer's <think>). */
  override streamingMarkup(): StreamingMarkup {
    return { thinkOpen: "<think>", thinkClose: "</think>", startsInThinking: this.prefillsThinking, toolOpen: ["<｜tool▁calls▁begin｜>"] };
  }

  protected get prefillsThinking(): boolean {
    return false;
  }

  protected normalizeResponseText(text: string): string {
    return text;
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const parsed = parseResponseForStopToken(tokens, this.tokenizer, this.eos);
    const message = parsed.message;
    let content = this.normalizeResponseText(message.content as string);
    message.content = content;
    if (parsed.termination === "malformed") return parsed;
    const toolCalls: ToolCall[] = [];
    const unparsed: UnparsedToolCall[] = [];
    const section = /<｜tool▁calls▁begin｜>([\s\S]*?)<｜tool▁calls▁end｜>/.exec(content);
    if (section) {
      for (const m of section[1]!.matchAll(/<｜tool▁call▁begin｜>(\w+)<｜tool▁sep｜>([\s\S]*?)<｜tool▁call▁end｜>/g)) {
        const args = m[2]!.trim();
        try {
          JSON.parse(args);
          toolCalls.push({ type: "function", id: null, function: { name: m[1]!, arguments: args } });
        } catch (err) {
          unparsed.push({ raw_text: m[0], error: `Invalid JSON: ${(err as Error).message}` });
        }
      }
    }
    const dangling = detectUnterminatedToolBlock(content, CALLS_BEGIN, CALLS_END) ?? detectUnterminatedToolBlock(content, CALL_BEGIN, CALL_END);
    if (dangling !== null) unparsed.push(dangling);
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    if (unparsed.length > 0) message.unparsed_tool_calls = unparsed;
    if (toolCalls.length > 0 || unparsed.length > 0) {
      content = content.replace(/\s*<｜tool▁calls▁begin｜>[\s\S]*?<｜tool▁calls▁end｜>/g, "").trim();
    }
    message.content = parseThinkBlocks(content) ?? content;
    return { message, termination: parsed.termination };
  }

  override createConversationPrefixWithTools(tools: ToolSpec[], systemPrompt = ""): Message[] {
    let toolsText = "";
    if (tools.length > 0) {
      const blocks = tools.map((t) => `### ${t.name}\nDescription: ${t.description}\n\nParameters: ${pythonJsonDumps(t.parameters)}`);
      toolsText =
        "\n\n## Tools\nYou have access to the following tools:\n\n" +
        blocks.join("\n") +
        "\n\nIMPORTANT: ALWAYS adhere to this exact format for tool use:\n" +
        `${CALLS_BEGIN}${CALL_BEGIN}tool_call_name${SEP}tool_call_arguments${CALL_END}${CALLS_END}\n\n` +
        "Where:\n- `tool_call_name` must be an exact match to one of the available tools\n" +
        "- `tool_call_arguments` must be valid JSON that strictly follows the tool's Parameters Schema\n" +
        "- For multiple tool calls, chain them directly without separators or spaces";
    }
    return [{ role: "system", content: systemPrompt + toolsText }];
  }
}

/** Non-thinking mode (the `deepseekv3` default): reasoning stripped, </think> in the header. */
export class DeepSeekV3DisableThinkingRenderer extends DeepSeekV3BaseRenderer {
  constructor(tokenizer: Tokenizer, name = "deepseekv3") {
    super(tokenizer, name);
  }

  override get hasExtensionProperty(): boolean {
    return true;
  }

  override renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const followsTool = ctx.prevMessage !== null && ctx.prevMessage.role === "tool";
    if (message.role !== "assistant" || followsTool) return super.renderMessage(message, ctx);
    const content = message.content;
    const text =
      typeof content === "string" ? content.replace(/<think>[\s\S]*?<\/think>/g, "") : content.map((p) => (p.type === "text" ? p.text : "")).join("");
    const rendered = super.renderMessage({ ...message, content: text }, ctx);
    return { ...rendered, header: [...rendered.header, ...this.enc("</think>")] };
  }
}

/** Thinking mode: the prompt prefills <think> (except right after a tool result). */
export class DeepSeekV3ThinkingRenderer extends DeepSeekV3BaseRenderer {
  constructor(tokenizer: Tokenizer, name = "deepseekv3_thinking") {
    super(tokenizer, name);
  }

  override renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const rendered = super.renderMessage(message, ctx);
    const followsTool = ctx.prevMessage !== null && ctx.prevMessage.role === "tool";
    const isAssistantTurn = message.role === "assistant" && !followsTool;
    if (isAssistantTurn && this.stripThinkingFromHistory && !ctx.isLast) {
      return { ...rendered, header: [...rendered.header, ...this.enc("</think>")] };
    }
    const nonEmpty = typeof message.content === "string" ? message.content !== "" : message.content.length > 0;
    const produced = nonEmpty || (message.tool_calls?.length ?? 0) > 0;
    // A final target without reasoning has no format to preserve; it gets the empty block a model
    // sampled after the <think> prefill would have written (HF adds one too).
    if (isAssistantTurn && ctx.isLast && produced && !hasThinking(message.content)) {
      const [first, ...rest] = rendered.output;
      const firstTokens = Array.isArray(first) ? first : [];
      return { ...rendered, output: [[...this.enc("<think></think>"), ...firstTokens], ...rest] };
    }
    return rendered;
  }

  protected override generationPromptChunks(messages: readonly Message[], role: string, prefill?: string): OutputChunk[] {
    if (messages.length > 0 && messages[messages.length - 1]!.role === "tool") {
      return super.generationPromptChunks(messages, role, prefill);
    }
    return super.generationPromptChunks(messages, role, "<think>" + (prefill ?? ""));
  }

  protected override get prefillsThinking(): boolean {
    return true;
  }

  protected override normalizeResponseText(text: string): string {
    return !text.startsWith("<think>") && text.includes("</think>") ? "<think>" + text : text;
  }
}
