// Tic-tac-toe rules (every winning line, draws, illegal and unparsable moves, whose turn) and the
// minimax opponent checked exhaustively: from every reachable position it never loses whatever the
// other side plays unless the position is already lost, and wherever it can force a win, it wins.
import assert from "node:assert/strict";
import { test } from "node:test";
import { otherSeat, type Seat } from "../../src/multiAgent/game.ts";
import {
  boardFrom,
  emptyBoard,
  legalSquares,
  LINES,
  markToMove,
  parseSquare,
  place,
  renderBoard,
  renderPosition,
  TicTacToe,
  winnerOf,
  type TicTacToeState,
} from "../../src/multiAgent/games/ticTacToe.ts";
import { bestSquares, minimaxOpponent, minimaxValue, randomOpponent } from "../../src/multiAgent/games/ticTacToeOpponents.ts";

const game = new TicTacToe();

test("every line of three wins for its mark; a full board with no line is a draw; play goes on otherwise", () => {
  for (const line of LINES) {
    for (const mark of ["X", "O"] as const) {
      const cells = Array<"X" | "O" | null>(9).fill(null);
      for (const i of line) cells[i] = mark;
      const state = { cells };
      assert.equal(winnerOf(state), mark, `line ${line} of ${mark}`);
      assert.deepEqual(game.outcome(state), { winner: mark === "X" ? 0 : 1, reason: "three_in_a_row" });
      assert.deepEqual(legalSquares(state), [], "no moves after a win");
    }
  }
  const draw = boardFrom("XOX XOO OXX");
  assert.equal(winnerOf(draw), null);
  assert.deepEqual(game.outcome(draw), { winner: null, reason: "draw" });
  assert.equal(game.outcome(boardFrom("XO. ... ...")), null);
  assert.deepEqual(game.reward(draw, { winner: null, reason: "draw" }, 0), 0);
  assert.equal(game.reward(draw, { winner: 1, reason: "three_in_a_row" }, 1), 1);
  assert.equal(game.reward(draw, { winner: 1, reason: "three_in_a_row" }, 0), -1);
});

test("X moves first and the marks alternate; a taken square or anything but one digit 1–9 is illegal and changes nothing", () => {
  let s = emptyBoard();
  assert.equal(game.toMove(s), 0);
  const r1 = game.play(s, 0, " 5");
  assert.ok(r1.ok);
  s = r1.state;
  assert.equal(markToMove(s), "O");
  assert.equal(game.toMove(s), 1);
  assert.equal(r1.summary, "X took 5.");
  const taken = game.play(s, 1, "5");
  assert.deepEqual(taken, { ok: false, error: "square 5 is taken" });
  for (const bad of ["0", "10", "five", "5 6", "", "Guess: 5"]) {
    const r = game.play(s, 1, bad);
    assert.equal(r.ok, false, `${JSON.stringify(bad)} must be illegal`);
    assert.equal(parseSquare(bad), null);
  }
  assert.equal(parseSquare(" 7 "), 7);
  assert.equal(parseSquare("7."), 7);
  assert.equal(renderBoard(place(s, 1)), " O 2 3\n 4 X 6\n 7 8 9");
  assert.equal(renderPosition(place(s, 1)), " O 2 3\n 4 X 6\n 7 8 9\nFree: 2 3 4 6 7 8 9");
  assert.equal(renderPosition(boardFrom("XXX OO. ...")), " X X X\n O O 6\n 7 8 9", "no free squares once the game is won");
});

/** Every position reachable from the empty board by legal play (the game continuing). */
function reachable(): TicTacToeState[] {
  const seen = new Map<string, TicTacToeState>();
  const walk = (s: TicTacToeState) => {
    const key = s.cells.map((c) => c ?? ".").join("");
    if (seen.has(key)) return;
    seen.set(key, s);
    for (const sq of legalSquares(s)) walk(place(s, sq));
  };
  walk(emptyBoard());
  return [...seen.values()];
}

/**
 * The worst result for the minimax side (`me`) over every reply of the other side, with minimax
 * free to pick any of its best squares: +1 win, 0 draw, −1 loss.
 */
function worstFor(s: TicTacToeState, me: "X" | "O"): number {
  const w = winnerOf(s);
  if (w !== null) return w === me ? 1 : -1;
  const moves = legalSquares(s);
  if (moves.length === 0) return 0;
  const mine = markToMove(s) === me;
  const results = (mine ? bestSquares(s) : moves).map((sq) => worstFor(place(s, sq), me));
  return Math.min(...results);
}

