// The renderer contract (docs/cookbook-parity.md#renderer-contract): messages ⇄ tokens, loss weights, and
// response parsing. Subclasses say how one message renders; this class assembles conversations.
import type { ModelInput, ModelInputChunk } from "../tinker/types.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { getTextContent, hasImages, thinkingText } from "./content.ts";
import { ResponseStreamParser, type StreamingMarkup } from "./streaming.ts";
import {
  RendererError,
  type Message,
  type OutputChunk,
  type ParsedResponse,
  type RenderContext,
  type RenderedMessage,
  type Role,
  type SupervisedExample,
  type ToolSpec,
  type TrainOnWhat,
} from "./types.ts";

const STANDARD_ROLES = ["system", "user", "assistant", "tool"] as const;

/** Id of a token the renderer cannot work without, or a RendererError naming it. */
export function requireSingleToken(tokenizer: Tokenizer, token: string, rendererName: string): number {
  const ids = tokenizer.encode(token, { addSpecialTokens: false });
  const id = tokenizer.tokenToId(token);
  if (ids.length === 1 && (id === undefined || id === ids[0])) return ids[0]!;
  throw new RendererError(
    `renderer ${rendererName} needs the special token ${JSON.stringify(token)}, but tokenizer ` +
      `"${tokenizer.name}" has no such token (it encodes to ${ids.length} tokens); ` +
      `is this renderer meant for this model?`,
  );
}

function chunkPositions(chunk: OutputChunk): number {
  if (Array.isArray(chunk)) return chunk.length;
  if (chunk.type === "encoded_text") return chunk.tokens.length;
  if (chunk.expected_tokens === undefined) {
    throw new RendererError(`an image chunk has no expected_tokens; renderers must count the vision tokens of every image`);
  }
  return chunk.expected_tokens;
}

/**
 * One entry per model position: the token id for text, and for an image a negative id standing
 * for that image's bytes (equal images compare equal), so token sequences with images compare.
 */
function flattenPositions(chunks: readonly OutputChunk[], imageIds: Map<string, number>): number[] {
  const out: number[] = [];
  for (const c of chunks) {
    if (Array.isArray(c)) for (const t of c) out.push(t);
    else if (c.type === "encoded_text") for (const t of c.tokens) out.push(t);
    else {
      const key = c.type === "image" ? c.data : c.location;
      let id = imageIds.get(key);
      if (id === undefined) {
        id = -1 - imageIds.size;
        imageIds.set(key, id);
      }
      for (let k = 0; k < chunkPositions(c); k++) out.push(id);
    }
  }
  return out;
}

/** Adjacent token runs become one text chunk (the compact wire form); images stay their own chunks. */
function chunksToModelInput(chunks: readonly OutputChunk[]): ModelInput {
  const out: ModelInputChunk[] = [];
  const appendTokens = (tokens: readonly number[]): void => {
    if (tokens.length === 0) return;
    const last = out[out.length - 1];
    if (last !== undefined && last.type === "encoded_text") last.tokens.push(...tokens);
    else out.push({ type: "encoded_text", tokens: [...tokens] });
  };
  for (const c of chunks) {
    if (Array.isArray(c)) appendTokens(c);
    else if (c.type === "encoded_text") appendTokens(c.tokens);
    else out.push(c);
  }
  return { chunks: out };
}

export abstract class Renderer {
  /** The registered name this renderer was created under (set by getRenderer). */
  rendererName: string;
  /** True for renderers whose generation prompt closes the think block (tells the model not to reason). */
  readonly disablesThinking: boolean = false;

  constructor(
    readonly tokenizer: Tokenizer,
    name: string,
  ) {
    this.rendererName = name;
  }

  /** Whether image parts can be rendered (vision-language families); others refuse them by name. */
  get supportsImages(): boolean {
    return false;
  }

  /** Whether each turn's prompt is a prefix of the next turn's (multi-turn merging, KV reuse). */
  get hasExtensionProperty(): boolean {
    return false;
  }

  /** Roles this renderer knows how to write; others are reported as errors by data loaders. */
  knownRoles(): readonly string[] {
    return STANDARD_ROLES;
  }

