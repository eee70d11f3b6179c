// Stop conditions of a sampled sequence. Stop token ids end a sequence with the stop token kept in
// its tokens (the cookbook's renderers split on it). Stop strings end it as soon as the decoded
// text of the generated tokens contains one of them; the token that completed the string is kept
// (tokens are never cut in the middle), like vLLM's token output.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runtimeImport } from "../../runtimeImport.ts";

/** Turns token ids into text (the model's tokenizer). */
export interface TokenDecoder {
  decode(tokens: number[]): string;
}

/**
 * Loads the tokenizer of a model folder for stop strings. Imported lazily: @huggingface/transformers
 * takes a second or two to load and only requests with stop strings need it.
 */
export async function loadTokenDecoder(dir: string): Promise<TokenDecoder> {
  const file = join(dir, "tokenizer.json");
  if (!existsSync(file)) {
    throw new Error(`stop strings need the model's tokenizer, but ${dir} has no tokenizer.json; pass stop token ids instead`);
  }
  const json = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  const cfgFile = join(dir, "tokenizer_config.json");
  const config = existsSync(cfgFile) ? (JSON.parse(readFileSync(cfgFile, "utf8")) as Record<string, unknown>) : {};
  const { PreTrainedTokenizer } = await runtimeImport<typeof import("@huggingface/transformers")>("@huggingface/transformers");
  const tok = new PreTrainedTokenizer(json, config);
  return { decode: (tokens) => tok.decode(tokens, { skip_special_tokens: false, clean_up_tokenization_spaces: false }) };
}

/** Checks one growing sequence against stop strings, decoding only a tail window each step. */
export class StopStringMatcher {
  private readonly window: number;

  constructor(
    private readonly strings: readonly string[],
    private readonly decoder: TokenDecoder,
  ) {
    // A character takes at most 4 byte-level tokens; a few more cover decoders that merge spaces.
    const longest = Math.max(...strings.map((s) => s.length));
    this.window = 4 * longest + 8;
  }

  /** True when the text of `generated` (the newest token last) now contains a stop string. */
  matches(generated: readonly number[]): boolean {
    const tail = generated.slice(Math.max(0, generated.length - this.window));
    const text = this.decoder.decode(tail);
    return this.strings.some((s) => text.includes(s));
  }
}
