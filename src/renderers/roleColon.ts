// "User: …⏎⏎Assistant: …" for base models. The stop string "⏎⏎User:" spans two messages: the
// "⏎⏎" ends the output and "User:" is the next header, so the final message carries it as
// stopOverlap and trains it.
import { Renderer } from "./base.ts";
import { ensureText } from "./content.ts";
import type { Message, ParsedResponse, RenderContext, RenderedMessage } from "./types.ts";

const CONTENT_PREFIX = " ";
const CONTENT_SUFFIX = "\n\n";
const STOP = "\n\nUser:";

function capitalize(s: string): string {
  // Python's str.capitalize: first character upper, the rest lower.
  return s.length === 0 ? s : s[0]!.toUpperCase() + s.slice(1).toLowerCase();
}

export class RoleColonRenderer extends Renderer {
  override get hasExtensionProperty(): boolean {
    return true;
  }

  override knownRoles(): readonly string[] {
    return ["system", "user", "assistant"];
  }

  protected override bosTokens(): number[] {
    const bos = this.tokenizer.bosToken;
    return bos === null ? [] : this.tokenizer.encode(bos, { addSpecialTokens: false });
  }

  renderMessage(message: Message, _ctx: RenderContext): RenderedMessage {
    const enc = (s: string): number[] => this.tokenizer.encode(s, { addSpecialTokens: false });
    const output = CONTENT_PREFIX + ensureText(message.content) + CONTENT_SUFFIX;
    return {
      header: enc(capitalize(message.role) + ":"),
      output: [enc(output)],
      ...(message.role === "assistant" ? { stopOverlap: enc("User:") } : {}),
    };
  }

  getStopSequences(): string[] {
    return [STOP];
  }

  parseResponse(tokensIn: readonly number[]): ParsedResponse {
    let tokens = tokensIn;
    const eos = this.tokenizer.eosTokenId;
    const endedWithEos = eos !== null && tokens.length > 0 && tokens[tokens.length - 1] === eos;
    if (endedWithEos) tokens = tokens.slice(0, -1);
    const text = this.tokenizer.decode(tokens);
    const pieces = text.split(STOP);
    let content = pieces[0]!;
    if (content.startsWith(CONTENT_PREFIX)) content = content.slice(CONTENT_PREFIX.length);
    if (content.endsWith(CONTENT_SUFFIX)) content = content.slice(0, -CONTENT_SUFFIX.length);
    const message: Message = { role: "assistant", content };
    if (pieces.length === 1) return { message, termination: endedWithEos ? "eos" : "malformed" };
    // Sampling should have stopped at the delimiter before any EOS; more than one delimiter likewise.
    if (pieces.length === 2 && !endedWithEos) return { message, termination: "stop_sequence" };
    return { message, termination: "malformed" };
  }
}
