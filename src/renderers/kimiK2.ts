// Kimi K2 (Thinking): <|im_user|>user<|im_middle|>…<|im_end|>, assistant turns
// <think>R</think>answer. History turns get an empty <think></think>; the turn being produced
// keeps its reasoning. A default system prompt is inserted when there is none, as HF's template does.
import type { Tokenizer } from "../tokenizers/types.ts";
import { parseResponseForStopToken, Renderer, requireSingleToken } from "./base.ts";
import { detectUnterminatedToolBlock, ensureList, ensureText, parseThinkBlocks } from "./content.ts";
import { pythonJsonDumps } from "./pyjson.ts";
import type { StreamingMarkup } from "./streaming.ts";
import type { Message, ParsedResponse, RenderContext, RenderedMessage, SupervisedExample, ToolCall, ToolSpec, TrainOnWhat, UnparsedToolCall } from "./types.ts";

export const KIMI_DEFAULT_SYSTEM_PROMPT = "You are Kimi, an AI assistant created by Moonshot AI.";

const SECTION_RE = /<\|tool_calls_section_begin\|>([\s\S]*?)<\|tool_calls_section_end\|>|<\|tool_call_section_begin\|>([\s\S]*?)<\|tool_call_section_end\|>/;
// Every call block is matched loosely and then checked, so a block with a malformed id or no
// argument marker becomes an unparsed call (the parse-error policy decides) instead of vanishing.
const CALL_BLOCK_RE = /<\|tool_call_begin\|>([\s\S]*?)<\|tool_call_end\|>/g;
const ARGUMENT_MARKER = "<|tool_call_argument_begin|>";
const CALL_ID_RE = /^[^<\s]+:\d+$/;

function toolNameFromId(id: string): string {
  let name = id.split(":", 1)[0]!;
  const dot = name.indexOf(".");
  if (dot !== -1) name = name.slice(dot + 1);
  return name;
}

export class KimiK2Renderer extends Renderer {
  private readonly imEnd: number;

  constructor(
    tokenizer: Tokenizer,
    name = "kimi_k2",
    readonly stripThinkingFromHistory = true,
  ) {
    super(tokenizer, name);
    for (const t of ["<|im_user|>", "<|im_assistant|>", "<|im_system|>", "<|im_middle|>"]) requireSingleToken(tokenizer, t, name);
    this.imEnd = requireSingleToken(tokenizer, "<|im_end|>", name);
  }

  override knownRoles(): readonly string[] {
    return ["system", "user", "assistant", "tool", "tool_declare"];
  }

  protected override prepareMessages(messages: readonly Message[]): Message[] {
    const system: Message = { role: "system", content: KIMI_DEFAULT_SYSTEM_PROMPT };
    // customized training needs the field on every message, the other modes forbid it.
    if (messages.some((m) => m.trainable !== undefined)) system.trainable = false;
    if (messages.length === 0) return [system];
    const first = messages[0]!.role;
    if (first === "tool_declare") {
      if (messages.length >= 2 && messages[1]!.role === "system") return [...messages];
      return [messages[0]!, system, ...messages.slice(1)];
    }
    return first === "system" ? [...messages] : [system, ...messages];
  }

  private enc(s: string): number[] {
    return this.tokenizer.encode(s, { addSpecialTokens: false });
  }

  renderMessage(message: Message, ctx: RenderContext): RenderedMessage {
    const role = message.role;
    let header: string;
    if (role === "user") header = `<|im_user|>user<|im_middle|>`;
    else if (role === "assistant") header = `<|im_assistant|>assistant<|im_middle|>`;
    else if (role === "tool") {
      if (!message.name) process.emitWarning(`${this.rendererName}: tool message without "name"; rendering the role as "tool"`);
      if (!message.tool_call_id) {
        process.emitWarning(`${this.rendererName}: tool message without "tool_call_id"; Kimi renders "## Return of <id>"`);
      }
      header = `<|im_system|>${message.name || "tool"}<|im_middle|>## Return of ${message.tool_call_id ?? ""}\n`;
    } else header = `<|im_system|>${role}<|im_middle|>`;

    let out: string;
    if (role === "assistant") {
      const parts = ensureList(message.content);
      const thinking = parts.map((p) => (p.type === "thinking" ? p.thinking : "")).join("");
      const text = parts.map((p) => (p.type === "text" ? p.text : "")).join("");
      const keep = ctx.inLastAssistantTurn || !this.stripThinkingFromHistory;
      out = keep && thinking ? `<think>${thinking}</think>` : "<think></think>";
      out += text;
      const calls = message.tool_calls ?? [];
      if (calls.length > 0) {
        out += "<|tool_calls_section_begin|>";
        calls.forEach((tc, idx) => {
          const id = tc.id || `functions.${tc.function.name}:${idx}`;
          out += `<|tool_call_begin|>${id}<|tool_call_argument_begin|>${tc.function.arguments}<|tool_call_end|>`;
        });
        out += "<|tool_calls_section_end|>";
      }
      out += "<|im_end|>";
    } else {
      out = ensureText(message.content) + "<|im_end|>";
    }
    return { header: this.enc(header), output: [this.enc(out)] };
  }

