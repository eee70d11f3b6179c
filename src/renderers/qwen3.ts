// Qwen3 family: <|im_start|>role⏎…<|im_end|>, the newline between turns belonging to the next
// header. The turn being produced is framed <think>⏎R⏎</think>⏎⏎answer (an empty block when it
// did not reason); history turns drop their reasoning by default, as HF's template does.
import type { Tokenizer } from "../tokenizers/types.ts";
import { parseResponseForStopToken, Renderer, requireSingleToken } from "./base.ts";
import { detectUnterminatedToolBlock, hasThinking, isToolCall, parseContentBlocks, removeThinking } from "./content.ts";
import { pythonJsonDumps } from "./pyjson.ts";
import type { StreamingMarkup } from "./streaming.ts";
import {
  RendererError,
  type ContentPart,
  type Message,
  type ParsedResponse,
  type RenderContext,
  type RenderedMessage,
  type ToolCall,
  type ToolSpec,
} from "./types.ts";

function frameThinking(reasoning: string): string {
  return "<think>\n" + stripChar(reasoning, "\n") + "\n</think>\n\n";
}

function lstripChar(s: string, c: string): string {
  let i = 0;
  while (i < s.length && s[i] === c) i++;
  return s.slice(i);
}
function rstripChar(s: string, c: string): string {
  let j = s.length;
  while (j > 0 && s[j - 1] === c) j--;
  return s.slice(0, j);
}
function stripChar(s: string, c: string): string {
  return rstripChar(lstripChar(s, c), c);
}

/** Undoes frameThinking so parse(render(x)) is x: padding is framing, an empty block is no reasoning. */
function unframeThinking(parts: ContentPart[]): ContentPart[] {
  const out: ContentPart[] = [];
  let afterBlock = false;
  for (const p of parts) {
    if (p.type === "thinking") {
      const reasoning = stripChar(p.thinking, "\n");
      if (reasoning) out.push({ type: "thinking", thinking: reasoning });
      afterBlock = true;
    } else {
      if (p.type !== "text") continue;
      const text = afterBlock ? lstripChar(p.text, "\n") : p.text;
      // A text part that was only the block's padding is framing too.
      if (text) out.push({ type: "text", text });
      afterBlock = false;
    }
  }
  return out;
}

export function qwenToolCallText(tc: ToolCall): string {
  let args: unknown;
  try {
    args = JSON.parse(tc.function.arguments);
  } catch (err) {
    throw new RendererError(`tool call ${tc.function.name}: arguments are not valid JSON (${(err as Error).message}): ${tc.function.arguments}`);
  }
  return `<tool_call>\n${pythonJsonDumps({ name: tc.function.name, arguments: args })}\n</tool_call>`;
}

export class Qwen3Renderer extends Renderer {
  /** 2507-Instruct models do not use <think>, so they are not given the block around a produced turn. */
  protected readonly framesThinking: boolean = true;
  protected readonly imEnd: number;

  constructor(
    tokenizer: Tokenizer,
    name = "qwen3",
    readonly stripThinkingFromHistory = true,
  ) {
    super(tokenizer, name);
    requireSingleToken(tokenizer, "<|im_start|>", name);
    this.imEnd = requireSingleToken(tokenizer, "<|im_end|>", name);
  }

  override get hasExtensionProperty(): boolean {
    return !this.stripThinkingFromHistory;
  }

  /**
   * The template frames only turns after the last user message (`loop.index0 > last_query_index`),
   * and never when there is no user message. With history kept, every assistant turn is framed
   * alike so the extension property holds.
   */
  protected framesProducedTurn(message: Message, ctx: RenderContext): boolean {
    if (!this.framesThinking || message.role !== "assistant") return false;
    if (ctx.lastUserIndex < 0) return false;
    return ctx.isLast || !this.stripThinkingFromHistory;
  }

  renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const nl = ctx.idx > 0 ? "\n" : "";
    const role = message.role === "tool" ? "user" : message.role;
    const header = `${nl}<|im_start|>${role}\n`;
    const content = message.content;
    const frames = this.framesProducedTurn(message, ctx);
    const hasReasoning = hasThinking(content);
    let out: string;
    // The message's own text (no reasoning): the template's `content`, which decides the
    // newline before tool calls.
    let ownText: string;
    if (typeof content !== "string") {
      let parts = content;
      if (this.stripThinkingFromHistory && message.role === "assistant" && !ctx.isLast) parts = removeThinking(parts);
      const rendered: string[] = [];
      const texts: string[] = [];
      let afterBlock = false;
      for (const p of parts) {
        if (p.type === "thinking") {
          rendered.push(frames ? frameThinking(p.thinking) : `<think>${p.thinking}</think>`);
          afterBlock = frames;
        } else if (p.type === "text") {
          const text = afterBlock ? lstripChar(p.text, "\n") : p.text;
          rendered.push(text);
          texts.push(text);
          afterBlock = false;
        }
      }
      out = rendered.join("");
      ownText = texts.join("");
    } else if (frames && content.includes("</think>")) {
      // Inline reasoning in a string is normalized the way the template normalizes it.
      const cut = content.indexOf("</think>");
      const reasoning = content.slice(0, cut);
      const rest = content.slice(cut + "</think>".length);
      const open = reasoning.lastIndexOf("<think>");
      ownText = lstripChar(rest, "\n");
      out = frameThinking(open === -1 ? reasoning : reasoning.slice(open + "<think>".length)) + ownText;
    } else {
      out = content;
      ownText = content;
    }
    const hasText = ownText !== "";
    if (frames && !hasReasoning) out = frameThinking("") + lstripChar(out, "\n");
    if (message.role === "tool") out = `<tool_response>\n${out}\n</tool_response>`;
    // An empty list is no calls, as in the template (`if message.tool_calls`).
    if (message.tool_calls !== undefined && message.tool_calls.length > 0) {
      const calls = message.tool_calls.map(qwenToolCallText).join("\n");
      out += (hasText ? "\n" : "") + calls;
    }
    return {
      header: this.tokenizer.encode(header, { addSpecialTokens: false }),
      output: [this.tokenizer.encode(out, { addSpecialTokens: false, splitSpecialTokens: true }), [this.imEnd]],
    };
  }

  getStopSequences(): number[] {
    return [this.imEnd];
  }

  override streamingMarkup(): StreamingMarkup {
    return { thinkOpen: "<think>", thinkClose: "</think>", startsInThinking: false, toolOpen: ["<tool_call>"] };
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const parsed = parseResponseForStopToken(tokens, this.tokenizer, this.imEnd);
    if (parsed.termination === "malformed") return parsed;
    const message = parsed.message;
    const text = message.content as string;
    const blocks = parseContentBlocks(text);
    if (blocks !== null) {
      message.content = this.framesThinking ? unframeThinking(blocks.parts) : blocks.parts;
      const calls = blocks.toolCalls.filter(isToolCall);
      const unparsed = blocks.toolCalls.filter((t) => !isToolCall(t));
      if (calls.length > 0) message.tool_calls = calls;
      if (unparsed.length > 0) message.unparsed_tool_calls = unparsed as typeof message.unparsed_tool_calls;
    }
    const dangling = detectUnterminatedToolBlock(text, "<tool_call>", "</tool_call>");
    if (dangling !== null) message.unparsed_tool_calls = [...(message.unparsed_tool_calls ?? []), dangling];
    return { message, termination: parsed.termination };
  }

  override createConversationPrefixWithTools(tools: ToolSpec[], systemPrompt = ""): Message[] {
    return qwen3ToolsPrefix(tools, systemPrompt);
  }
}

/** Qwen3's tool declaration: a system message with one JSON object per tool inside <tools>, after the system prompt. */
export function qwen3ToolsPrefix(tools: ToolSpec[], systemPrompt: string): Message[] {
  let toolsText = "";
  if (tools.length > 0) {
    const lines = tools.map((tool) => pythonJsonDumps({ type: "function", function: tool })).join("\n");
    toolsText =
      "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
      "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n" +
      lines +
      "\n</tools>\n\nFor each function call, return a json object with function name and arguments within " +
      '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>';
  }
  return [{ role: "system", content: systemPrompt ? systemPrompt + "\n\n" + toolsText : toolsText }];
}

/** Qwen3 with thinking off: the prompt ends with a closed, empty think block. */
export class Qwen3DisableThinkingRenderer extends Qwen3Renderer {
  override readonly disablesThinking: boolean = true;

  constructor(tokenizer: Tokenizer, name = "qwen3_disable_thinking") {
    super(tokenizer, name);
  }

  override renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    // With no user message the template writes no empty block on the produced turn, yet the
    // prompt always has one; both cannot hold, so refuse rather than train a mismatch.
    const nonEmpty = typeof message.content === "string" ? message.content !== "" : message.content.length > 0;
    if (message.role === "assistant" && ctx.isLast && nonEmpty && ctx.lastUserIndex < 0) {
      throw new RendererError(
        `renderer ${this.rendererName}: this conversation has no user message, so Qwen3's template writes no empty ` +
          `think block on the produced turn, but the generation prompt always opens one. Add a user message, or use qwen3.`,
      );
    }
    return super.renderMessage(message, ctx);
  }

  protected override generationSuffix(role: string, ctx: RenderContext): number[] {
    const nl = ctx.idx > 0 ? "\n" : "";
    return this.tokenizer.encode(`${nl}<|im_start|>${role}\n<think>\n\n</think>\n\n`, { addSpecialTokens: false });
  }
}

/** Qwen3 2507 Instruct: no think tags at all, so every turn renders alike (extension property). */
export class Qwen3InstructRenderer extends Qwen3Renderer {
  protected override readonly framesThinking: boolean = false;

  constructor(tokenizer: Tokenizer, name = "qwen3_instruct") {
    super(tokenizer, name);
  }

  override get hasExtensionProperty(): boolean {
    return true;
  }
}
