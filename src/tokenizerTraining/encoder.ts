// A small, fast encoder for tokenizers this module trains. It exists so corpus tokenization for
// pretraining does not go through a general tokenizer library, and so tests can check the
// trainer's merges independently of @huggingface/transformers (which must agree with it).
import { fromByteChars, toByteChars } from "./byteLevel.ts";
import { pretokenize } from "./pretokenize.ts";
import type { TrainedBpe } from "./bpeTrainer.ts";

export class ByteLevelBpeEncoder {
  private readonly vocab: Map<string, number>;
  private readonly idToToken: string[];
  private readonly ranks = new Map<string, number>();
  private readonly specialTokens: string[];
  private readonly specialIds: Set<number>;
  private readonly cache = new Map<string, number[]>();

  constructor(bpe: TrainedBpe) {
    this.vocab = bpe.vocab;
    this.idToToken = [];
    for (const [tok, id] of bpe.vocab) this.idToToken[id] = tok;
    bpe.merges.forEach(([a, b], i) => this.ranks.set(`${a} ${b}`, i));
    // Longest first so a special token that contains another one wins.
    this.specialTokens = [...bpe.specialTokens].sort((a, b) => b.length - a.length);
    this.specialIds = new Set(bpe.specialTokens.map((t) => bpe.vocab.get(t) as number));
  }

  get vocabSize(): number {
    return this.idToToken.length;
  }

  tokenId(token: string): number {
    const id = this.vocab.get(token);
    if (id === undefined) throw new Error(`token ${JSON.stringify(token)} is not in the vocabulary`);
    return id;
  }

  /** Token ids of text; special tokens written literally in the text become their ids. */
  encode(text: string): number[] {
    const out: number[] = [];
    let rest = text;
    while (rest.length > 0) {
      let at = -1;
      let which = "";
      for (const s of this.specialTokens) {
        const i = rest.indexOf(s);
        if (i >= 0 && (at < 0 || i < at)) {
          at = i;
          which = s;
        }
      }
      const plain = at < 0 ? rest : rest.slice(0, at);
      for (const piece of pretokenize(plain)) out.push(...this.encodePiece(piece));
      if (at < 0) break;
      out.push(this.tokenId(which));
      rest = rest.slice(at + which.length);
    }
    return out;
  }

  decode(ids: readonly number[], skipSpecialTokens = false): string {
    let text = "";
    let bytes = "";
    for (const id of ids) {
      const tok = this.idToToken[id];
      if (tok === undefined) throw new Error(`decode: id ${id} is outside the vocabulary (size ${this.idToToken.length})`);
      if (this.specialIds.has(id)) {
        text += fromByteChars(bytes);
        bytes = "";
        if (!skipSpecialTokens) text += tok;
      } else {
        bytes += tok;
      }
    }
    return text + fromByteChars(bytes);
  }

  private encodePiece(piece: string): number[] {
    const cached = this.cache.get(piece);
    if (cached) return cached;
    let symbols = Array.from(toByteChars(piece));
    for (;;) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i + 1 < symbols.length; i++) {
        const r = this.ranks.get(`${symbols[i]} ${symbols[i + 1]}`);
        if (r !== undefined && r < bestRank) {
          bestRank = r;
          best = i;
        }
      }
      if (best < 0) break;
      const a = symbols[best];
      const b = symbols[best + 1];
      const next: string[] = [];
      for (let i = 0; i < symbols.length; i++) {
        if (i + 1 < symbols.length && symbols[i] === a && symbols[i + 1] === b) {
          next.push(a + b);
          i++;
        } else {
          next.push(symbols[i]);
        }
      }
      symbols = next;
    }
    const ids = symbols.map((s) => this.tokenId(s));
    if (this.cache.size < 100_000) this.cache.set(piece, ids);
    return ids;
  }
}
