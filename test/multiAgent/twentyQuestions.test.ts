// Twenty questions: the generated attribute table (a pure function of its seed, every thing its own
// row), the oracle's answers over the whole table, and a game played through the coordinator —
// budget, guesses, the questioner's reward with and without the question penalty, what each seat sees.
import assert from "node:assert/strict";
import { test } from "node:test";
import { NOUN_POOL, nounTable } from "../../src/data/synthetic/nouns.ts";
import { TwoPlayerCoordinator } from "../../src/multiAgent/coordinator.ts";
import { oracleAnswer, parseQuestion, TwentyQuestions } from "../../src/multiAgent/games/twentyQuestions.ts";
import { oracleOpponent, randomQuestionerTranscripts } from "../../src/multiAgent/games/twentyQuestionsEnv.ts";
import { Prng } from "../../src/data/synthetic/prng.ts";

test("the attribute table is a pure function of its seed, every thing has its own row, and impossible sizes are refused", () => {
  const a = nounTable(3, 16, 6);
  assert.deepEqual(nounTable(3, 16, 6), a);
  assert.notDeepEqual(nounTable(4, 16, 6), a);
  assert.equal(a.nouns.length, 16);
  assert.equal(new Set(a.nouns).size, 16);
  for (const n of a.nouns) assert.ok(NOUN_POOL.includes(n));
  const rows = a.nouns.map((n) => a.attributes.map((p) => (a.has[n][p] ? 1 : 0)).join(""));
  assert.equal(new Set(rows).size, 16, "rows are distinct");
  // Every property splits the things (no property is the same for all 16 in this table).
  for (const p of a.attributes) assert.ok(a.nouns.some((n) => a.has[n][p]) && a.nouns.some((n) => !a.has[n][p]), p);
  assert.throws(() => nounTable(0, 16, 3), /3 yes\/no attributes tell at most 8 things apart/);
  assert.throws(() => nounTable(0, 99, 6), /nouns=99/);
});

test("the oracle answers every property of every thing from the table, Correct to the right guess, Unknown otherwise", () => {
  const t = nounTable(0, 12, 5);
  for (const secret of t.nouns) {
    for (const p of t.attributes) {
      assert.equal(oracleAnswer(t, secret, `Is it ${p}?`), t.has[secret][p] ? "Yes" : "No");
      assert.equal(oracleAnswer(t, secret, ` is it ${p.toUpperCase()} ? `), t.has[secret][p] ? "Yes" : "No", "case and spaces do not matter");
    }
    for (const guess of t.nouns) {
      const expected = guess === secret ? "Correct" : "No";
      assert.equal(oracleAnswer(t, secret, `Guess: ${guess}`), expected);
      assert.equal(oracleAnswer(t, secret, `Is it a ${guess}?`), expected, "asking about a thing is a guess");
    }
    assert.equal(oracleAnswer(t, secret, "Is it purple?"), "Unknown", "not a property of the table");
    assert.equal(oracleAnswer(t, secret, "hello"), "Unknown");
  }
  assert.deepEqual(parseQuestion("Guess: Apple.", t), { kind: "guess", noun: "apple" });
});

test("a game through the coordinator: the answerer replies to each question, the game ends at the right guess or the budget", async () => {
  const table = nounTable(1, 8, 4);
  const secret = table.nouns[2];
  const wrong = table.nouns[5];
  const game = new TwentyQuestions({ table, maxQuestions: 4, maxGuesses: null, questionPenalty: 0.25 });
  const oracle = oracleOpponent(table);
  const c = new TwoPlayerCoordinator(game, game.initialState(secret));
  const ask = async (text: string) => {
    c.conversation(0);
    assert.ok(c.submit(0, text).ok);
    if (!c.done) assert.ok(c.submit(1, await oracle.move(c.state, 1, c.conversation(1))).ok);
  };
  assert.match(String(c.conversation(0)[0].content), new RegExp(`^Twenty questions\\. The secret is one of: ${table.nouns.join(", ")}\\.`));
  await ask(`Is it ${table.attributes[0]}?`);
  assert.equal(c.conversation(1).at(-1)?.content, table.has[secret][table.attributes[0]] ? "Yes" : "No", "the answerer's own conversation holds its reply");
  assert.match(String(c.conversation(0).at(-1)?.content), /^(Yes|No)\. 3 turns left\.$/);
  await ask(`Guess: ${wrong}`);
  assert.equal(c.done, false, "a wrong guess costs a turn");
  await ask(`Guess: ${secret}`);
  assert.deepEqual(c.end, { winner: 0, reason: "found" });
  assert.equal(game.reward(c.state, c.end!, 0), 1 - 0.25 * 2, "two questions before the right guess");
  assert.deepEqual(game.outcomeMetrics(c.state, c.end!, 0), { correct: 1, questions: 3, out_of_questions: 0, wrong_guess_end: 0 });
  assert.match(String(c.conversation(1)[0].content), new RegExp(`The secret is ${secret}\\.`), "only the answerer is told the secret");
  assert.match(String(c.conversation(0).at(-1)?.content), new RegExp(`^Correct! It was ${secret}\\.$`));

  const budget = new TwoPlayerCoordinator(game, game.initialState(secret));
  for (let i = 0; i < 4; i++) {
    budget.conversation(0);
    budget.submit(0, "Is it purple?");
    if (!budget.done) budget.submit(1, "Unknown");
  }
  assert.deepEqual(budget.end, { winner: 1, reason: "out_of_questions" });
  assert.equal(game.reward(budget.state, budget.end!, 0), 0);

  const oneGuess = new TwentyQuestions({ table, maxQuestions: 4, maxGuesses: 1, questionPenalty: 0 });
  const g = new TwoPlayerCoordinator(oneGuess, oneGuess.initialState(secret));
  g.conversation(0);
  g.submit(0, `Guess: ${wrong}`);
  g.submit(1, "No");
  assert.deepEqual(g.end, { winner: 1, reason: "wrong_guess" });
});

