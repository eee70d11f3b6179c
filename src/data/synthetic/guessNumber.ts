// Transcripts of the cookbook's guess-the-number game (recipes/multiplayer_rl/guess_number):
// the player answers "Guess: N", a scripted user replies "Too low" / "Too high" / "Correct".
// The player here bisects with noise, so a model trained on these plays plausibly but not
// perfectly — RL on the real environment then has something to improve.
import type { Prng } from "./prng.ts";
import type { Conversation } from "./types.ts";

export const GUESS_UPPER_BOUND = 1024;
export const GUESS_MAX_TURNS = 10;

/** The environment's system prompt, word for word (including its typos). */
export const GUESS_SYSTEM_PROMPT =
  `Your job is to guess a integer between 0 and ${GUESS_UPPER_BOUND}. You can output your guess with the format ` +
  "Guess: <guess> (without the angle brackets), and say nothing else. Then we will tell you whether you guess is " +
  "too high, too low, or correct.";

export interface GuessGameOptions {
  /** Role used for the player's past turns; the environment uses "player" in its history. */
  historyRole: "player" | "assistant";
  /** 0 = perfect bisection; 1 = uniform inside the remaining interval. */
  noise: number;
}

/**
 * One game as a conversation: system prompt, then player/user turn pairs, the player's turns in
 * role `historyRole`. The game stops at "Correct" or after GUESS_MAX_TURNS guesses.
 */
export function guessNumberGame(rng: Prng, options: GuessGameOptions): Conversation {
  const target = rng.int(0, GUESS_UPPER_BOUND - 1);
  let lo = 0;
  let hi = GUESS_UPPER_BOUND;
  const convo: Conversation = [{ role: "system", content: GUESS_SYSTEM_PROMPT }];
  for (let turn = 0; turn < GUESS_MAX_TURNS; turn++) {
    const mid = Math.floor((lo + hi) / 2);
    const uniform = rng.int(lo, hi);
    const guess = Math.max(lo, Math.min(hi, Math.round(mid + options.noise * (uniform - mid))));
    convo.push({ role: options.historyRole, content: `Guess: ${guess}` });
    if (guess === target) {
      convo.push({ role: "user", content: "Correct" });
      break;
    }
    if (guess < target) {
      convo.push({ role: "user", content: "Too low" });
      lo = guess + 1;
    } else {
      convo.push({ role: "user", content: "Too high" });
      hi = guess - 1;
    }
  }
  return convo;
}

/**
 * The game cut right after one of the player's turns, with that turn relabelled "assistant":
 * exactly the context an RL rollout sees when the model produces that guess.
 */
export function guessNumberPrefix(rng: Prng, options: GuessGameOptions): Conversation {
  const game = guessNumberGame(rng, options);
  const playerTurns: number[] = [];
  game.forEach((m, i) => {
    if (m.role === options.historyRole) playerTurns.push(i);
  });
  const cut = rng.pick(playerTurns);
  const prefix = game.slice(0, cut + 1);
  prefix[cut] = { role: "assistant", content: prefix[cut].content };
  return prefix;
}
