// Kimi K2.5 and K2.6: Kimi K2's turn syntax with the prompt prefilled "<think>" (thinking) or
// "<think></think>" (thinking off), TypeScript-style tool declarations, and images as
// <|media_begin|>image<|media_content|>[image]<|media_end|>⏎ (docs/cookbook-parity.md#family-formats).
// K2.6 differs only by the opt-in preserve-thinking variant, which keeps history reasoning.
import type { ModelInputChunk } from "../tinker/types.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { requireSingleToken } from "./base.ts";
import { imageToChunk, kimiVisionTokenCount, KIMI_K25_VISION, type KimiVisionConfig } from "./images.ts";
import { KIMI_DEFAULT_SYSTEM_PROMPT, KimiK2Renderer } from "./kimiK2.ts";
import { encodeToolsTypeScript } from "./kimiToolsTs.ts";
import type { StreamingMarkup } from "./streaming.ts";
import { RendererError, type Message, type OutputChunk, type ParsedResponse, type RenderContext, type RenderedMessage, type ToolSpec } from "./types.ts";

export interface KimiK25Options {
  stripThinkingFromHistory?: boolean;
  vision?: KimiVisionConfig;
}

export class KimiK25Renderer extends KimiK2Renderer {
  protected readonly thinkOpen: number;
  protected readonly thinkClose: number;
  protected readonly vision: KimiVisionConfig;

  constructor(tokenizer: Tokenizer, name = "kimi_k25", options: KimiK25Options = {}) {
    super(tokenizer, name, options.stripThinkingFromHistory ?? true);
    this.thinkOpen = requireSingleToken(tokenizer, "<think>", name);
    this.thinkClose = requireSingleToken(tokenizer, "</think>", name);
    this.vision = options.vision ?? KIMI_K25_VISION;
  }

  override get supportsImages(): boolean {
    return true;
  }

  countImageTokens(width: number, height: number): number {
    return kimiVisionTokenCount(width, height, this.vision);
  }

  /** What the prompt prefills after the assistant header. */
  protected get prefill(): string {
    return "<think>";
  }

  protected override generationSuffix(role: string, ctx: RenderContext): number[] {
    return [...super.generationSuffix(role, ctx), ...this.tokenizer.encode(this.prefill, { addSpecialTokens: false })];
  }

  override renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const content = message.content;
    if (typeof content === "string" || !content.some((p) => p.type === "image")) return super.renderMessage(message, ctx);
    if (message.role === "assistant") {
      throw new RendererError(`${this.rendererName}: message ${ctx.idx} is an assistant message with an image; images go in user, system or tool messages`);
    }
    // The header is K2's; the output interleaves text and image chunks.
    const { header } = super.renderMessage({ ...message, content: "" }, ctx);
    const enc = (s: string): number[] => this.tokenizer.encode(s, { addSpecialTokens: false });
    const output: OutputChunk[] = [];
    let pending = "";
    for (const p of content) {
      if (p.type === "text") pending += p.text;
      else if (p.type === "thinking") {
        throw new RendererError(`${this.rendererName}: message ${ctx.idx} (role ${message.role}) has a thinking part; only assistant messages reason`);
      } else {
        output.push(enc(pending + "<|media_begin|>image<|media_content|>"));
        output.push(this.imageChunk(p.image));
        pending = "<|media_end|>\n";
      }
    }
    output.push(enc(pending + "<|im_end|>"));
    return { header, output };
  }

  protected imageChunk(source: string): ModelInputChunk {
    for (const t of ["<|media_begin|>", "<|media_content|>", "<|media_end|>"]) requireSingleToken(this.tokenizer, t, this.rendererName);
    return imageToChunk(source, (w, h) => this.countImageTokens(w, h));
  }

  /** Puts back the prefilled <think> so the reasoning block parses whole. */
  override parseResponse(tokens: readonly number[]): ParsedResponse {
    const normalized = tokens.length > 0 && tokens[0] !== this.thinkOpen && tokens.includes(this.thinkClose) ? [this.thinkOpen, ...tokens] : tokens;
    return super.parseResponse(normalized);
  }

  override streamingMarkup(): StreamingMarkup {
    return { ...super.streamingMarkup(), startsInThinking: !this.disablesThinking };
  }

  override createConversationPrefixWithTools(tools: ToolSpec[], systemPrompt = ""): Message[] {
    const out: Message[] = [];
    if (tools.length > 0) out.push({ role: "tool_declare", content: encodeToolsTypeScript(tools) });
    out.push({ role: "system", content: systemPrompt || KIMI_DEFAULT_SYSTEM_PROMPT });
    return out;
  }
}

/** Thinking off: the prompt ends with a closed, empty think block. */
export class KimiK25DisableThinkingRenderer extends KimiK25Renderer {
  override readonly disablesThinking: boolean = true;

  constructor(tokenizer: Tokenizer, name = "kimi_k25_disable_thinking", options: KimiK25Options = {}) {
    super(tokenizer, name, options);
  }

  protected override get prefill(): string {
    return "<think></think>";
  }
}

/**
 * K2.6 with preserve_thinking: history keeps its reasoning, so each turn renders as it was
 * sampled. Like the cookbook it does not claim the extension property.
 */
export class KimiK26PreserveThinkingRenderer extends KimiK25Renderer {
  constructor(tokenizer: Tokenizer, name = "kimi_k26_preserve_thinking", options: KimiK25Options = {}) {
    super(tokenizer, name, { ...options, stripThinkingFromHistory: false });
  }
}
