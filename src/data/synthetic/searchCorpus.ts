// The search_tool recipe's world: invented places, each with a capital, a river and a mayor, one
// short document per fact ("The capital of apple tiger is silver kites."), and questions about
// them. No model has seen these facts, so a question is answered only by searching the documents;
// a separate seed makes the warm-up's own places, so the warm-up teaches searching, not facts.
//
// Names are pairs of words that tiny-chat's tokenizer has as single tokens ("words" style): a
// model this small copies a name it has never seen only when it is a few tokens long and always
// the same number of tokens (docs/rl.md "Search tool"; the older "syllables" style, invented
// words of 5–7 BPE pieces, stays for the probe that compares them). Place words and answer words
// are disjoint sets, so a search for "PLACE ATTRIBUTE" matches its own document on every word
// and every other document on fewer (BM25 ranks the right one first).
import { Prng } from "./prng.ts";

export const SEARCH_ATTRIBUTES = ["capital", "river", "mayor"] as const;
export type SearchAttribute = (typeof SEARCH_ATTRIBUTES)[number];

export const SEARCH_NAME_STYLES = ["words", "syllables"] as const;
export type SearchNameStyle = (typeof SEARCH_NAME_STYLES)[number];

export interface SearchFact {
  entity: string;
  attribute: SearchAttribute;
  value: string;
}

export interface SearchQA {
  id: string;
  question: string;
  answers: string[];
  /** What a good search asks for: the question's own words "ATTRIBUTE of PLACE" (one span to copy). */
  query: string;
}

/** Words of place names (one tiny-chat token each with a leading space; none is an attribute). */
export const PLACE_WORDS: readonly string[] = [
  "apple",
  "basket",
  "bread",
  "candle",
  "chair",
  "cloud",
  "garden",
  "house",
  "lemon",
  "light",
  "music",
  "ocean",
  "paper",
  "pencil",
  "rocket",
  "sky",
  "stone",
  "sugar",
  "table",
  "tiger",
  "water",
  "window",
  "forest",
  "road",
  "robot",
  "fish",
  "moss",
  "salt",
  "coal",
  "rain",
];

/** Words of answers (one token each, none shared with PLACE_WORDS or the attributes). */
export const VALUE_WORDS: readonly string[] = [
  "black",
  "blue",
  "brown",
  "green",
  "grey",
  "orange",
  "pink",
  "purple",
  "red",
  "teal",
  "white",
  "yellow",
  "silver",
  "copper",
  "glass",
  "honey",
  "bells",
  "kites",
  "lanterns",
  "pumpkins",
  "bridges",
  "boxes",
  "seeds",
  "pebbles",
  "acorns",
  "cider",
  "drops",
  "moths",
  "snowflakes",
  "giant",
  "happy",
  "nice",
  "odd",
  "simple",
  "warm",
];

const ONSETS = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "kr", "st", "tr", "gl"];
const VOWELS = ["a", "e", "i", "o", "u", "ai", "ou"];
const CODAS = ["", "", "n", "r", "l", "s", "k", "th"];

function inventWord(rng: Prng, syllables: number): string {
  let name = "";
  for (let i = 0; i < syllables; i++) name += rng.pick(ONSETS) + rng.pick(VOWELS) + (i === syllables - 1 ? rng.pick(CODAS) : "");
  return name.charAt(0).toUpperCase() + name.slice(1);
}

function wordPair(rng: Prng, words: readonly string[]): string {
  const first = rng.pick(words);
  let second = rng.pick(words);
  while (second === first) second = rng.pick(words);
  return `${first} ${second}`;
}

/** A place name and an answer name of the style. */
function namer(style: SearchNameStyle): { place: (rng: Prng) => string; value: (rng: Prng) => string } {
  return style === "words"
    ? { place: (rng) => wordPair(rng, PLACE_WORDS), value: (rng) => wordPair(rng, VALUE_WORDS) }
    : { place: (rng) => inventWord(rng, 3), value: (rng) => inventWord(rng, 2) };
}

/** The words of a place name in a fixed order: BM25 sees words, not their order, so "apple tiger" and "tiger apple" would be one place. */
function placeKey(name: string): string {
  return name.toLowerCase().split(" ").sort().join(" ");
}

/**
 * `count` places with three facts each. Place names are distinct (as word sets) and none is in
 * `avoid`; answers are distinct, so no two facts share an answer.
 */
export function generateSearchFacts(seed: number, count: number, style: SearchNameStyle = "words", avoid: Iterable<string> = []): SearchFact[] {
  const rng = new Prng(seed);
  const names = namer(style);
  const places = new Set([...avoid].map(placeKey));
  const values = new Set<string>();
  const room =
    style === "words" ? { places: (PLACE_WORDS.length * (PLACE_WORDS.length - 1)) / 2, values: VALUE_WORDS.length * (VALUE_WORDS.length - 1) } : null;
  if (room !== null && (places.size + count > room.places || 3 * count > room.values)) {
    throw new Error(
      `generateSearchFacts: ${count} places (${places.size} avoided) need more ${style} names than the ${room.places} places and ${room.values} answers there are`,
    );
  }
  const fresh = (make: (rng: Prng) => string, taken: Set<string>, key: (name: string) => string): string => {
    for (;;) {
      const name = make(rng);
      if (!taken.has(key(name))) {
        taken.add(key(name));
        return name;
      }
    }
  };
  const facts: SearchFact[] = [];
  for (let i = 0; i < count; i++) {
    const entity = fresh(names.place, places, placeKey);
    for (const attribute of SEARCH_ATTRIBUTES) facts.push({ entity, attribute, value: fresh(names.value, values, (v) => v.toLowerCase()) });
  }
  return facts;
}

export function factDocument(fact: SearchFact): string {
  return `The ${fact.attribute} of ${fact.entity} is ${fact.value}.`;
}

/** One document per fact, with ids of one width ("d007") so every search result has one layout. */
export function factDocuments(facts: readonly SearchFact[]): { id: string; text: string }[] {
  const width = String(Math.max(0, facts.length - 1)).length;
  return facts.map((f, i) => ({ id: `d${String(i).padStart(width, "0")}`, text: factDocument(f) }));
}

export function factQuestion(fact: SearchFact): SearchQA {
  return {
    id: `${fact.entity}-${fact.attribute}`.toLowerCase().replaceAll(" ", "-"),
    question: `What is the ${fact.attribute} of ${fact.entity}?`,
    answers: [fact.value],
    query: `${fact.attribute} of ${fact.entity}`,
  };
}

/** The shipped corpus (one document per fact) and its questions split into train and test. */
export function generateSearchWorld(
  seed: number,
  places: number,
  testShare: number,
  style: SearchNameStyle = "words",
): { documents: { id: string; text: string }[]; train: SearchQA[]; test: SearchQA[] } {
  const facts = generateSearchFacts(seed, places, style);
  const rng = new Prng(seed + 1);
  const train: SearchQA[] = [];
  const test: SearchQA[] = [];
  for (const f of facts) (rng.chance(testShare) ? test : train).push(factQuestion(f));
  return { documents: factDocuments(facts), train, test };
}
