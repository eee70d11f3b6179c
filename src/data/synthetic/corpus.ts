// The pretraining corpus of the tiny model: role_colon-rendered synthetic conversations, one
// document each. Addition gets the largest share (about 75% of the tokens with the default mix)
// because it is the skill RL recipes start from and the hardest one for a tiny model.
import { additionConversation, additionDrill, type Split } from "./arithmetic.ts";
import { chatOfKind, type ChatKind } from "./chats.ts";
import { guessNumberPrefix } from "./guessNumber.ts";
import { Prng } from "./prng.ts";
import { renderRoleColonDocument } from "./roleColonText.ts";
import type { Conversation } from "./types.ts";

export interface CorpusMix {
  /** Short chats with 1–4 addition questions (the RL prompt shape among them). */
  addition: number;
  /** Chats of 3–8 addition questions: more answers per token of compute. */
  addition_drill: number;
  small_talk: number;
  world: number;
  numbers: number;
  words: number;
  /** Game prefixes as an RL rollout sees them ("Player:" history, last guess as "Assistant:"). */
  guess_number: number;
  /** Fraction of drill pairs that add a one-digit number (0 = all uniform in [0, 100]²). */
  easy_fraction?: number;
}

export const DEFAULT_CORPUS_MIX: Readonly<CorpusMix> = {
  addition: 3,
  addition_drill: 6,
  easy_fraction: 0.3,
  small_talk: 1,
  world: 1.5,
  numbers: 1,
  words: 0.7,
  guess_number: 0.5,
};

const KINDS = ["addition", "addition_drill", "small_talk", "world", "numbers", "words", "guess_number"] as const;

export function corpusConversation(rng: Prng, mix: Readonly<CorpusMix>, split: Split): Conversation {
  const kind = KINDS[rng.weightedIndex(KINDS.map((k) => mix[k]))];
  if (kind === "addition") return additionConversation(rng, split);
  if (kind === "addition_drill") return additionDrill(rng, split, mix.easy_fraction ?? 0);
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
