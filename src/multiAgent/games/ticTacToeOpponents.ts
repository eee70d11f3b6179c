// Scripted tic-tac-toe opponents: uniformly random legal moves, and exact minimax (the whole game
// tree is under 6,000 positions, memoised by board). Minimax scores a win sooner above a win later
// and a loss later above a loss sooner, so it takes a win the moment it has one and never throws a
// drawn game away.
import { Prng } from "../../data/synthetic/prng.ts";
import type { Seat } from "../game.ts";
import { scriptedOpponent, type Opponent } from "../opponents.ts";
import { legalSquares, place, winnerOf, markToMove, type TicTacToeState } from "./ticTacToe.ts";

const memo = new Map<string, number>();

function key(state: TicTacToeState): string {
  return state.cells.map((c) => c ?? ".").join("");
}

/**
 * The value of the position for the side to move under perfect play: 10 − plies-to-win for a win,
 * −(10 − plies-to-loss) for a loss, 0 for a draw.
 */
export function minimaxValue(state: TicTacToeState): number {
  const k = key(state);
  const cached = memo.get(k);
  if (cached !== undefined) return cached;
  let value: number;
  // The previous move (by the other side) may have won.
  if (winnerOf(state) !== null) value = -10;
  else {
    const moves = legalSquares(state);
    if (moves.length === 0) value = 0;
    else {
      value = -Infinity;
      for (const sq of moves) {
        const v = -minimaxValue(place(state, sq));
        // A win found deeper is worth a little less; a loss deeper costs a little less.
        value = Math.max(value, v > 0 ? v - 1 : v < 0 ? v + 1 : 0);
      }
    }
  }
  memo.set(k, value);
  return value;
}

/** Every square that keeps the best minimax value for the side to move. */
export function bestSquares(state: TicTacToeState): number[] {
  const moves = legalSquares(state);
  if (moves.length === 0) return [];
  const scored = moves.map((sq) => {
    const v = -minimaxValue(place(state, sq));
    return { sq, v: v > 0 ? v - 1 : v < 0 ? v + 1 : 0 };
  });
  const best = Math.max(...scored.map((s) => s.v));
  return scored.filter((s) => s.v === best).map((s) => s.sq);
}

function checkTurn(state: TicTacToeState, seat: Seat): void {
  const expected = seat === 0 ? "X" : "O";
  if (markToMove(state) !== expected) throw new Error(`tic-tac-toe opponent asked to move as ${expected}, but ${markToMove(state)} is to move`);
}

/** Picks uniformly among the optimal squares (seeded), so minimax is not one fixed line of play. */
export function minimaxOpponent(seed: number): Opponent<TicTacToeState> {
  const rng = new Prng(seed);
  return scriptedOpponent("minimax", (state, seat) => {
    checkTurn(state, seat);
    return String(rng.pick(bestSquares(state)));
  });
}

export function randomOpponent(seed: number): Opponent<TicTacToeState> {
  const rng = new Prng(seed);
  return scriptedOpponent("random", (state, seat) => {
    checkTurn(state, seat);
    return String(rng.pick(legalSquares(state)));
  });
}
