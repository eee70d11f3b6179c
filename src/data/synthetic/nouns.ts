// The attribute table twenty questions is played over: a few things of the made-up world (its
// creatures, and some everyday words the tiny model has seen) with yes/no properties
// drawn from a seed. The properties are arbitrary — this is a world of its own, like Zorbia — but
// the table is a pure function of the seed and every thing has its own row, so a player who asks
// every question can always tell them apart.
import { Prng } from "./prng.ts";
import { COMMON_WORDS, CREATURES } from "./world.ts";

/** Things a table can hold: words the tiny model's tokenizer makes one token of (" glimmerfox", " apple"). */
export const NOUN_POOL: readonly string[] = [
  ...CREATURES.map((c) => c.name),
  ...["apple", "river", "cloud", "stone", "table", "bread", "house", "tiger", "lemon", "chair", "candle", "pencil", "rocket", "basket"].filter((w) =>
    COMMON_WORDS.includes(w),
  ),
];

/** Properties asked as "Is it <property>?", each one token of the tiny model's tokenizer. */
export const ATTRIBUTE_POOL: readonly string[] = ["small", "warm", "happy", "green", "blue", "red", "silver", "light"];

export interface NounTable {
  nouns: readonly string[];
  attributes: readonly string[];
  /** has[noun][attribute]. */
  has: Readonly<Record<string, Readonly<Record<string, boolean>>>>;
}

export function nounTable(seed: number, nouns: number, attributes: number): NounTable {
  if (nouns < 2 || nouns > NOUN_POOL.length) throw new RangeError(`nouns=${nouns}: the pool has ${NOUN_POOL.length} things; expected 2..${NOUN_POOL.length}`);
  if (attributes < 1 || attributes > ATTRIBUTE_POOL.length) throw new RangeError(`attributes=${attributes}: expected 1..${ATTRIBUTE_POOL.length}`);
  if (2 ** attributes < nouns) throw new RangeError(`${attributes} yes/no attributes tell at most ${2 ** attributes} things apart, fewer than nouns=${nouns}`);
  const rng = new Prng((seed * 2_654_435_761 + 97) >>> 0);
  const chosenNouns = rng.shuffled(NOUN_POOL).slice(0, nouns);
  const chosenAttributes = rng.shuffled(ATTRIBUTE_POOL).slice(0, attributes);
  const seen = new Set<string>();
  const has: Record<string, Record<string, boolean>> = {};
  for (const noun of chosenNouns) {
    // Redraw a row until it differs from every earlier one (terminates: 2^attributes ≥ nouns).
    for (;;) {
      const row = chosenAttributes.map(() => rng.chance(0.5));
      const key = row.map((b) => (b ? "1" : "0")).join("");
      if (seen.has(key)) continue;
      seen.add(key);
      has[noun] = Object.fromEntries(chosenAttributes.map((a, i) => [a, row[i]]));
      break;
    }
  }
  return { nouns: chosenNouns, attributes: chosenAttributes, has };
}
