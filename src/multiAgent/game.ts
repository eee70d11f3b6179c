// A two-player, turn-based game as the coordinator plays it: the rules (whose turn, what a move's
// text does to the state, when the game is over and what each seat earns) and how the game is told
// to each seat (its system prompt, what it hears before each of its turns and at the end). The
// state is immutable; the coordinator owns the current one and the seats' conversations.
import type { Metrics } from "../rl/types.ts";

export type Seat = 0 | 1;

export function otherSeat(seat: Seat): Seat {
  return seat === 0 ? 1 : 0;
}

/** How a game ended. `forfeitBy` is set when a seat lost by an illegal or unparsable move. */
export interface GameEnd {
  /** null: a draw, or a game abandoned without a result (see `reason`). */
  winner: Seat | null;
  reason: string;
  forfeitBy?: Seat;
  /** Ended with no result by a budget, a masked turn or a failed rollout; nobody scores. */
  abandoned?: boolean;
}

/** A move as the coordinator recorded it: the seat, its text as said, and what the game made of it. */
export interface MoveRecord {
  seat: Seat;
  text: string;
  /** The move in the game's own words for the other seat ("X took 5"), or the reply of an answerer. */
  summary: string;
}

export type PlayResult<S> = { ok: true; state: S; summary: string } | { ok: false; error: string };

export interface TurnGame<S> {
  readonly name: string;
  /** Each seat's name as players see it ("X" / "O", "questioner" / "answerer"). */
  readonly seatNames: readonly [string, string];
  toMove(state: S): Seat;
  /** The state after `seat` says `text` (as sampled, surrounding spaces and all), or why it is not a legal move here. */
  play(state: S, seat: Seat, text: string): PlayResult<S>;
  /** null while the game goes on. */
  outcome(state: S): GameEnd | null;
  /** What `seat` earns for a game that ended in `state` (a forfeit by this seat is the parse-error policy's call, not this). */
  reward(state: S, end: GameEnd, seat: Seat): number;
  /** Per-episode metrics of a finished game for `seat` (averaged into rates over a batch). */
  outcomeMetrics(state: S, end: GameEnd, seat: Seat): Metrics;
  /** The seat's system prompt (e.g. a twenty-questions answerer is told the secret), or null for none. */
  systemPrompt(state: S, seat: Seat): string | null;
  /** What `seat` is told right before it moves: the other seat's last move (if any) and the state. */
  turnPrompt(state: S, seat: Seat, lastMove: MoveRecord | null): string;
  /** What `seat` is told when the game ends, after `lastMove` (shown in transcripts; never a prompt the model answers). */
  endPrompt(state: S, seat: Seat, end: GameEnd, lastMove: MoveRecord): string;
  /** Told to a seat whose move was illegal when the parse-error policy lets it try again. */
  retryPrompt(state: S, seat: Seat, error: string): string;
}

/** Win 1, draw 0, loss −1: the usual zero-sum scoring. */
export function zeroSumReward(end: GameEnd, seat: Seat): number {
  if (end.winner === null) return 0;
  return end.winner === seat ? 1 : -1;
}

/** win_rate / draw_rate / loss_rate / win_or_draw as 0/1 per episode, so batch means are rates. */
export function winDrawLossMetrics(end: GameEnd, seat: Seat): Metrics {
  const win = end.winner === seat ? 1 : 0;
  const draw = end.winner === null ? 1 : 0;
  return { win_rate: win, draw_rate: draw, loss_rate: 1 - win - draw, win_or_draw: win + draw };
}
