// Tic-tac-toe as RL data: self-play groups (or games against a fixed opponent) for training, one
// evaluation set per test opponent, and warm-up transcripts of random legal games told from each
// seat's side exactly as the environment tells them.
import type { MessageCompleter } from "../../completers.ts";
import type { Prng } from "../../data/synthetic/prng.ts";
import type { Message } from "../../renderers/policyRenderer.ts";
import type { RLDatasetBuilder } from "../../rl/types.ts";
import type { SoftReplyExample } from "../../supervised/softReply.ts";
import { TwoPlayerCoordinator } from "../coordinator.ts";
import type { Seat } from "../game.ts";
import { alternatingSeats, GameDataset, SelfPlayGroupBuilder, VsOpponentGroupBuilder, type GameSetup, type SeatCommon } from "../groups.ts";
import { ModelOpponent, recentTurns, type Opponent } from "../opponents.ts";
import { emptyBoard, legalSquares, TicTacToe, type TicTacToeState } from "./ticTacToe.ts";
import { minimaxOpponent, randomOpponent } from "./ticTacToeOpponents.ts";

export const TIC_TAC_TOE_OPPONENTS = ["random", "minimax", "base_model"] as const;
export type TicTacToeOpponentName = (typeof TIC_TAC_TOE_OPPONENTS)[number];

const GAME = new TicTacToe();

export function newTicTacToe(): GameSetup<TicTacToeState> {
  return { game: GAME, initialState: emptyBoard() };
}

/**
 * An opponent by name; `baseModel` makes the frozen starting policy's completer on first use, and
 * that opponent sees as much of the game as the policy does (`historyTurns`).
 */
export function ticTacToeOpponent(
  name: TicTacToeOpponentName,
  seed: number,
  baseModel: () => Promise<MessageCompleter>,
  historyTurns: number | null = null,
): Opponent<TicTacToeState> {
  switch (name) {
    case "random":
      return randomOpponent(seed);
    case "minimax":
      return minimaxOpponent(seed);
    case "base_model":
      return new ModelOpponent("base_model", baseModel, historyTurns, seed);
  }
}

export interface TicTacToeDatasetOptions {
  common: SeatCommon;
  groupsPerBatch: number;
  /** Envs per group: in self-play both seats of group_size / 2 games; against an opponent, group_size games in one seat. */
  groupSize: number;
  numBatches: number;
  seed: number;
  /** "self_play", or the fixed opponent the policy trains against. */
  trainOpponent: "self_play" | TicTacToeOpponentName;
  baseModel: () => Promise<MessageCompleter>;
  /** Who a person plays in `cookbook play`, and as which mark. */
  play: { opponent: TicTacToeOpponentName; seat: Seat };
}

const TAGS = ["tic_tac_toe"];

export function ticTacToeDatasetBuilder(o: TicTacToeDatasetOptions): RLDatasetBuilder {
  if (o.trainOpponent === "self_play" && o.groupSize % 2 !== 0) {
    throw new Error(`tic_tac_toe self-play: group_size=${o.groupSize} must be even (both seats of group_size / 2 games)`);
  }
  const opponentSeed = (batch: number, group: number, env: number) => (o.seed * 1_000_003 + batch * 7919 + group * 131 + env) >>> 0;
  return {
    async build() {
      const train = new GameDataset(o.numBatches, (batch) =>
        Array.from({ length: o.groupsPerBatch }, (_, group) => {
          const play = {
            opponent: ticTacToeOpponent(o.play.opponent, opponentSeed(batch, group, 0), o.baseModel, o.common.historyTurns ?? null),
            seat: o.play.seat,
          };
          if (o.trainOpponent === "self_play") return new SelfPlayGroupBuilder(newTicTacToe, o.groupSize / 2, o.common, TAGS, play);
          // One seat per group (X in even groups, O in odd): advantages are centred among games of
          // the same seat, since X's games are worth more than O's whatever the moves.
          const name = o.trainOpponent;
          const seats = Array.from({ length: o.groupSize }, () => (group % 2) as Seat);
          return new VsOpponentGroupBuilder(
            newTicTacToe,
            seats,
            (env) => ticTacToeOpponent(name, opponentSeed(batch, group, env), o.baseModel, o.common.historyTurns ?? null),
            o.common,
            TAGS,
            play,
          );
        }),
      );
      return { train, test: null };
    },
  };
}

/** `games` games against `opponent`, half with the policy as X and half as O, in one batch of groups of 2. */
export function ticTacToeTestSet(o: {
  common: SeatCommon;
  games: number;
  seed: number;
  opponent: TicTacToeOpponentName;
  baseModel: () => Promise<MessageCompleter>;
}): GameDataset {
  const groups = Math.ceil(o.games / 2);
  return new GameDataset(1, () =>
    Array.from(
      { length: groups },
      (_, g) =>
        new VsOpponentGroupBuilder(
          newTicTacToe,
          alternatingSeats(2),
          (env) => ticTacToeOpponent(o.opponent, (o.seed * 7919 + g * 2 + env + 104_729) >>> 0, o.baseModel, o.common.historyTurns ?? null),
          o.common,
          [`vs_${o.opponent}`],
        ),
    ),
  );
}

/**
 * Warm-up games between two uniformly random legal players, each told from both seats in the whole
 * conversation (the end message dropped: the model never answers it). On tiny-chat these teach the
 * reply format but not legality: it ends up answering one digit, spread over all nine squares
 * whether taken or not (docs/agents.md).
 */
export function warmupGameTranscripts(rng: Prng, count: number): Message[][] {
  const out: Message[][] = [];
  while (out.length < count) {
    const { game, initialState } = newTicTacToe();
    const c = new TwoPlayerCoordinator(game, initialState);
    while (!c.done) {
      const seat = c.toMove;
      c.conversation(seat);
      c.submit(seat, String(rng.pick(legalSquares(c.state))));
    }
    for (const seat of [0, 1] as const) {
      const convo = c.conversation(seat);
      out.push(convo.at(-1)?.role === "user" ? convo.slice(0, -1) : convo);
    }
  }
  return out.slice(0, count);
}

/**
 * Warm-up positions that teach reading the board: random legal play stopped when `k` squares are
 * left, k drawn with weight 1/k, told from the side to move as the environment's prompt shows it
 * (system prompt and current board only, `history_turns=0`), answered with every free square at
 * once (soft targets, the first one drawn at random is what the model reads after its reply).
 * Nothing in the targets prefers one free square to another: tactics are left to RL. One random
 * free square per position as the target taught legality much more slowly (docs/agents.md).
 */
export function warmupPositionTranscripts(rng: Prng, count: number): SoftReplyExample[] {
  const out: SoftReplyExample[] = [];
  while (out.length < count) {
    const k = 1 + rng.weightedIndex([1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => 1 / n));
    const { game, initialState } = newTicTacToe();
    const c = new TwoPlayerCoordinator(game, initialState);
    while (!c.done && legalSquares(c.state).length > k) {
      const seat = c.toMove;
      c.conversation(seat);
      c.submit(seat, String(rng.pick(legalSquares(c.state))));
    }
    if (c.done) continue;
    const free = legalSquares(c.state);
    const drawn = rng.pick(free);
    out.push({ messages: recentTurns(c.conversation(c.toMove), 0), alternatives: [drawn, ...free.filter((sq) => sq !== drawn)].map(String) });
  }
  return out;
}
