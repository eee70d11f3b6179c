// Qwen3.8: Qwen3.5's tokens, vision and XML tool calls, with three template changes
// (docs/cookbook-parity.md#family-formats): a reasoning-effort sentence is put first in the system
// message (xhigh and low; medium adds none; none when thinking is off), every assistant turn
// that did not reason gets an empty think block and history keeps its reasoning, and an empty
// system message renders nothing. Non-string tool arguments are written as JSON.
import type { Tokenizer } from "../tokenizers/types.ts";
import { pythonJsonDumps } from "./pyjson.ts";
import { Qwen3_5Renderer, type QwenVlOptions } from "./qwenVl.ts";
import { RendererError, type Message, type RenderContext } from "./types.ts";

export const QWEN3_8_REASONING_EFFORTS = ["xhigh", "medium", "low"] as const;
export type Qwen3_8ReasoningEffort = (typeof QWEN3_8_REASONING_EFFORTS)[number];

export const QWEN3_8_EFFORT_INSTRUCTIONS: Record<Qwen3_8ReasoningEffort, string> = {
  xhigh:
    "Reasoning effort is set to xhigh. Please think carefully through the task, validate key assumptions, consider " +
    "plausible alternatives, and prioritize correctness, consistency, and clarity in the final answer.",
  medium: "",
  low: "Reasoning effort is set to low. Keep your thinking brief and focused, moving directly to the conclusion without unnecessary elaboration.",
};

export interface Qwen3_8Options extends QwenVlOptions {
  reasoningEffort?: Qwen3_8ReasoningEffort;
}

export class Qwen3_8Renderer extends Qwen3_5Renderer {
  readonly reasoningEffort: Qwen3_8ReasoningEffort;

  constructor(tokenizer: Tokenizer, name = "qwen3_8_xhigh_reasoning", options: Qwen3_8Options = {}) {
    // The template's preserve_thinking defaults to true.
    super(tokenizer, name, { stripThinkingFromHistory: false, ...options });
    const effort = options.reasoningEffort ?? "xhigh";
    if (!QWEN3_8_REASONING_EFFORTS.includes(effort)) {
      throw new RendererError(`${name}: reasoning effort ${JSON.stringify(effort)}; expected one of ${QWEN3_8_REASONING_EFFORTS.join(", ")}`);
    }
    this.reasoningEffort = effort;
  }

  /**
   * Not claimed although history keeps reasoning: a turn that did not reason is sampled after
   * the prompt's open "<think>⏎", while history writes the closed empty block, whose "⏎⏎" the
   * tokenizer merges into one token; the sampled tokens are not a prefix of the next prompt.
   */
  override get hasExtensionProperty(): boolean {
    return false;
  }

  private get instructions(): string {
    return this.disablesThinking ? "" : QWEN3_8_EFFORT_INSTRUCTIONS[this.reasoningEffort];
  }

  /** The effort sentence first in the system message (one is created if needed); an empty system message is dropped. */
  protected override prepareMessages(messages: readonly Message[]): Message[] {
    const instructions = this.instructions;
    const first = messages[0];
    if (first !== undefined && first.role === "system") {
      const rest = messages.slice(1);
      let content = first.content;
      if (typeof content !== "string") {
        if (!content.every((p) => p.type === "text")) {
          if (!instructions) return [...messages];
          return [{ ...first, content: [{ type: "text", text: `${instructions}\n\n` }, ...content] }, ...rest];
        }
        content = content.map((p) => (p.type === "text" ? p.text : "")).join("");
      }
      content = content.trim();
      if (content === "" && !instructions) return rest;
      if (instructions && content !== instructions && !content.startsWith(`${instructions}\n\n`)) {
        content = content ? `${instructions}\n\n${content}` : instructions;
      }
      return [{ ...first, content }, ...rest];
    }
    if (!instructions) return [...messages];
    const synthetic: Message = { role: "system", content: instructions };
    if (messages.some((m) => m.trainable !== undefined)) synthetic.trainable = false;
    return [synthetic, ...messages];
  }

  protected override formatToolArgument(value: unknown): string {
    return typeof value === "string" ? value : pythonJsonDumps(value);
  }

  protected override stripsThinkingFor(message: Message, ctx: RenderContext): boolean {
    return this.stripThinkingFromHistory && message.role === "assistant" && ctx.idx <= ctx.lastUserIndex;
  }

  /** Only thinking parts count as reasoning: the template no longer reads inline <think> from strings. */
  protected override assistantHeaderSuffix(message: Message, ctx: RenderContext): string {
    if (this.stripThinkingFromHistory && ctx.idx <= ctx.lastUserIndex) return "";
    const reasoned = typeof message.content !== "string" && message.content.some((p) => p.type === "thinking");
    return reasoned ? "" : "<think>\n\n</think>\n\n";
  }
}

/** Qwen3.8 with thinking off: closed empty block in the prompt, no effort sentence. */
export class Qwen3_8DisableThinkingRenderer extends Qwen3_8Renderer {
  override readonly disablesThinking: boolean = true;

  constructor(tokenizer: Tokenizer, name = "qwen3_8_disable_thinking", options: Qwen3_8Options = {}) {
    super(tokenizer, name, options);
  }

  protected override generationSuffixText(role: string, ctx: RenderContext): string {
    return `${ctx.idx > 0 ? "\n" : ""}<|im_start|>${role}\n<think>\n\n</think>\n\n`;
  }
}
