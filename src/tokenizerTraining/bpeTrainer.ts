// Byte-level BPE training: count pre-tokenized pieces, start from the 256 byte symbols, and
// repeatedly merge the most frequent adjacent pair until the vocabulary is full or no pair
// occurs at least `minFrequency` times. Ties break on the pair's strings (lexicographic) so the
// result is a pure function of the corpus and options.
import { BYTE_TO_CHAR, toByteChars } from "./byteLevel.ts";
import { pretokenize } from "./pretokenize.ts";

export interface BpeTrainOptions {
  /** Target total vocabulary size, special tokens and the 256 bytes included. */
  vocabSize: number;
  /** Special tokens, given ids 0.. in order, ahead of the byte symbols. */
  specialTokens: readonly string[];
  /** A pair must occur at least this often to be merged. */
  minFrequency?: number;
}

export interface TrainedBpe {
  /** Token string (byte-level characters, or a special token) → id. Ids are dense from 0. */
  vocab: Map<string, number>;
  /** Merges in priority order, as [left, right] token strings. */
  merges: Array<[string, string]>;
  specialTokens: string[];
}

/** Counts byte-level pieces over texts (the expensive part; can be fed incrementally). */
export class PieceCounter {
  readonly counts = new Map<string, number>();

  add(text: string): void {
    for (const piece of pretokenize(text)) {
      const chars = toByteChars(piece);
      this.counts.set(chars, (this.counts.get(chars) ?? 0) + 1);
    }
  }
}

const PAIR_BASE = 1 << 16;

export function trainBpe(pieceCounts: ReadonlyMap<string, number>, options: BpeTrainOptions): TrainedBpe {
  const minFrequency = options.minFrequency ?? 2;
  const specials = [...options.specialTokens];
  const baseSize = specials.length + 256;
  if (options.vocabSize < baseSize) {
    throw new Error(`trainBpe: vocabSize ${options.vocabSize} is below the ${baseSize} special + byte tokens`);
  }
  if (options.vocabSize > PAIR_BASE) throw new Error(`trainBpe: vocabSize ${options.vocabSize} exceeds ${PAIR_BASE}`);

  const tokens: string[] = [...specials, ...BYTE_TO_CHAR];
  const vocab = new Map<string, number>(tokens.map((t, i) => [t, i]));
  if (vocab.size !== tokens.length) throw new Error("trainBpe: a special token collides with a byte symbol or another special token");

  // Each distinct piece becomes a word: its symbol ids and how often it occurs.
  const words: number[][] = [];
  const freqs: number[] = [];
  for (const [chars, count] of pieceCounts) {
    const ids: number[] = [];
    for (const c of chars) {
      const id = vocab.get(c);
      if (id === undefined) throw new Error(`trainBpe: piece contains a non byte-level character ${JSON.stringify(c)}`);
      ids.push(id);
    }
    words.push(ids);
    freqs.push(count);
  }

  const pairCounts = new Map<number, number>();
  const pairWords = new Map<number, Set<number>>();
  const addWordPairs = (w: number, sign: 1 | -1): void => {
    const ids = words[w];
    for (let i = 0; i + 1 < ids.length; i++) {
      const key = ids[i] * PAIR_BASE + ids[i + 1];
      pairCounts.set(key, (pairCounts.get(key) ?? 0) + sign * freqs[w]);
      if (sign > 0) {
        let set = pairWords.get(key);
        if (!set) {
          set = new Set();
          pairWords.set(key, set);
        }
        set.add(w);
      }
    }
  };
  for (let w = 0; w < words.length; w++) addWordPairs(w, 1);

  const merges: Array<[string, string]> = [];
  while (tokens.length < options.vocabSize) {
    let bestKey = -1;
    let bestCount = 0;
    for (const [key, count] of pairCounts) {
      if (count > bestCount || (count === bestCount && count > 0 && pairLess(key, bestKey, tokens))) {
        bestKey = key;
        bestCount = count;
      }
    }
    if (bestKey < 0 || bestCount < minFrequency) break;
    const left = Math.floor(bestKey / PAIR_BASE);
    const right = bestKey % PAIR_BASE;
    const merged = tokens[left] + tokens[right];
    const newId = tokens.length;
    tokens.push(merged);
    vocab.set(merged, newId);
    merges.push([tokens[left], tokens[right]]);

    const affected = pairWords.get(bestKey) ?? new Set<number>();
    pairWords.delete(bestKey);
    for (const w of affected) {
      addWordPairs(w, -1);
      words[w] = mergeWord(words[w], left, right, newId);
      addWordPairs(w, 1);
    }
    for (const [key, count] of pairCounts) if (count <= 0) pairCounts.delete(key);
  }
  return { vocab, merges, specialTokens: specials };
}

function pairLess(a: number, b: number, tokens: readonly string[]): boolean {
  if (b < 0) return true;
  const al = tokens[Math.floor(a / PAIR_BASE)];
  const bl = tokens[Math.floor(b / PAIR_BASE)];
  if (al !== bl) return al < bl;
  return tokens[a % PAIR_BASE] < tokens[b % PAIR_BASE];
}

/** Replaces every non-overlapping left-to-right occurrence of (left, right) by newId. */
export function mergeWord(ids: readonly number[], left: number, right: number, newId: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < ids.length; i++) {
    if (i + 1 < ids.length && ids[i] === left && ids[i + 1] === right) {
      out.push(newId);
      i++;
    } else {
      out.push(ids[i]);
    }
  }
  return out;
}

/** Convenience: train directly on texts. */
export function trainBpeOnTexts(texts: Iterable<string>, options: BpeTrainOptions): TrainedBpe {
  const counter = new PieceCounter();
  for (const t of texts) counter.add(t);
  return trainBpe(counter.counts, options);
}
