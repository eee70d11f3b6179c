// tml_v0: Thinking Machines' Inkling models (docs/renderers.md#tml_v0). The cookbook
// delegates TMLv0 framing — tokens, SFT masks, response parsing — to the external tml-renderers
// library and owns only the glue kept here: the reasoning-effort message (effort×1000, placed
// after the leading system messages), which train_on_what modes exist, the tool declaration
// message and the refusals. That library's format is not published, so the framing comes from a
// backend the program registers (registerTmlV0Backend); without one, getRenderer("tml_v0")
// explains what is missing instead of guessing a format.
import type { ModelInput } from "../tinker/types.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import { Renderer } from "./base.ts";
import { pythonJsonDumps } from "./pyjson.ts";
import {
  RendererError,
  type Message,
  type ParsedResponse,
  type RenderContext,
  type RenderedMessage,
  type Role,
  type SupervisedExample,
  type ToolSpec,
  type TrainOnWhat,
} from "./types.ts";

/** The role of the effort message handed to the backend; content is the effort in thousandths. */
export const TML_EFFORT_ROLE = "thinking_effort";
export const TML_DEFAULT_EFFORT = 0.9;

/** What renders TMLv0 conversations (the tml-renderers library's part). */
export interface TmlV0Backend {
  /** The prompt for the next assistant turn of `messages` (the effort message already placed). */
  renderForCompletion(messages: readonly Message[]): ModelInput;
  /** Training examples; assistant messages carry `trainable` saying whether they are trained. */
  renderForSft(messages: readonly Message[]): SupervisedExample[];
  stopTokens(): number[];
  parseResponse(tokens: readonly number[]): ParsedResponse;
}

export type TmlV0BackendFactory = (tokenizer: Tokenizer) => TmlV0Backend;

let backendFactory: TmlV0BackendFactory | null = null;

/** Plugs in the TMLv0 framing (null removes it). */
export function registerTmlV0Backend(factory: TmlV0BackendFactory | null): void {
  backendFactory = factory;
}

function checkEffort(effort: number): void {
  if (!Number.isFinite(effort) || effort < 0 || effort >= 1) {
    throw new RendererError(`tml_v0: thinking effort must be a finite number in [0, 1), got ${effort}`);
  }
}

/** Inserts the effort message after the leading system messages. */
export function withEffortMessage(messages: readonly Message[], effort: number): Message[] {
  checkEffort(effort);
  let at = 0;
  while (at < messages.length && messages[at]!.role === "system") at++;
  const effortMessage: Message = { role: TML_EFFORT_ROLE, content: String(Math.round(effort * 1000)) };
  return [...messages.slice(0, at), effortMessage, ...messages.slice(at)];
}

const SFT_MODES: readonly TrainOnWhat[] = ["all_assistant_messages", "last_assistant_message", "customized"];

export class TmlV0Renderer extends Renderer {
  private readonly backend: TmlV0Backend;

  constructor(
    tokenizer: Tokenizer,
    name = "tml_v0",
    readonly effort: number = TML_DEFAULT_EFFORT,
  ) {
    super(tokenizer, name);
    checkEffort(effort);
    if (backendFactory === null) {
      throw new RendererError(
        `renderer ${name} renders Inkling conversations with TMLv0 framing, which the cookbook takes from the ` +
          `tml-renderers library; no TMLv0 backend is registered in this program (registerTmlV0Backend). ` +
          `Use it against a service that serves Inkling models with a backend that implements that format.`,
      );
    }
    this.backend = backendFactory(tokenizer);
  }

  /** TMLv0 frames each message on its own, so a shorter conversation's tokens prefix a longer one's. */
  override get hasExtensionProperty(): boolean {
    return true;
  }

  override get supportsImages(): boolean {
    return true;
  }

  override knownRoles(): readonly string[] {
    return ["system", "user", "assistant", "tool", "tool_declare"];
  }

  renderMessage(_message: Message, _ctx: RenderContext): RenderedMessage {
    throw new RendererError("tml_v0 renders whole conversations (through its backend), not single messages");
  }

  override buildGenerationPrompt(messages: readonly Message[], role: Role = "assistant", prefill?: string): ModelInput {
    if (role !== "assistant") throw new RendererError(`tml_v0 only generates assistant turns, got role ${JSON.stringify(role)}`);
    if (prefill !== undefined) {
      throw new RendererError("tml_v0 sampling does not take a partial assistant message (prefill); pass complete messages");
    }
    return this.backend.renderForCompletion(withEffortMessage(messages, this.effort));
  }

  override buildSupervisedExamples(messages: readonly Message[], trainOnWhat: TrainOnWhat = "all_assistant_messages"): SupervisedExample[] {
    if (!SFT_MODES.includes(trainOnWhat)) {
      throw new RendererError(`tml_v0 supports train_on_what ${SFT_MODES.join(", ")}; got ${trainOnWhat}`);
    }
    let lastAssistant = -1;
    messages.forEach((m, i) => {
      if (m.role === "assistant") lastAssistant = i;
    });
    const marked = messages.map((m, i): Message => {
      if (m.role !== "assistant") {
        const { trainable: _dropped, ...rest } = m;
        return rest;
      }
      const trained = trainOnWhat === "all_assistant_messages" ? true : trainOnWhat === "last_assistant_message" ? i === lastAssistant : (m.trainable ?? true);
      return { ...m, trainable: trained };
    });
    return this.backend.renderForSft(withEffortMessage(marked, this.effort));
  }

  override buildSupervisedExample(messages: readonly Message[], trainOnWhat: TrainOnWhat = "all_assistant_messages"): SupervisedExample {
    const examples = this.buildSupervisedExamples(messages, trainOnWhat);
    if (examples.length !== 1) throw new RendererError(`tml_v0 produced ${examples.length} examples here; use buildSupervisedExamples`);
    return examples[0]!;
  }

  getStopSequences(): number[] {
    return this.backend.stopTokens();
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    return this.backend.parseResponse(tokens);
  }

  /** A system message (if any) and a tool_declare message with the tools as compact OpenAI-style JSON. */
  override createConversationPrefixWithTools(tools: ToolSpec[], systemPrompt = ""): Message[] {
    const out: Message[] = [];
    if (systemPrompt) out.push({ role: "system", content: systemPrompt });
    if (tools.length > 0) {
      out.push({
        role: "tool_declare",
        content: pythonJsonDumps(
          tools.map((t) => ({ type: "function", function: t })),
          { separators: [",", ":"] },
        ),
      });
    }
    return out;
  }
}
