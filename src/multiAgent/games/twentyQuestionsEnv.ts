// Twenty questions as RL data: groups of games with the same secret (so rewards are compared like
// for like) against the answerer — the scripted oracle, or a frozen model shown only the secret and
// the current question, as in the cookbook — and warm-up transcripts that teach the question and
// guess formats with no strategy in them.
import type { MessageCompleter } from "../../completers.ts";
import type { NounTable } from "../../data/synthetic/nouns.ts";
import { Prng } from "../../data/synthetic/prng.ts";
import type { Message } from "../../renderers/policyRenderer.ts";
import type { RLDatasetBuilder } from "../../rl/types.ts";
import { TwoPlayerCoordinator } from "../coordinator.ts";
import { GameDataset, VsOpponentGroupBuilder, type SeatCommon } from "../groups.ts";
import { ModelOpponent, type Opponent } from "../opponents.ts";
import { oracleAnswer, TwentyQuestions, type TwentyQuestionsRules, type TwentyQuestionsState } from "./twentyQuestions.ts";

export function oracleOpponent(table: NounTable): Opponent<TwentyQuestionsState> {
  return {
    name: "oracle",
    // The question is the last thing the answerer was told.
    move: async (state, _seat, conversation) => oracleAnswer(table, state.secret, String(conversation.at(-1)?.content ?? "")),
  };
}

/** The answerer: the oracle, or a frozen model that sees its system prompt (with the secret) and the current question only. */
export function answerer(table: NounTable, model: (() => Promise<MessageCompleter>) | null): Opponent<TwentyQuestionsState> {
  return model === null ? oracleOpponent(table) : new ModelOpponent("answerer_model", model, 0);
}

export interface TwentyQuestionsDatasetOptions {
  common: SeatCommon;
  rules: TwentyQuestionsRules;
  groupsPerBatch: number;
  groupSize: number;
  numBatches: number;
  seed: number;
  answerer: Opponent<TwentyQuestionsState>;
  /** Games in the held-out evaluation (0 = none), one group of `groupSize` per secret in turn. */
  testGroups: number;
}

function batchOfSecrets(
  game: TwentyQuestions,
  o: TwentyQuestionsDatasetOptions,
  rng: Prng,
  groups: number,
  tag: string,
): VsOpponentGroupBuilder<TwentyQuestionsState>[] {
  return Array.from({ length: groups }, () => {
    const secret = rng.pick(o.rules.table.nouns);
    return new VsOpponentGroupBuilder(
      () => ({ game, initialState: game.initialState(secret) }),
      Array<0>(o.groupSize).fill(0),
      () => o.answerer,
      o.common,
      [tag],
    );
  });
}

export function twentyQuestionsDatasetBuilder(o: TwentyQuestionsDatasetOptions): RLDatasetBuilder {
  const game = new TwentyQuestions(o.rules);
  return {
    async build() {
      const train = new GameDataset(o.numBatches, (batch) =>
        batchOfSecrets(game, o, new Prng((o.seed * 1_000_003 + batch * 7919 + 5) >>> 0), o.groupsPerBatch, "twenty_questions"),
      );
      const test =
        o.testGroups > 0
          ? new GameDataset(1, () => batchOfSecrets(game, o, new Prng((o.seed * 7919 + 104_729) >>> 0), o.testGroups, "twenty_questions_test"))
          : null;
      return { train, test };
    },
  };
}

/**
 * Games where the questioner asks random properties and guesses random things of the table (no
 * strategy: its guesses ignore the answers), answered by the oracle, told from the questioner's side.
 */
export function randomQuestionerTranscripts(rules: TwentyQuestionsRules, rng: Prng, count: number): Message[][] {
  const game = new TwentyQuestions(rules);
  const { table } = rules;
  const out: Message[][] = [];
  while (out.length < count) {
    const c = new TwoPlayerCoordinator(game, game.initialState(rng.pick(table.nouns)));
    // Guess after a random number of questions, then keep guessing at random until the game ends.
    const questionsFirst = rng.int(0, Math.min(table.attributes.length, rules.maxQuestions - 1));
    while (!c.done) {
      c.conversation(c.toMove);
      if (c.toMove === 1) {
        c.submit(1, oracleAnswer(table, c.state.secret, c.history.at(-1)?.text ?? ""));
        continue;
      }
      const text = c.state.asked < questionsFirst ? `Is it ${rng.pick(table.attributes)}?` : `Guess: ${rng.pick(table.nouns)}`;
      c.submit(0, text);
    }
    const convo = c.conversation(0);
    out.push(convo.at(-1)?.role === "user" ? convo.slice(0, -1) : convo);
  }
  return out;
}
