// Qwen3-VL and Qwen3.5 (also used for Qwen3.6): the Qwen3 turn syntax
// <|im_start|>role⏎…<|im_end|> with images wrapped in <|vision_start|>…<|vision_end|>
// (docs/cookbook-parity.md#family-formats). Qwen3-VL writes reasoning as <think>R</think> and tool calls
// as JSON like Qwen3; Qwen3.5 prefills "<think>⏎" in the prompt, frames reasoning
// <think>⏎R⏎</think>⏎⏎, gives turns after the last user message an empty block when they did not
// reason, groups consecutive tool responses in one user block, and calls tools in XML:
// <tool_call>⏎<function=NAME>⏎<parameter=P>⏎VALUE⏎</parameter>⏎</function>⏎</tool_call>.
import type { ModelInputChunk } from "../tinker/types.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { parseResponseForStopToken, Renderer, requireSingleToken } from "./base.ts";
import { detectUnterminatedToolBlock, hasThinking, isToolCall, parseToolCallJson } from "./content.ts";
import { imageToChunk, qwenVisionTokenCount, QWEN3_VL_VISION, type QwenVisionConfig } from "./images.ts";
import { pythonJsonDumps } from "./pyjson.ts";
import { qwen3ToolsPrefix, qwenToolCallText } from "./qwen3.ts";
import type { StreamingMarkup } from "./streaming.ts";
import {
  RendererError,
  type ContentPart,
  type Message,
  type OutputChunk,
  type ParsedResponse,
  type RenderContext,
  type RenderedMessage,
  type ToolCall,
  type ToolSpec,
  type UnparsedToolCall,
} from "./types.ts";

type Piece = { kind: "text"; text: string } | { kind: "image"; source: string };

export interface QwenVlOptions {
  /** Drop reasoning from earlier assistant turns (the templates' default). */
  stripThinkingFromHistory?: boolean;
  /** Image preprocessing constants used to count vision tokens. */
  vision?: QwenVisionConfig;
}

/** Raw pieces of a response: text, <think> bodies and <tool_call> blocks, in order. */
type Segment = { kind: "text"; text: string } | { kind: "thinking"; text: string } | { kind: "tool"; raw: string; body: string };

function splitSegments(content: string): Segment[] {
  const out: Segment[] = [];
  let pos = 0;
  for (const m of content.matchAll(/<think>([\s\S]*?)<\/think>|<tool_call>([\s\S]*?)<\/tool_call>/g)) {
    if (m.index > pos) out.push({ kind: "text", text: content.slice(pos, m.index) });
    if (m[1] !== undefined) out.push({ kind: "thinking", text: m[1] });
    else out.push({ kind: "tool", raw: m[0], body: m[2] ?? "" });
    pos = m.index + m[0].length;
  }
  if (pos < content.length) out.push({ kind: "text", text: content.slice(pos) });
  return out;
}

function stripNewlines(s: string): string {
  return s.replace(/^\n+/, "").replace(/\n+$/, "");
}

export class Qwen3VLRenderer extends Renderer {
  protected readonly imEnd: number;
  readonly stripThinkingFromHistory: boolean;
  protected readonly vision: QwenVisionConfig;
  /** Qwen3.5-family templates keep one user block open around a run of tool responses. */
  protected readonly groupsToolResponses: boolean = false;
  /** Whether a parsed <think> block's newline padding is framing (Qwen3-VL Thinking) or content (Instruct). */
  protected readonly unframesThinking: boolean = true;

  constructor(tokenizer: Tokenizer, name = "qwen3_vl", options: QwenVlOptions = {}) {
    super(tokenizer, name);
    requireSingleToken(tokenizer, "<|im_start|>", name);
    this.imEnd = requireSingleToken(tokenizer, "<|im_end|>", name);
    this.stripThinkingFromHistory = options.stripThinkingFromHistory ?? true;
    this.vision = options.vision ?? QWEN3_VL_VISION;
  }

  override get supportsImages(): boolean {
    return true;
  }

  override get hasExtensionProperty(): boolean {
    return false;
  }

  /** Vision positions an image of this size occupies. */
  countImageTokens(width: number, height: number): number {
    return qwenVisionTokenCount(width, height, this.vision);
  }