test("warm-up transcripts are the questioner's side of real games: legal questions, answers from the oracle", () => {
  const table = nounTable(0, 8, 4);
  const rules = { table, maxQuestions: 5, maxGuesses: null, questionPenalty: 0 };
  const rows = randomQuestionerTranscripts(rules, new Prng(1), 20);
  assert.equal(rows.length, 20);
  for (const convo of rows) {
    assert.equal(convo[0].role, "system");
    assert.equal(convo.at(-1)?.role, "assistant");
    for (const m of convo.filter((x) => x.role === "assistant")) assert.ok(parseQuestion(String(m.content), table).kind !== "other", String(m.content));
    for (const m of convo.slice(2).filter((x) => x.role === "user"))
      assert.match(String(m.content), /^(Yes|No|Guess: [a-z]+)?\.? ?\d+ turns? left\.$|^(Yes|No)\. \d turns? left\.$/);
  }
});

test("transcripts name each speaker, and the TUI splits 'user (O): …' into a block of its own", async () => {
  const { formatConversation } = await import("../../src/log/transcripts/types.ts");
  const { splitRoles } = await import("../../src/tui/core/transcripts.ts");
  const text = formatConversation([
    { role: "system", content: "rules" },
    { role: "user", content: "123\n456", name: "O" },
    { role: "assistant", content: "5", name: "X" },
  ]);
  assert.equal(text, "system: rules\n\nuser (O): 123\n456\n\nassistant (X): 5");
  assert.deepEqual(
    splitRoles(text, "user").map((b) => [b.role, b.text]),
    [
      ["system", "rules"],
      ["user (O)", "123\n456"],
      ["assistant (X)", "5"],
    ],
  );
});

test("a frozen-model answerer sees its system prompt with the secret and the current question only, and its reply is what the questioner hears", async () => {
  const { answerer } = await import("../../src/multiAgent/games/twentyQuestionsEnv.ts");
  const table = nounTable(2, 8, 3);
  const secret = table.nouns[0];
  const game = new TwentyQuestions({ table, maxQuestions: 4, maxGuesses: 1, questionPenalty: 0 });
  const seen: { role: string; content: unknown }[][] = [];
  const model = answerer(table, async () => ({
    complete: async (messages) => {
      seen.push(messages.map((m) => ({ role: m.role, content: m.content })));
      return { role: "assistant", content: " yes, it is" };
    },
  }));
  const c = new TwoPlayerCoordinator(game, game.initialState(secret));
  for (const q of ["Is it red?", "Is it blue?"]) {
    c.conversation(0);
    c.submit(0, q);
    assert.ok(c.submit(1, await model.move(c.state, 1, c.conversation(1))).ok);
  }
  assert.equal(seen.length, 2);
  assert.deepEqual(
    seen[1].map((m) => m.role),
    ["system", "user"],
    "only the current question, as in the cookbook",
  );
  assert.match(String(seen[1][0].content), new RegExp(`The secret is ${secret}\\.`));
  assert.equal(seen[1][1].content, "Is it blue?");
  assert.match(String(c.conversation(0).at(-1)?.content), /^yes, it is\. 2 turns left\.$/);
});
