// Writes a trained byte-level BPE as Hugging Face tokenizer files: tokenizer.json (the `tokenizers`
// library format, read by transformers' fast tokenizers and by @huggingface/transformers) and
// tokenizer_config.json (special tokens and the role_colon chat template).
import fs from "node:fs";
import path from "node:path";
import type { TrainedBpe } from "./bpeTrainer.ts";
import { PRETOKENIZE_PATTERN } from "./pretokenize.ts";

export const ENDOFTEXT = "<|endoftext|>";

/**
 * role_colon (docs/cookbook-parity.md#base-model-role-colon-format): BOS, then "Role: content⏎⏎" per message with the
 * role capitalised like Python's str.capitalize(); the generation prompt ends at "Assistant:"
 * with no trailing space. No newlines outside expressions, so Python's trim_blocks/lstrip_blocks
 * settings cannot change the output.
 */
export const ROLE_COLON_CHAT_TEMPLATE =
  "{{ bos_token }}{% for message in messages %}{{ message['role'] | capitalize }}: {{ message['content'] }}{{ '\\n\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}Assistant:{% endif %}";

export interface HfTokenizerOptions {
  /** Token used as BOS, EOS and padding (one token plays all three roles, as in GPT-2). */
  specialToken?: string;
  modelMaxLength: number;
}

function addedToken(id: number, content: string): Record<string, unknown> {
  return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true };
}

export function buildTokenizerJson(bpe: TrainedBpe, options: HfTokenizerOptions): Record<string, unknown> {
  const special = options.specialToken ?? ENDOFTEXT;
  const specialId = bpe.vocab.get(special);
  if (specialId === undefined) throw new Error(`buildTokenizerJson: special token ${special} is not in the vocabulary`);
  const vocab: Record<string, number> = {};
  for (const [tok, id] of [...bpe.vocab].sort((a, b) => a[1] - b[1])) vocab[tok] = id;
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: bpe.specialTokens.map((t) => addedToken(bpe.vocab.get(t) as number, t)),
    normalizer: null,
    pre_tokenizer: {
      type: "Sequence",
      pretokenizers: [
        { type: "Split", pattern: { Regex: PRETOKENIZE_PATTERN }, behavior: "Isolated", invert: false },
        { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
    // Like Llama 3: plain encode() with special tokens on prepends BOS; renderers encode chunks
    // with add_special_tokens=false and add BOS themselves.
    post_processor: {
      type: "TemplateProcessing",
      single: [{ SpecialToken: { id: special, type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
      pair: [
        { SpecialToken: { id: special, type_id: 0 } },
        { Sequence: { id: "A", type_id: 0 } },
        { SpecialToken: { id: special, type_id: 1 } },
        { Sequence: { id: "B", type_id: 1 } },
      ],
      special_tokens: { [special]: { id: special, ids: [specialId], tokens: [special] } },
    },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: bpe.merges,
    },
  };
}

export function buildTokenizerConfig(bpe: TrainedBpe, options: HfTokenizerOptions): Record<string, unknown> {
  const special = options.specialToken ?? ENDOFTEXT;
  const decoder: Record<string, unknown> = {};
  for (const t of bpe.specialTokens) {
    const { id, ...rest } = addedToken(bpe.vocab.get(t) as number, t);
    decoder[String(id)] = rest;
  }
  return {
    tokenizer_class: "PreTrainedTokenizerFast",
    bos_token: special,
    eos_token: special,
    pad_token: special,
    // Decoding must give back the exact text (no " ?" → "?" clean-up) for round trips and parsing.
    clean_up_tokenization_spaces: false,
    model_max_length: options.modelMaxLength,
    added_tokens_decoder: decoder,
    chat_template: ROLE_COLON_CHAT_TEMPLATE,
  };
}

export function writeHfTokenizer(dir: string, bpe: TrainedBpe, options: HfTokenizerOptions): void {
  fs.mkdirSync(dir, { recursive: true });
  // Compact: the vocab and merges are thousands of entries; one line each would double the size.
  fs.writeFileSync(path.join(dir, "tokenizer.json"), JSON.stringify(buildTokenizerJson(bpe, options)) + "\n");
  fs.writeFileSync(path.join(dir, "tokenizer_config.json"), JSON.stringify(buildTokenizerConfig(bpe, options), null, 2) + "\n");
  const special = options.specialToken ?? ENDOFTEXT;
  fs.writeFileSync(path.join(dir, "special_tokens_map.json"), JSON.stringify({ bos_token: special, eos_token: special, pad_token: special }, null, 2) + "\n");
}

/** Reads back what writeHfTokenizer wrote (vocab, merges, special tokens) for our own encoder. */
export function readTrainedBpe(dir: string): TrainedBpe {
  const file = path.join(dir, "tokenizer.json");
  const json = JSON.parse(fs.readFileSync(file, "utf8")) as {
    added_tokens?: Array<{ content: string; special?: boolean }>;
    model?: { type?: string; vocab?: Record<string, number>; merges?: Array<[string, string] | string> };
  };
  if (json.model?.type !== "BPE" || !json.model.vocab || !json.model.merges) {
    throw new Error(`${file}: expected model.type "BPE" with vocab and merges`);
  }
  const merges = json.model.merges.map((m): [string, string] => {
    if (Array.isArray(m)) return m;
    const [a, b] = m.split(" ");
    return [a, b];
  });
  return {
    vocab: new Map(Object.entries(json.model.vocab)),
    merges,
    specialTokens: (json.added_tokens ?? []).filter((t) => t.special !== false).map((t) => t.content),
  };
}