  // ---- the points where the family's templates differ -------------------------------------

  protected formatThinking(thinking: string): string {
    return `<think>${thinking}</think>`;
  }

  /** Text the template writes after the assistant header (Qwen3.5: the empty think block). */
  protected assistantHeaderSuffix(_message: Message, _ctx: RenderContext): string {
    return "";
  }

  protected stripsThinkingFor(message: Message, ctx: RenderContext): boolean {
    return this.stripThinkingFromHistory && message.role === "assistant" && !ctx.isLast;
  }

  /** String content as the template writes it (Qwen3.5 trims it). */
  protected contentString(content: string): string {
    return content;
  }

  protected toolResponseWrap(): [string, string] {
    return ["<tool_response>\n", "\n</tool_response>"];
  }

  /** What separates consecutive tool responses inside one user block. */
  protected toolResponseContinuationHeader(): string {
    return "\n";
  }

  protected formatToolCalls(message: Message): string {
    return "\n" + (message.tool_calls ?? []).map(qwenToolCallText).join("\n");
  }

  protected parseToolCallBlock(raw: string, body: string): ToolCall | UnparsedToolCall {
    return parseToolCallJson(body, raw);
  }

  /** Reasoning text as parsed from a <think> block. */
  protected cleanThinking(thinking: string): string {
    return this.unframesThinking ? stripNewlines(thinking) : thinking;
  }

  /** Text right after a </think>, without the separator the template wrote. */
  protected cleanTextAfterThinking(text: string): string {
    return this.unframesThinking ? text.replace(/^\n+/, "") : text;
  }

  /** The header the generation prompt ends with (a prefill included). */
  protected generationSuffixText(role: string, ctx: RenderContext): string {
    return `${ctx.idx > 0 ? "\n" : ""}<|im_start|>${role}\n`;
  }

  /** Whether the prompt prefills an open <think> (the response starts inside reasoning). */
  protected get prefillsThinking(): boolean {
    return false;
  }

  // ---- rendering ----------------------------------------------------------------------------

  private pieces(message: Message, stripThinking: boolean): Piece[] {
    const content = message.content;
    const base: Piece[] = [];
    if (typeof content === "string") base.push({ kind: "text", text: this.contentString(content) });
    else {
      for (const p of content) {
        if (p.type === "text") base.push({ kind: "text", text: p.text });
        else if (p.type === "image") base.push({ kind: "image", source: p.image });
        else if (!stripThinking) base.push({ kind: "text", text: this.formatThinking(p.thinking) });
      }
    }
    const out: Piece[] = [];
    for (const p of base) {
      if (p.kind === "image") out.push({ kind: "text", text: "<|vision_start|>" }, p, { kind: "text", text: "<|vision_end|>" });
      else out.push(p);
    }
    return out;
  }

  renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const nl = ctx.idx > 0 ? "\n" : "";
    const role = message.role === "tool" ? "user" : message.role;
    const isTool = message.role === "tool";
    const grouping = this.groupsToolResponses;
    let header: string;
    if (isTool && grouping && ctx.prevMessage?.role === "tool") header = this.toolResponseContinuationHeader();
    else {
      header = `${nl}<|im_start|>${role}\n`;
      if (message.role === "assistant") header += this.assistantHeaderSuffix(message, ctx);
    }
    let pieces = this.pieces(message, this.stripsThinkingFor(message, ctx));
    if (isTool) {
      const [open, close] = this.toolResponseWrap();
      pieces = [{ kind: "text", text: open }, ...pieces, { kind: "text", text: close }];
    }
    if (message.tool_calls !== undefined && message.tool_calls.length > 0) pieces.push({ kind: "text", text: this.formatToolCalls(message) });
    if (!(isTool && grouping && ctx.nextMessage?.role === "tool")) pieces.push({ kind: "text", text: "<|im_end|>" });

    // Consecutive text is tokenized as one string, as the chat template's output is.
    const output: OutputChunk[] = [];
    let pending = "";
    const flush = (): void => {
      if (pending !== "") output.push(this.enc(pending));
      pending = "";
    };
    for (const p of pieces) {
      if (p.kind === "text") pending += p.text;
      else {
        flush();
        output.push(this.imageChunk(p.source));
      }
    }
    flush();