test("minimax never loses a position that is not already lost, and wins wherever a win can be forced", () => {
  const positions = reachable().filter((s) => legalSquares(s).length > 0);
  assert.ok(positions.length > 4000, `${positions.length} positions`);
  let forced = 0;
  let lost = 0;
  for (const s of positions) {
    const me = markToMove(s);
    const worst = worstFor(s, me);
    const value = minimaxValue(s);
    if (value > 0) {
      forced += 1;
      assert.equal(worst, 1, `minimax as ${me} has a forced win but does not always take it from\n${renderBoard(s)}`);
    } else if (value === 0) assert.equal(worst, 0, `minimax as ${me} can lose a drawn position (or always wins one) from\n${renderBoard(s)}`);
    else lost += 1; // Already lost (two threats): nothing saves it against every reply.
  }
  assert.ok(forced > 1000 && lost > 100, `${forced} positions with a forced win, ${lost} already lost`);
  // It takes an immediate win rather than a slower one: X to move with 1 2 taken and 4 5 taken.
  assert.deepEqual(bestSquares(boardFrom("XX. OO. ...")), [3]);
  // And blocks a threat it cannot beat: O to move, X threatens 3.
  assert.deepEqual(bestSquares(boardFrom("XX. .O. ...")), [3]);
  assert.equal(minimaxValue(emptyBoard()), 0, "perfect play draws");
});

test("the scripted opponents play legal squares for the mark to move and refuse the wrong seat", async () => {
  const s = boardFrom("XO. .X. ...");
  for (const make of [randomOpponent, minimaxOpponent]) {
    for (let seed = 0; seed < 20; seed++) {
      const move = await make(seed).move(s, 1, []);
      assert.ok(legalSquares(s).includes(Number(move)), `${move} is legal`);
    }
    await assert.rejects(make(0).move(s, otherSeat(1 as Seat), []), /asked to move as X, but O is to move/);
  }
  assert.equal(await minimaxOpponent(0).move(s, 1, []), "9", "O must block the diagonal");
});

test("warm-up positions are one turn each, told as the prompt shows it, trained toward every free square; whole-game transcripts hold only legal moves", async () => {
  const { warmupPositionTranscripts, warmupGameTranscripts } = await import("../../src/multiAgent/games/ticTacToeEnv.ts");
  const { Prng } = await import("../../src/data/synthetic/prng.ts");
  const boardRe = /((?: [XO1-9]){3})\n((?: [XO1-9]){3})\n((?: [XO1-9]){3})\nFree: ([1-9 ]+)\nYour move\?$/;
  const rows = warmupPositionTranscripts(new Prng(1), 400);
  const freeCounts: number[] = [];
  const firstChoice = new Map<number, number>();
  for (const { messages, alternatives } of rows) {
    const [system, user] = messages;
    assert.equal(messages.length, 2);
    assert.equal(system.role, "system");
    const board = boardRe.exec(String(user.content));
    assert.ok(board !== null, String(user.content));
    const cells = (board[1] + board[2] + board[3]).replace(/ /g, "");
    const free = legalSquares(boardFrom(cells));
    assert.equal(board[4], free.join(" "), "the Free line lists the empty squares");
    assert.deepEqual(
      [...alternatives].map(Number).sort((a, b) => a - b),
      free,
      "every free square is a target, nothing else",
    );
    assert.match(String(system.content), markToMove(boardFrom(cells)) === "X" ? /You are X/ : /You are O/);
    freeCounts.push(free.length);
    if (free.length === 9) firstChoice.set(Number(alternatives[0]), (firstChoice.get(Number(alternatives[0])) ?? 0) + 1);
  }
  const share = (k: number) => freeCounts.filter((n) => n === k).length / freeCounts.length;
  assert.ok(share(1) > share(5) && share(2) > share(8), "few free squares are weighted up");
  assert.ok(firstChoice.size > 3, "the reply the model reads after its move is drawn at random, not always the lowest square");
  for (const convo of warmupGameTranscripts(new Prng(2), 20)) {
    let state = emptyBoard();
    for (const m of convo) {
      if (m.role !== "user") continue;
      const b = boardRe.exec(String(m.content));
      if (b !== null) state = boardFrom((b[1] + b[2] + b[3]).replace(/ /g, ""));
    }
    const last = convo.at(-1);
    assert.equal(last?.role, "assistant");
    assert.ok(legalSquares(state).includes(Number(last?.content)));
  }
});

test("a base-model opponent sees as much of the game as the policy and samples from its own seed stream", async () => {
  const { ticTacToeOpponent } = await import("../../src/multiAgent/games/ticTacToeEnv.ts");
  type Msg = { role: string; content: string };
  const calls: { key: number | null; messages: number }[] = [];
  const completer = (key: number | null) => ({
    complete: async (messages: Msg[]) => {
      calls.push({ key, messages: messages.length });
      return { role: "assistant" as const, content: "5" };
    },
    fork: (k: number) => completer(k),
  });
  const conversation: Msg[] = [
    { role: "system", content: "s" },
    { role: "user", content: "u1" },
    { role: "assistant", content: "1" },
    { role: "user", content: "u2" },
  ];
  const opponent = ticTacToeOpponent("base_model", 41, async () => completer(null), 0);
  assert.equal(await opponent.move(emptyBoard(), 1, conversation as never), "5");
  assert.deepEqual(calls, [{ key: 41, messages: 2 }], "forked with the opponent's seed; system prompt and current turn only");
  await ticTacToeOpponent("base_model", 42, async () => completer(null), null).move(emptyBoard(), 1, conversation as never);
  assert.deepEqual(calls[1], { key: 42, messages: 4 }, "history_turns=null: the whole conversation");
});