  protected bosTokens(): number[] {
    return [];
  }

  abstract getStopSequences(): number[] | string[];
  abstract renderMessage(message: Message, ctx: RenderContext): RenderedMessage;
  abstract parseResponse(tokens: readonly number[]): ParsedResponse;

  /** Messages to put first in a conversation so the model knows its tools, in the family's own format. */
  createConversationPrefixWithTools(_tools: ToolSpec[], _systemPrompt = ""): Message[] {
    throw new RendererError(`renderer ${this.rendererName} does not support tool calling`);
  }

  /** The message in OpenAI chat form (what chat templates and OpenAI-compatible servers take). */
  toOpenAIMessage(message: Message): Record<string, unknown> {
    const out: Record<string, unknown> = { role: message.role, content: getTextContent(message) };
    const reasoning = thinkingText(message.content);
    if (reasoning) out["reasoning_content"] = reasoning;
    if (message.tool_calls && message.tool_calls.length > 0) {
      out["tool_calls"] = message.tool_calls.map((tc) => ({
        type: "function",
        id: tc.id ?? null,
        function: { name: tc.function.name, arguments: tc.function.arguments },
      }));
    }
    if (message.role === "tool") {
      if (message.tool_call_id !== undefined) out["tool_call_id"] = message.tool_call_id;
      if (message.name !== undefined) out["name"] = message.name;
    }
    return out;
  }

  /** Tokens that open the message the model is asked to write (default: header of an empty message). */
  protected generationSuffix(role: Role, ctx: RenderContext): number[] {
    return this.renderMessage({ role, content: "" }, ctx).header;
  }

  /** Index of the first message of the turn being produced (default: after the last user message). */
  protected lastAssistantTurnStartIndex(messages: readonly Message[]): number {
    return lastUserIndex(messages) + 1;
  }

  /** Hook for renderers that add messages of their own (default system prompts). */
  protected prepareMessages(messages: readonly Message[]): Message[] {
    return [...messages];
  }

  private checkImages(messages: readonly Message[]): void {
    if (this.supportsImages) return;
    const idx = messages.findIndex((m) => hasImages(m.content));
    if (idx === -1) return;
    throw new RendererError(
      `message ${idx} (role ${messages[idx]!.role}) has an image part, but renderer ${this.rendererName} renders text only; ` +
        `use a vision-language renderer (qwen3_vl, qwen3_vl_instruct, qwen3_5, qwen3_8_*, kimi_k25, kimi_k26) with a VL model`,
    );
  }

  /**
   * The markup an incremental parser watches while a response streams in; null streams the
   * decoded text as it comes (the final message is always parseResponse's).
   */
  streamingMarkup(): StreamingMarkup | null {
    return null;
  }

  /** An incremental parser for one sampled response: feed tokens as they arrive, then finish. */
  createStreamParser(): ResponseStreamParser {
    return new ResponseStreamParser(this);
  }

  private contexts(messages: readonly Message[], turnStart: number): RenderContext[] {
    const lastUser = lastUserIndex(messages);
    return messages.map((_, idx) => ({
      idx,
      isLast: idx === messages.length - 1,
      prevMessage: idx > 0 ? messages[idx - 1]! : null,
      nextMessage: idx + 1 < messages.length ? messages[idx + 1]! : null,
      lastUserIndex: lastUser,
      inLastAssistantTurn: idx >= turnStart,
    }));
  }

  buildGenerationPrompt(messagesIn: readonly Message[], role: Role = "assistant", prefill?: string): ModelInput {
    this.checkImages(messagesIn);
    const messages = this.prepareMessages(messagesIn);
    return chunksToModelInput(this.generationPromptChunks(messages, role, prefill));
  }