    // The produced turn is sampled after the prompt's header (prefill included), so that much of
    // its header is the prompt's and the rest (e.g. the empty block's close) is the turn's output.
    const prefix = this.generationSuffixInHeader(message, ctx);
    if (prefix !== "" && header.startsWith(prefix)) {
      const rest = header.slice(prefix.length);
      if (rest !== "") output.unshift(this.enc(rest));
      header = prefix;
    }
    return { header: this.enc(header), output };
  }

  protected imageChunk(source: string): ModelInputChunk {
    for (const t of ["<|vision_start|>", "<|vision_end|>"]) requireSingleToken(this.tokenizer, t, this.rendererName);
    return imageToChunk(source, (w, h) => this.countImageTokens(w, h));
  }

  private generationSuffixInHeader(message: Message, ctx: RenderContext): string {
    if (message.role !== "assistant" || !ctx.isLast) return "";
    return this.generationSuffixText("assistant", ctx);
  }

  protected override generationSuffix(role: string, ctx: RenderContext): number[] {
    return this.enc(this.generationSuffixText(role, ctx));
  }

  protected enc(s: string): number[] {
    return this.tokenizer.encode(s, { addSpecialTokens: false });
  }

  getStopSequences(): number[] {
    return [this.imEnd];
  }

  // ---- parsing ------------------------------------------------------------------------------

  /** Puts back the prompt's prefill so the parser sees whole blocks. */
  protected normalizeResponseTokens(tokens: readonly number[]): readonly number[] {
    return tokens;
  }

  parseResponse(tokensIn: readonly number[]): ParsedResponse {
    const tokens = this.normalizeResponseTokens(tokensIn);
    const parsed = parseResponseForStopToken(tokens, this.tokenizer, this.imEnd);
    if (parsed.termination === "malformed") return parsed;
    const message = parsed.message;
    const content = message.content as string;
    const segments = splitSegments(content);
    const dangling = detectUnterminatedToolBlock(content, "<tool_call>", "</tool_call>");
    if (segments.every((s) => s.kind === "text")) {
      if (dangling !== null) message.unparsed_tool_calls = [dangling];
      return parsed;
    }
    const parts: ContentPart[] = [];
    const calls: ToolCall[] = [];
    const unparsed: UnparsedToolCall[] = [];
    let afterThinking = false;
    segments.forEach((seg, i) => {
      if (seg.kind === "thinking") {
        const thinking = this.cleanThinking(seg.text);
        if (thinking !== "") parts.push({ type: "thinking", thinking });
        afterThinking = true;
        return;
      }
      if (seg.kind === "tool") {
        const call = this.parseToolCallBlock(seg.raw, seg.body);
        if (isToolCall(call)) calls.push(call);
        else unparsed.push(call);
        afterThinking = false;
        return;
      }
      let text = afterThinking ? this.cleanTextAfterThinking(seg.text) : seg.text;
      afterThinking = false;
      // Whitespace around tool calls is the template's separator, not the message's text.
      if (segments[i + 1]?.kind === "tool" || segments[i - 1]?.kind === "tool") text = text.trimEnd();
      if (text.trim() !== "") parts.push({ type: "text", text });
    });
    message.content = parts;
    if (calls.length > 0) message.tool_calls = calls;
    if (dangling !== null) unparsed.push(dangling);
    if (unparsed.length > 0) message.unparsed_tool_calls = unparsed;
    return { message, termination: parsed.termination };
  }

  override streamingMarkup(): StreamingMarkup {
    return { thinkOpen: "<think>", thinkClose: "</think>", startsInThinking: this.prefillsThinking, toolOpen: ["<tool_call>"] };
  }

  override toOpenAIMessage(message: Message): Record<string, unknown> {
    const out = super.toOpenAIMessage(message);
    if (typeof message.content !== "string" && message.content.some((p) => p.type === "image")) {
      // The chat templates take images as parts; text stays text.
      out["content"] = message.content.filter((p) => p.type !== "thinking").map((p) => (p.type === "image" ? { type: "image", image: p.image } : p));
    }
    return out;
  }

  override createConversationPrefixWithTools(tools: ToolSpec[], systemPrompt = ""): Message[] {
    return qwen3ToolsPrefix(tools, systemPrompt);
  }
}

