// Llama 3 Instruct: <|start_header_id|>role<|end_header_id|>⏎⏎content<|eot_id|>. Unlike the HF
// template of Llama 3.1+, no "Cutting Knowledge Date" preamble is added to the system message
// (add it yourself if you want it). No tool calling: Llama 3 emits bare JSON for calls, which
// cannot be told apart from a JSON answer.
import { parseResponseForStopToken, Renderer, requireSingleToken } from "./base.ts";
import { ensureText } from "./content.ts";
import type { Tokenizer } from "../tokenizers/types.ts";
import type { Message, ParsedResponse, RenderContext, RenderedMessage } from "./types.ts";

export class Llama3Renderer extends Renderer {
  private readonly eot: number;
  private readonly bos: number;

  constructor(tokenizer: Tokenizer, name = "llama3") {
    super(tokenizer, name);
    this.bos = requireSingleToken(tokenizer, "<|begin_of_text|>", name);
    this.eot = requireSingleToken(tokenizer, "<|eot_id|>", name);
    requireSingleToken(tokenizer, "<|start_header_id|>", name);
    requireSingleToken(tokenizer, "<|end_header_id|>", name);
  }

  override get hasExtensionProperty(): boolean {
    return true;
  }

  protected override bosTokens(): number[] {
    return [this.bos];
  }

  renderMessage(message: Message, _ctx: RenderContext): RenderedMessage {
    const enc = (s: string): number[] => this.tokenizer.encode(s, { addSpecialTokens: false });
    return {
      header: enc(`<|start_header_id|>${message.role}<|end_header_id|>\n\n`),
      output: [enc(ensureText(message.content) + "<|eot_id|>")],
    };
  }

  getStopSequences(): number[] {
    return [this.eot];
  }

  parseResponse(tokens: readonly number[]): ParsedResponse {
    return parseResponseForStopToken(tokens, this.tokenizer, this.eot);
  }
}
