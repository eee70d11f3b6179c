// The pretraining corpus of the tiny model: role_colon-rendered synthetic conversations, one
// document each. Addition gets the largest share because it is the skill RL recipes start from.
import { additionConversation, type Split } from "./arithmetic.ts";
import { chatOfKind, type ChatKind } from "./chats.ts";
import { guessNumberPrefix } from "./guess_number.ts";
import { Prng } from "./prng.ts";
import { renderRoleColonDocument } from "./role_colon_text.ts";
import type { Conversation } from "./types.ts";

export interface CorpusMix {
  addition: number;
  small_talk: number;
  world: number;
  numbers: number;
  words: number;
  /** Game prefixes as an RL rollout sees them ("Player:" history, last guess as "Assistant:"). */
  guess_number: number;
}

export const DEFAULT_CORPUS_MIX: Readonly<CorpusMix> = {
  addition: 10,
  small_talk: 2,
  world: 3,
  numbers: 2,
  words: 1.5,
  guess_number: 0.7,
};

const KINDS = ["addition", "small_talk", "world", "numbers", "words", "guess_number"] as const;

export function corpusConversation(rng: Prng, mix: Readonly<CorpusMix>, split: Split): Conversation {
  const kind = KINDS[rng.weightedIndex(KINDS.map((k) => mix[k]))];
  if (kind === "addition") return additionConversation(rng, split);
  if (kind === "guess_number") {
    return guessNumberPrefix(rng, { historyRole: rng.chance(0.7) ? "player" : "assistant", noise: 0.35 });
  }
  return chatOfKind(rng, kind satisfies ChatKind, split);
}

/**
 * An endless deterministic stream of documents. `split` picks which addition pairs may appear
 * (training streams never contain held-out pairs).
 */
export function* corpusDocuments(seed: number, mix: Readonly<CorpusMix> = DEFAULT_CORPUS_MIX, split: Split = "train"): Generator<string> {
  const rng = new Prng(seed);
  for (;;) yield renderRoleColonDocument(corpusConversation(rng, mix, split));
}

export function takeDocuments(seed: number, n: number, mix: Readonly<CorpusMix> = DEFAULT_CORPUS_MIX, split: Split = "train"): string[] {
  const out: string[] = [];
  for (const doc of corpusDocuments(seed, mix, split)) {
    if (out.length >= n) break;
    out.push(doc);
  }
  return out;
}
