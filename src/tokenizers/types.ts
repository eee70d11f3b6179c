// The tokenizer surface the cookbook relies on. Kept small and ours so renderers and datasets do
// not depend on a particular tokenizer runtime, and so tests can hand in hand-built tokenizers.

export interface EncodeOptions {
  /** Add the model's BOS/EOS the way its post-processor says (HF default: true). */
  addSpecialTokens?: boolean;
  /**
   * Tokenize the text of special tokens (e.g. a literal "<|im_end|>" in message content) as plain
   * text instead of as the special token, so message text cannot forge turn markers.
   */
  splitSpecialTokens?: boolean;
}

export interface DecodeOptions {
  skipSpecialTokens?: boolean;
}

export interface Tokenizer {
  /** The name it was loaded under (model name, path, or registered name). */
  readonly name: string;
  encode(text: string, options?: EncodeOptions): number[];
  decode(tokens: readonly number[], options?: DecodeOptions): string;
  /** Id of a vocabulary entry or added token, or undefined when the tokenizer has no such token. */
  tokenToId(token: string): number | undefined;
  idToToken(id: number): string | undefined;
  readonly bosToken: string | null;
  readonly bosTokenId: number | null;
  readonly eosToken: string | null;
  readonly eosTokenId: number | null;
  /** Number of ids (vocabulary plus added tokens). */
  readonly vocabSize: number;
  /** Ids of tokens marked special (BOS/EOS/turn markers…), excluded e.g. from bits-per-byte. */
  readonly specialTokenIds: ReadonlySet<number>;
  /** The model's own Jinja chat template, when its tokenizer_config ships one. */
  readonly chatTemplate: string | null;
}