/** Qwen3-VL Instruct: no reasoning format; a <think> block is taken as written. */
export class Qwen3VLInstructRenderer extends Qwen3VLRenderer {
  protected override readonly unframesThinking: boolean = false;

  constructor(tokenizer: Tokenizer, name = "qwen3_vl_instruct", options: QwenVlOptions = {}) {
    super(tokenizer, name, options);
  }
}

export const QWEN3_5_TOOL_FORMAT_REMINDER =
  "If you choose to call a function ONLY reply in the following format with NO suffix:\n\n" +
  "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n" +
  "<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n" +
  "</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n" +
  "- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within " +
  "<tool_call></tool_call> XML tags\n- Required parameters MUST be specified\n" +
  "- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after\n" +
  "- If there is no function call available, answer the question like normal with your current knowledge and do not " +
  "tell the user about function calls\n</IMPORTANT>";

/** The "# Tools" block of the Qwen3.5 and Nemotron templates around the given declarations. */
export function xmlToolsText(declarations: string): string {
  return "# Tools\n\nYou have access to the following functions:\n\n<tools>\n" + declarations + "\n</tools>\n\n" + QWEN3_5_TOOL_FORMAT_REMINDER;
}

/** Python's str() of a JSON value, which the Qwen3.5 template applies to scalar arguments. */
function pythonStr(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  return pythonJsonDumps(value);
}

const FUNCTION_BLOCK_RE = /^\s*<tool_call>\s*<function=([^>\n]+)>\s*([\s\S]*?)\s*<\/function>\s*<\/tool_call>\s*$/;
const PARAM_BLOCK_RE = /<parameter=([^>\n]+)>\s*([\s\S]*?)\s*<\/parameter>/g;

/** Parses an XML tool call; parameter values that are JSON become JSON, others stay strings. */
export function parseXmlToolCall(raw: string): ToolCall | UnparsedToolCall {
  const m = FUNCTION_BLOCK_RE.exec(raw);
  if (m === null) return { raw_text: raw, error: "Malformed XML tool call: expected <tool_call><function=NAME>…</function></tool_call>" };
  const name = m[1]!.trim();
  if (name === "") return { raw_text: raw, error: "Missing function name" };
  const body = m[2]!;
  const args: Record<string, unknown> = {};
  let pos = 0;
  for (const p of body.matchAll(PARAM_BLOCK_RE)) {
    if (body.slice(pos, p.index).trim() !== "") return { raw_text: raw, error: "Unexpected non-parameter content inside <function> block" };
    const paramName = p[1]!.trim();
    if (paramName === "") return { raw_text: raw, error: "Empty parameter name" };
    const text = stripNewlines(p[2]!);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = text;
    }
    args[paramName] = value;
    pos = p.index + p[0].length;
  }
  if (body.slice(pos).trim() !== "") return { raw_text: raw, error: "Unexpected trailing content inside <function> block" };
  return { type: "function", id: null, function: { name, arguments: pythonJsonDumps(args) } };
}

/** Qwen3.5 (and Qwen3.6): see the file comment. */
export class Qwen3_5Renderer extends Qwen3VLRenderer {
  protected override readonly groupsToolResponses: boolean = true;
  private readonly thinkPrefix: number[];
  private readonly thinkClose: number;

  constructor(tokenizer: Tokenizer, name = "qwen3_5", options: QwenVlOptions = {}) {
    super(tokenizer, name, options);
    this.thinkPrefix = this.enc("<think>\n");
    this.thinkClose = requireSingleToken(tokenizer, "</think>", name);
  }

  protected override get prefillsThinking(): boolean {
    return !this.disablesThinking;
  }

  protected override contentString(content: string): string {
    return content.trim();
  }

  protected override formatThinking(thinking: string): string {
    return `<think>\n${thinking}\n</think>\n\n`;
  }