  protected generationPromptChunks(messages: readonly Message[], role: Role, prefill?: string): OutputChunk[] {
    const chunks: OutputChunk[] = [this.bosTokens()];
    const turnStart = this.lastAssistantTurnStartIndex(messages);
    this.contexts(messages, turnStart).forEach((ctx, idx) => {
      const r = this.renderMessage(messages[idx]!, ctx);
      chunks.push(r.header, ...r.output);
    });
    const suffixCtx: RenderContext = {
      idx: messages.length,
      isLast: true,
      prevMessage: messages.length > 0 ? messages[messages.length - 1]! : null,
      nextMessage: null,
      lastUserIndex: lastUserIndex(messages),
      inLastAssistantTurn: true,
    };
    chunks.push(this.generationSuffix(role, suffixCtx));
    if (prefill) chunks.push(this.tokenizer.encode(prefill, { addSpecialTokens: false }));
    return chunks;
  }

  /**
   * Tokens and one weight per token for supervised training. BOS weight 0; headers weigh 1 only
   * for all_tokens; outputs per `trainOnWhat`. Everything the generation prompt of the first
   * trained message would have supplied gets weight 0 (so a prefilled `<think>` is never trained).
   */
  buildSupervisedExample(messagesIn: readonly Message[], trainOnWhat: TrainOnWhat = "last_assistant_message"): SupervisedExample {
    this.checkImages(messagesIn);
    const messages = this.prepareMessages(messagesIn);
    if (trainOnWhat === "all_assistant_messages" && !this.hasExtensionProperty) warnNoExtension(this.rendererName);
    const pieces: { tokens: OutputChunk; weight: number }[] = [{ tokens: this.bosTokens(), weight: 0 }];
    const turnStart = this.lastAssistantTurnStartIndex(messages.slice(0, -1));
    const ctxs = this.contexts(messages, turnStart);
    messages.forEach((message, idx) => {
      if (trainOnWhat === "customized") {
        if (message.trainable === undefined) {
          throw new RendererError(`train_on_what=customized needs a "trainable" field on every message; message ${idx} (role ${message.role}) has none`);
        }
      } else if (message.trainable !== undefined) {
        throw new RendererError(
          `message ${idx} (role ${message.role}) has a "trainable" field, which is only allowed with train_on_what=customized (got ${trainOnWhat})`,
        );
      }
      const ctx = ctxs[idx]!;
      const r = this.renderMessage(message, ctx);
      pieces.push({ tokens: r.header, weight: trainOnWhat === "all_tokens" ? 1 : 0 });
      const trained = this.outputIsTrained(message, ctx, trainOnWhat) ? 1 : 0;
      // Image positions predict nothing (their targets are placeholders), so they never carry loss.
      for (const o of r.output) pieces.push({ tokens: o, weight: Array.isArray(o) ? trained : 0 });
      if (ctx.isLast && r.stopOverlap) pieces.push({ tokens: r.stopOverlap, weight: trained });
    });
    const tokenChunks = pieces.map((p) => p.tokens);
    const imageIds = new Map<string, number>();
    const tokens = flattenPositions(tokenChunks, imageIds);
    const weights = new Float32Array(tokens.length);
    let pos = 0;
    for (const p of pieces) {
      const n = chunkPositions(p.tokens);
      weights.fill(p.weight, pos, pos + n);
      pos += n;
    }
    const modelInput = chunksToModelInput(tokenChunks);
    this.maskGenerationPrompt(messages, trainOnWhat, tokens, weights, imageIds);
    return { modelInput, weights };
  }

  /**
   * One example per trained assistant message when the renderer lacks the extension property
   * (history renders differently from the produced turn); otherwise one example.
   */
  buildSupervisedExamples(messages: readonly Message[], trainOnWhat: TrainOnWhat = "last_assistant_turn"): SupervisedExample[] {
    if (this.hasExtensionProperty) return [this.buildSupervisedExample(messages, trainOnWhat)];
    let start: number;
    if (trainOnWhat === "last_assistant_message") start = messages.length - 1;
    else if (trainOnWhat === "last_assistant_turn") start = this.lastAssistantTurnStartIndex(messages);
    else if (trainOnWhat === "all_assistant_messages") start = 0;
    else {
      throw new RendererError(
        `buildSupervisedExamples cannot split train_on_what=${trainOnWhat} for renderer ${this.rendererName}, which lacks ` +
          `the extension property: that mode weights messages that are not turns the model produces`,
      );
    }
    const out: SupervisedExample[] = [];
    for (let idx = Math.max(0, start); idx < messages.length; idx++) {
      if (messages[idx]!.role === "assistant") {
        out.push(this.buildSupervisedExample(messages.slice(0, idx + 1), "last_assistant_message"));
      }
    }
    return out;
  }

