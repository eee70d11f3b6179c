// `cookbook play` in the two games: a scripted person takes X against minimax (taking the lowest
// free square it sees on the printed board, it cannot win: the result printed and the reward agree),
// and the questioner's seat in twenty questions (asking every property, then guessing the one thing
// of the table that fits the oracle's answers: it always finds it).
import assert from "node:assert/strict";
import { test } from "node:test";
import { runPlay } from "../../src/commands/play.ts";
import { nounTable } from "../../src/data/synthetic/nouns.ts";

function transcript(): { write: (t: string) => void; text: () => string } {
  const out: string[] = [];
  return { write: (t) => void out.push(t), text: () => out.join("") };
}

test("a person plays X against minimax in tic_tac_toe through cookbook play, to the end", async () => {
  const io = transcript();
  async function* person(): AsyncGenerator<string> {
    for (;;) {
      // The last board printed: three rows of X, O and square numbers.
      const boards = io.text().match(/( [XO1-9]){3}\n( [XO1-9]){3}\n( [XO1-9]){3}\n/g) ?? [];
      const board = boards.at(-1)?.replace(/\s/g, "") ?? "";
      const free = [...board].map((c, i) => (c === "X" || c === "O" ? null : i + 1)).filter((x) => x !== null);
      if (io.text().includes("episode done") || free.length === 0) return;
      yield String(free[0]);
    }
  }
  const total = await runPlay("tic_tac_toe", ["play_opponent=minimax", "play_as=X"], { lines: person(), write: io.write });
  const text = io.text();
  assert.match(text, /^tic_tac_toe: you are the policy/);
  assert.match(
    text,
    /── observation ──\n<\|endoftext\|>System: Tic-tac-toe\. You are X[^\n]*\n\nUser: {2}1 2 3\n 4 5 6\n 7 8 9\nFree: 1 2 3 4 5 6 7 8 9\nYour move\?\n\nAssistant:/,
  );
  assert.match(text, /O took \d\./, "minimax answers each move");
  assert.match(text, /episode done: \d turns/);
  assert.ok(total === -1 || total === 0, `minimax cannot lose: ${total}`);
  assert.match(text, total === -1 ? /loss_rate=1/ : /draw_rate=1/);

  // play_as=O: the person gets O's seat (the recipe trains against a fixed opponent, alternating
  // seats from X; play still gives the person the seat and opponent asked for), minimax opens.
  const asO = transcript();
  const firstMoveOnly = (async function* (): AsyncGenerator<string> {})();
  await runPlay("tic_tac_toe", ["play_opponent=minimax", "play_as=O"], { lines: firstMoveOnly, write: asO.write });
  assert.match(asO.text(), /── observation ──\n<\|endoftext\|>System: Tic-tac-toe\. You are O[^\n]*\n\nUser: X took \d\./);
});

test("a person asks every property in twenty_questions, then guesses the only thing that fits, and is rewarded", async () => {
  const table = nounTable(0, 8, 4);
  const io = transcript();
  const answers: Record<string, boolean> = {};
  async function* person(): AsyncGenerator<string> {
    for (const p of table.attributes) {
      yield `Is it ${p}?`;
      const reply = io
        .text()
        .match(/User: (Yes|No|Unknown)\. \d+ turns? left\./g)
        ?.at(-1);
      assert.ok(reply !== undefined && !reply.includes("Unknown"), `the oracle knows ${p}: ${io.text().slice(-200)}`);
      answers[p] = reply.includes("Yes");
    }
    const fits = table.nouns.filter((n) => table.attributes.every((p) => table.has[n][p] === answers[p]));
    assert.equal(fits.length, 1);
    yield `Guess: ${fits[0]}`;
  }
  const total = await runPlay("twenty_questions", ["nouns=8", "attributes=4", "table_seed=0", "max_questions=6"], { lines: person(), write: io.write });
  assert.match(io.text(), /Twenty questions\. The secret is one of:/);
  assert.match(io.text(), /correct=1/);
  assert.match(io.text(), /episode done: 5 turns/);
  assert.equal(total, 1);
});