  /** A turn starts after the last assistant message that did not call a tool (the target excluded). */
  protected override lastAssistantTurnStartIndex(messages: readonly Message[]): number {
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i]!;
      if (m.role === "assistant" && !(m.tool_calls && m.tool_calls.length > 0)) return i + 1;
    }
    return 0;
  }

  /** Splits multi-turn conversations at user messages: history renders differently from the produced turn. */
  override buildSupervisedExamples(messages: readonly Message[], trainOnWhat: TrainOnWhat = "last_assistant_turn"): SupervisedExample[] {
    if (trainOnWhat === "last_assistant_message" || trainOnWhat === "last_assistant_turn") {
      return [this.buildSupervisedExample(messages, trainOnWhat)];
    }
    const userIdxs = messages.flatMap((m, i) => (m.role === "user" ? [i] : []));
    return [...userIdxs.slice(1), messages.length].map((end) =>
      this.buildSupervisedExample(messages.slice(0, end), trainOnWhat === "all_assistant_messages" ? "last_assistant_turn" : trainOnWhat),
    );
  }

  getStopSequences(): number[] {
    return [this.imEnd];
  }

  override streamingMarkup(): StreamingMarkup {
    return {
      thinkOpen: "<think>",
      thinkClose: "</think>",
      startsInThinking: false,
      toolOpen: ["<|tool_calls_section_begin|>", "<|tool_call_section_begin|>"],
    };
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    const parsed = parseResponseForStopToken(tokens, this.tokenizer, this.imEnd);
    if (parsed.termination === "malformed") return parsed;
    const message = parsed.message;
    const content = message.content as string;
    const section = SECTION_RE.exec(content);
    const text = section ? content.slice(0, section.index) : content;
    const toolCalls: ToolCall[] = [];
    const unparsed: UnparsedToolCall[] = [];
    if (section) {
      for (const m of (section[1] ?? section[2] ?? "").matchAll(CALL_BLOCK_RE)) {
        const body = m[1]!;
        const marker = body.indexOf(ARGUMENT_MARKER);
        if (marker === -1) {
          unparsed.push({ raw_text: m[0], error: `tool call has no ${ARGUMENT_MARKER} between its id and its arguments` });
          continue;
        }
        const id = body.slice(0, marker).trim();
        const args = body.slice(marker + ARGUMENT_MARKER.length).trim();
        if (!CALL_ID_RE.test(id)) {
          unparsed.push({ raw_text: m[0], error: `tool call id ${JSON.stringify(id)} is not of the form functions.NAME:INDEX` });
          continue;
        }
        try {
          JSON.parse(args);
          toolCalls.push({ type: "function", id, function: { name: toolNameFromId(id), arguments: args } });
        } catch (err) {
          unparsed.push({ raw_text: m[0], error: `Invalid JSON: ${(err as Error).message}` });
        }
      }
    }
    const dangling =
      detectUnterminatedToolBlock(content, "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>") ??
      detectUnterminatedToolBlock(content, "<|tool_call_section_begin|>", "<|tool_call_section_end|>") ??
      detectUnterminatedToolBlock(content, "<|tool_call_begin|>", "<|tool_call_end|>");
    if (dangling !== null) unparsed.push(dangling);
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    if (unparsed.length > 0) message.unparsed_tool_calls = unparsed;
    message.content = parseThinkBlocks(text) ?? text;
    return { message, termination: parsed.termination };
  }

  override createConversationPrefixWithTools(tools: ToolSpec[], systemPrompt = ""): Message[] {
    const out: Message[] = [];
    if (tools.length > 0) {
      const payload = tools.map((t) => ({ type: "function", function: t }));
      out.push({ role: "tool_declare", content: pythonJsonDumps(payload, { separators: [",", ":"], sortKeys: true }) });
    }
    out.push({ role: "system", content: systemPrompt || KIMI_DEFAULT_SYSTEM_PROMPT });
    return out;
  }
}