  private maskGenerationPrompt(
    messages: readonly Message[],
    trainOnWhat: TrainOnWhat,
    tokens: number[],
    weights: Float32Array,
    imageIds: Map<string, number>,
  ): void {
    const boundary = this.firstTrainedMessageIndex(messages, trainOnWhat);
    if (boundary === null) return;
    const prompt = flattenPositions(this.generationPromptChunks(messages.slice(0, boundary), "assistant"), imageIds);
    const matches = prompt.length <= tokens.length && prompt.every((t, i) => tokens[i] === t);
    if (!matches) {
      if (this.disablesThinking) {
        throw new RendererError(
          `renderer ${this.rendererName} has thinking turned off: its generation prompt closes the think block, ` +
            `telling the model not to reason. The trained turn (message ${boundary}) contains reasoning, so training on it ` +
            `would teach the model to reason after being told not to. Use the thinking variant of this renderer, or remove ` +
            `the reasoning from that turn.`,
        );
      }
      // The renderer's own template disagrees with itself; nothing the caller can fix, so keep the weights.
      return;
    }
    weights.fill(0, 0, prompt.length);
  }

  protected outputIsTrained(message: Message, ctx: RenderContext, trainOnWhat: TrainOnWhat): boolean {
    const isAssistant = message.role === "assistant";
    switch (trainOnWhat) {
      case "last_assistant_message":
        return ctx.isLast && isAssistant;
      case "last_assistant_turn":
        return isAssistant && ctx.inLastAssistantTurn;
      case "all_assistant_messages":
        return isAssistant;
      case "all_messages":
      case "all_tokens":
        return true;
      case "all_user_and_system_messages":
        return message.role === "user" || message.role === "system";
      case "customized":
        return message.trainable === true;
      default:
        throw new RendererError(`unknown train_on_what: ${String(trainOnWhat)}`);
    }
  }

  private firstTrainedMessageIndex(messages: readonly Message[], trainOnWhat: TrainOnWhat): number | null {
    let boundary: number;
    if (trainOnWhat === "last_assistant_message") boundary = messages.length - 1;
    else if (trainOnWhat === "last_assistant_turn") boundary = lastUserIndex(messages) + 1;
    else return null;
    if (boundary < 0 || boundary >= messages.length) return null;
    return messages[boundary]!.role === "assistant" ? boundary : null;
  }
}

const warnedNoExtension = new Set<string>();
function warnNoExtension(name: string): void {
  if (warnedNoExtension.has(name)) return;
  warnedNoExtension.add(name);
  process.emitWarning(
    `train_on_what=all_assistant_messages with renderer ${name}, which lacks the extension property: earlier assistant ` +
      `messages are trained in a context that differs from the prompt they were sampled from. Prefer ` +
      `buildSupervisedExamples (one example per assistant turn).`,
    "RendererWarning",
  );
}

export function lastUserIndex(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === "user") return i;
  return -1;
}

/**
 * Parse for chat renderers with one end-of-turn token: none → malformed (truncated), one →
 * stop_sequence, more → error (the sampler was not given the stop token).
 */
export function parseResponseForStopToken(tokens: readonly number[], tokenizer: Tokenizer, stopToken: number): ParsedResponse {
  const count = tokens.reduce((n, t) => n + (t === stopToken ? 1 : 0), 0);
  if (count === 0) return { message: { role: "assistant", content: tokenizer.decode(tokens) }, termination: "malformed" };
  if (count === 1) {
    return {
      message: { role: "assistant", content: tokenizer.decode(tokens.slice(0, tokens.indexOf(stopToken))) },
      termination: "stop_sequence",
    };
  }
  throw new RendererError(
    `when parsing a response, expected at most one stop token (${stopToken}) but found ${count}; ` +
      `the sampler was probably not given this renderer's stop sequences`,
  );
}