  protected override assistantHeaderSuffix(message: Message, ctx: RenderContext): string {
    if (ctx.idx <= ctx.lastUserIndex) return "";
    return hasThinking(message.content) ? "" : "<think>\n\n</think>\n\n";
  }

  protected override generationSuffixText(role: string, ctx: RenderContext): string {
    return `${ctx.idx > 0 ? "\n" : ""}<|im_start|>${role}\n<think>\n`;
  }

  /** How one argument value is written inside <parameter=…> (Qwen3.5: JSON for containers, str() for scalars). */
  protected formatToolArgument(value: unknown): string {
    return value !== null && typeof value === "object" ? pythonJsonDumps(value) : pythonStr(value);
  }

  protected toolCallXml(tc: ToolCall): string {
    let args: unknown;
    try {
      args = tc.function.arguments ? JSON.parse(tc.function.arguments) : {};
    } catch (err) {
      throw new RendererError(`tool call ${tc.function.name}: arguments are not valid JSON (${(err as Error).message}): ${tc.function.arguments}`);
    }
    if (args === null || typeof args !== "object" || Array.isArray(args)) {
      throw new RendererError(`tool call ${tc.function.name}: arguments must be a JSON object, got ${tc.function.arguments}`);
    }
    const lines = [`<tool_call>\n<function=${tc.function.name}>`];
    for (const [k, v] of Object.entries(args as Record<string, unknown>)) lines.push(`<parameter=${k}>\n${this.formatToolArgument(v)}\n</parameter>`);
    lines.push("</function>\n</tool_call>");
    return lines.join("\n");
  }

  protected override formatToolCalls(message: Message): string {
    const c = message.content;
    const visible = typeof c === "string" ? c.trim() !== "" : c.some((p) => (p.type === "text" && p.text.trim() !== "") || p.type === "image");
    return (visible ? "\n\n" : "") + (message.tool_calls ?? []).map((tc) => this.toolCallXml(tc)).join("\n");
  }

  protected override parseToolCallBlock(raw: string): ToolCall | UnparsedToolCall {
    return parseXmlToolCall(raw);
  }

  protected override cleanThinking(thinking: string): string {
    return thinking.trim();
  }

  protected override cleanTextAfterThinking(text: string): string {
    return text.startsWith("\n\n") ? text.slice(2) : text;
  }

  protected override normalizeResponseTokens(tokens: readonly number[]): readonly number[] {
    const p = this.thinkPrefix;
    const startsWithPrefix = p.length <= tokens.length && p.every((t, i) => tokens[i] === t);
    return !startsWithPrefix && tokens.includes(this.thinkClose) ? [...p, ...tokens] : tokens;
  }

  override toOpenAIMessage(message: Message): Record<string, unknown> {
    const out = super.toOpenAIMessage(message);
    // The Qwen3.5 template iterates over argument mappings.
    const calls = out["tool_calls"];
    if (Array.isArray(calls)) {
      out["tool_calls"] = calls.map((c: { function: { name: string; arguments: string } }) => ({
        ...c,
        function: { ...c.function, arguments: JSON.parse(c.function.arguments) as unknown },
      }));
    }
    return out;
  }

  override createConversationPrefixWithTools(tools: ToolSpec[], systemPrompt = ""): Message[] {
    if (tools.length === 0) return [{ role: "system", content: systemPrompt }];
    const text = xmlToolsText(tools.map((t) => pythonJsonDumps(t)).join("\n"));
    return [{ role: "system", content: systemPrompt ? text + "\n\n" + systemPrompt : text }];
  }
}

/** Qwen3.5 with thinking off: the prompt ends with a closed, empty think block. */
export class Qwen3_5DisableThinkingRenderer extends Qwen3_5Renderer {
  override readonly disablesThinking: boolean = true;

  constructor(tokenizer: Tokenizer, name = "qwen3_5_disable_thinking", options: QwenVlOptions = {}) {
    super(tokenizer, name, options);
  }

  protected override generationSuffixText(role: string, ctx: RenderContext): string {
    return `${ctx.idx > 0 ? "\n" : ""}<|im_start|>${role}\n<think>\n\n</think>\n\n`;
  }
}
