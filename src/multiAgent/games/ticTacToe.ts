// Tic-tac-toe for the coordinator (the cookbook plays TextArena's TicTacToe-v0). A move is a single
// digit 1–9 naming a square — the simplest reply the shipped tiny model can produce, since its
// tokenizer gives every digit a token of its own. The board is drawn with empty squares by number
// (" X O 3\n 4 X 6\n 7 8 9") and followed, as TextArena's "Available Moves" line is, by the free
// squares ("Free: 3 4 6 7 8 9"): each number there is the very token of the reply that names it.
// Anything else, or a taken square, is an illegal move; the seat's parse-error policy decides
// whether that loses the game or earns a second try.
import type { Metrics } from "../../rl/types.ts";
import { winDrawLossMetrics, zeroSumReward, type GameEnd, type MoveRecord, type PlayResult, type Seat, type TurnGame } from "../game.ts";

export type Mark = "X" | "O";
export type Cell = Mark | null;

export interface TicTacToeState {
  /** Squares 1–9 in reading order at indices 0–8. */
  readonly cells: readonly Cell[];
}

export const LINES: readonly (readonly [number, number, number])[] = [
  [0, 1, 2],
  [3, 4, 5],
  [6, 7, 8],
  [0, 3, 6],
  [1, 4, 7],
  [2, 5, 8],
  [0, 4, 8],
  [2, 4, 6],
];

export const MARKS: readonly [Mark, Mark] = ["X", "O"];

export function emptyBoard(): TicTacToeState {
  return { cells: Array<Cell>(9).fill(null) };
}

/** A board from a 9-character string of X, O and . (or digits) for empty squares. */
export function boardFrom(text: string): TicTacToeState {
  const compact = text.replace(/\s+/g, "");
  if (compact.length !== 9) throw new Error(`board ${JSON.stringify(text)} has ${compact.length} squares; expected 9`);
  return { cells: [...compact].map((ch) => (ch === "X" || ch === "O" ? ch : null)) };
}

export function markToMove(state: TicTacToeState): Mark {
  const x = state.cells.filter((c) => c === "X").length;
  const o = state.cells.filter((c) => c === "O").length;
  return x === o ? "X" : "O";
}

export function winnerOf(state: TicTacToeState): Mark | null {
  for (const [a, b, c] of LINES) {
    const m = state.cells[a];
    if (m !== null && m === state.cells[b] && m === state.cells[c]) return m;
  }
  return null;
}

/** Empty squares as numbers 1–9. */
export function legalSquares(state: TicTacToeState): number[] {
  if (winnerOf(state) !== null) return [];
  const out: number[] = [];
  state.cells.forEach((c, i) => {
    if (c === null) out.push(i + 1);
  });
  return out;
}

export function place(state: TicTacToeState, square: number): TicTacToeState {
  const cells = [...state.cells];
  cells[square - 1] = markToMove(state);
  return { cells };
}

const MOVE_RE = /^\s*([1-9])\s*\.?\s*$/;

/** The square a reply names, or null when the reply is not a single digit 1–9. */
export function parseSquare(text: string): number | null {
  const m = MOVE_RE.exec(text);
  return m === null ? null : Number(m[1]);
}

/**
 * The board as the players see it: three rows of three squares, each a space and its mark or, when
 * empty, its number (" X O 3\n 4 X 6\n 7 8 9"), then the free squares ("Free: 3 4 6 7 8 9"). With
 * the space every number is the same tokenizer token as the reply " 3" that names it, so reading
 * which squares are free is copying a token from the prompt — which the tiny model learns in a
 * warm-up, where it could not learn to map the compact "XO3" board's digits to replies (docs/agents.md).
 */
export function renderBoard(state: TicTacToeState): string {
  const rows: string[] = [];
  for (let r = 0; r < 3; r++)
    rows.push(
      state.cells
        .slice(3 * r, 3 * r + 3)
        .map((c, i) => ` ${c ?? String(3 * r + i + 1)}`)
        .join(""),
    );
  return rows.join("\n");
}

/** The board and, while the game is on, the line of free squares. */
export function renderPosition(state: TicTacToeState): string {
  const free = legalSquares(state);
  return free.length === 0 ? renderBoard(state) : `${renderBoard(state)}\nFree: ${free.join(" ")}`;
}

function seatOf(mark: Mark): Seat {
  return mark === "X" ? 0 : 1;
}

export class TicTacToe implements TurnGame<TicTacToeState> {
  readonly name = "tic_tac_toe";
  readonly seatNames = MARKS;

  toMove(state: TicTacToeState): Seat {
    return seatOf(markToMove(state));
  }

  play(state: TicTacToeState, seat: Seat, text: string): PlayResult<TicTacToeState> {
    const square = parseSquare(text);
    const mark = MARKS[seat];
    if (square === null) return { ok: false, error: `${JSON.stringify(text.trim().slice(0, 40))} is not a square number from 1 to 9` };
    if (state.cells[square - 1] !== null) return { ok: false, error: `square ${square} is taken` };
    return { ok: true, state: place(state, square), summary: `${mark} took ${square}.` };
  }

  outcome(state: TicTacToeState): GameEnd | null {
    const winner = winnerOf(state);
    if (winner !== null) return { winner: seatOf(winner), reason: "three_in_a_row" };
    if (state.cells.every((c) => c !== null)) return { winner: null, reason: "draw" };
    return null;
  }

  reward(_state: TicTacToeState, end: GameEnd, seat: Seat): number {
    return zeroSumReward(end, seat);
  }

  outcomeMetrics(_state: TicTacToeState, end: GameEnd, seat: Seat): Metrics {
    const m = winDrawLossMetrics(end, seat);
    // Per side as well: moving first is worth a lot, so X and O rates are read apart.
    return { ...m, [`as_${MARKS[seat].toLowerCase()}/win_or_draw`]: m.win_or_draw };
  }

  // Short: every turn of every game is trained with it (37 tokens here against 65 for the longer
  // "…, the other player is O; X moves first. … reply with the number of an empty square.").
  systemPrompt(_state: TicTacToeState, seat: Seat): string {
    return `Tic-tac-toe. You are ${MARKS[seat]}. Three in a row wins. Reply with a free square.`;
  }

  turnPrompt(state: TicTacToeState, _seat: Seat, lastMove: MoveRecord | null): string {
    return `${lastMove !== null ? `${lastMove.summary}\n` : ""}${renderPosition(state)}\nYour move?`;
  }

  endPrompt(state: TicTacToeState, seat: Seat, end: GameEnd, lastMove: MoveRecord): string {
    const head = lastMove.seat === seat ? "" : `${lastMove.summary}\n`;
    if (end.forfeitBy !== undefined) {
      const loser = MARKS[end.forfeitBy];
      return `Illegal move by ${loser}: ${lastMove.summary}. ${MARKS[1 - end.forfeitBy]} wins.`;
    }
    const result = end.winner === null ? "Draw." : `${MARKS[end.winner]} wins.`;
    return `${head}${renderBoard(state)}\n${result}`;
  }

  retryPrompt(state: TicTacToeState, _seat: Seat, error: string): string {
    return `Illegal move: ${error}.\n${renderPosition(state)}\nYour move?`;
  }
}
