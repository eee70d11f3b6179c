// Tokenizers backed by @huggingface/transformers, built from a tokenizer.json +
// tokenizer_config.json pair on disk (or already-parsed objects, which tests use to build tiny
// synthetic tokenizers).
import * as fs from "node:fs";
import * as path from "node:path";
import * as transformers from "@huggingface/transformers";
import type { DecodeOptions, EncodeOptions, Tokenizer } from "./types.ts";

type HFTokenizer = transformers.PreTrainedTokenizer;

interface AddedTokenJSON {
  id: number;
  content: string;
  special?: boolean;
}

export class TokenizerLoadError extends Error {
  override name = "TokenizerLoadError";
}

function readJSON(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new TokenizerLoadError(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw new TokenizerLoadError(`${file} does not hold a JSON object`);
    }
    return value as Record<string, unknown>;
  } catch (err) {
    if (err instanceof TokenizerLoadError) throw err;
    throw new TokenizerLoadError(`${file} is not valid JSON: ${(err as Error).message}`);
  }
}

/** True when `dir` holds the files a tokenizer is loaded from. */
export function isTokenizerDir(dir: string): boolean {
  return fs.existsSync(path.join(dir, "tokenizer.json"));
}

/** Loads a tokenizer from a directory holding tokenizer.json (+ tokenizer_config.json). */
export function loadTokenizerFromDir(dir: string, name: string = dir): Tokenizer {
  const tokenizerFile = path.join(dir, "tokenizer.json");
  if (!fs.existsSync(tokenizerFile)) {
    throw new TokenizerLoadError(`${dir} has no tokenizer.json; expected a Hugging Face tokenizer directory`);
  }
  const tokenizerJSON = readJSON(tokenizerFile);
  const configFile = path.join(dir, "tokenizer_config.json");
  const config = fs.existsSync(configFile) ? readJSON(configFile) : {};
  // Newer checkpoints keep the template next to the config instead of inside it.
  const templateFile = path.join(dir, "chat_template.jinja");
  if (config["chat_template"] === undefined && fs.existsSync(templateFile)) {
    config["chat_template"] = fs.readFileSync(templateFile, "utf8");
  }
  return tokenizerFromJSON(tokenizerJSON, config, name);
}

function tokenizerClassFor(config: Record<string, unknown>): typeof transformers.PreTrainedTokenizer {
  const raw = config["tokenizer_class"];
  const className = typeof raw === "string" ? raw.replace(/Fast$/, "") : "PreTrainedTokenizer";
  const candidate = (transformers as unknown as Record<string, unknown>)[className];
  if (typeof candidate === "function" && (candidate === transformers.PreTrainedTokenizer || candidate.prototype instanceof transformers.PreTrainedTokenizer)) {
    return candidate as typeof transformers.PreTrainedTokenizer;
  }
  return transformers.PreTrainedTokenizer;
}

/** Builds a tokenizer from parsed tokenizer.json and tokenizer_config.json objects. */
export function tokenizerFromJSON(tokenizerJSON: Record<string, unknown>, config: Record<string, unknown>, name: string): Tokenizer {
  const Cls = tokenizerClassFor(config);
  let hf: HFTokenizer;
  try {
    hf = new Cls(tokenizerJSON, config);
  } catch (err) {
    throw new TokenizerLoadError(`cannot build tokenizer ${name}: ${(err as Error).message}`);
  }
  return new TransformersTokenizer(name, hf, tokenizerJSON, config);
}

class TransformersTokenizer implements Tokenizer {
  readonly bosToken: string | null;
  readonly bosTokenId: number | null;
  readonly eosToken: string | null;
  readonly eosTokenId: number | null;
  readonly specialTokenIds: ReadonlySet<number>;
  readonly chatTemplate: string | null;
  private readonly specialContents: string[];
  private splitter: HFTokenizer | null = null;
  private vocabSizeCache: number | null = null;

  constructor(
    readonly name: string,
    private readonly hf: HFTokenizer,
    private readonly tokenizerJSON: Record<string, unknown>,
    private readonly config: Record<string, unknown>,
  ) {
    this.bosToken = hf.bos_token ?? null;
    this.bosTokenId = hf.bos_token_id ?? null;
    this.eosToken = hf.eos_token ?? null;
    this.eosTokenId = hf.eos_token_id ?? null;
    const added = this.addedTokens();
    const special = new Set<number>(hf.all_special_ids ?? []);
    for (const t of added) if (t.special === true) special.add(t.id);
    this.specialTokenIds = special;
    this.specialContents = added.filter((t) => t.special === true).map((t) => t.content);
    const template = config["chat_template"];
    this.chatTemplate = typeof template === "string" ? template : null;
  }

  private addedTokens(): AddedTokenJSON[] {
    const raw = this.tokenizerJSON["added_tokens"];
    return Array.isArray(raw) ? (raw as AddedTokenJSON[]) : [];
  }

  get vocabSize(): number {
    if (this.vocabSizeCache === null) {
      let maxId = -1;
      for (const id of this.hf.get_vocab().values()) if (id > maxId) maxId = id;
      this.vocabSizeCache = maxId + 1;
    }
    return this.vocabSizeCache;
  }

  encode(text: string, options: EncodeOptions = {}): number[] {
    const addSpecialTokens = options.addSpecialTokens ?? true;
    if (text === "" && !addSpecialTokens) return [];
    const useSplitter = options.splitSpecialTokens === true && this.specialContents.some((s) => text.includes(s));
    const hf = useSplitter ? this.getSplitter() : this.hf;
    return hf.encode(text, { add_special_tokens: addSpecialTokens });
  }

  /**
   * A twin tokenizer whose special added tokens are forgotten, so their text goes through the
   * normal pre-tokenizer and BPE -- what HF's split_special_tokens=True does. Built on first use:
   * it is only needed when message text contains a special token's spelling.
   */
  private getSplitter(): HFTokenizer {
    if (this.splitter === null) {
      const json = { ...this.tokenizerJSON, added_tokens: this.addedTokens().filter((t) => t.special !== true) };
      this.splitter = new (tokenizerClassFor(this.config))(json, this.config);
    }
    return this.splitter;
  }

  decode(tokens: readonly number[], options: DecodeOptions = {}): string {
    if (tokens.length === 0) return "";
    return this.hf.decode([...tokens], { skip_special_tokens: options.skipSpecialTokens ?? false });
  }

  tokenToId(token: string): number | undefined {
    const id = this.hf._tokenizer.token_to_id(token);
    return id === undefined || id === null ? undefined : id;
  }

  idToToken(id: number): string | undefined {
    const tok = this.hf._tokenizer.id_to_token(id);
    return tok === undefined || tok === null ? undefined : tok;
  }
}
