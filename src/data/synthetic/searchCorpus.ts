// The search_tool recipe's world: invented places, each with a capital, a river and a mountain,
// one short document per fact ("The capital of Zorvia is Melkan."), and questions about them. No
// model has seen these names, so a question is answered only by searching the documents; a
// separate seed makes the warm-up's own places, so the warm-up teaches searching, not facts.
import { Prng } from "./prng.ts";

export const SEARCH_ATTRIBUTES = ["capital", "river", "mountain"] as const;
export type SearchAttribute = (typeof SEARCH_ATTRIBUTES)[number];

export interface SearchFact {
  entity: string;
  attribute: SearchAttribute;
  value: string;
}

export interface SearchQA {
  id: string;
  question: string;
  answers: string[];
  /** What a good search asks for: the place and the attribute. */
  query: string;
}

const ONSETS = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "kr", "st", "tr", "gl"];
const VOWELS = ["a", "e", "i", "o", "u", "ai", "ou"];
const CODAS = ["", "", "n", "r", "l", "s", "k", "th"];

function inventName(rng: Prng, syllables: number): string {
  let name = "";
  for (let i = 0; i < syllables; i++) name += rng.pick(ONSETS) + rng.pick(VOWELS) + (i === syllables - 1 ? rng.pick(CODAS) : "");
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/** `count` places with three facts each; every name (place or value) is distinct. */
export function generateSearchFacts(seed: number, count: number): SearchFact[] {
  const rng = new Prng(seed);
  const used = new Set<string>();
  const fresh = (syllables: number): string => {
    for (;;) {
      const name = inventName(rng, syllables);
      if (!used.has(name.toLowerCase())) {
        used.add(name.toLowerCase());
        return name;
      }
    }
  };
  const facts: SearchFact[] = [];
  for (let i = 0; i < count; i++) {
    const entity = fresh(3);
    for (const attribute of SEARCH_ATTRIBUTES) facts.push({ entity, attribute, value: fresh(2) });
  }
  return facts;
}

export function factDocument(fact: SearchFact): string {
  return `The ${fact.attribute} of ${fact.entity} is ${fact.value}.`;
}

export function factQuestion(fact: SearchFact): SearchQA {
  return {
    id: `${fact.entity}-${fact.attribute}`.toLowerCase(),
    question: `What is the ${fact.attribute} of ${fact.entity}?`,
    answers: [fact.value],
    query: `${fact.entity} ${fact.attribute}`,
  };
}

/** The shipped corpus (one document per fact) and its questions split into train and test. */
export function generateSearchWorld(
  seed: number,
  places: number,
  testShare: number,
): { documents: { id: number; title: string; text: string }[]; train: SearchQA[]; test: SearchQA[] } {
  const facts = generateSearchFacts(seed, places);
  const documents = facts.map((f, id) => ({ id, title: `${f.entity} ${f.attribute}`, text: factDocument(f) }));
  const rng = new Prng(seed + 1);
  const train: SearchQA[] = [];
  const test: SearchQA[] = [];
  for (const f of facts) (rng.chance(testShare) ? test : train).push(factQuestion(f));
  return { documents, train, test };
}
