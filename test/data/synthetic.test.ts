import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  ARITHMETIC_FEWSHOT_PREFIX,
  GUESS_SYSTEM_PROMPT,
  Prng,
  allAdditionPairs,
  generateArithmeticProblems,
  generateChats,
  generatePersonaChats,
  guessNumberGame,
  guessNumberPrefix,
  isHeldOutPair,
  renderRoleColonDocument,
  renderRoleColonPrompt,
  takeDocuments,
  type Conversation,
} from "../../src/data/synthetic/index.ts";
import { fixtureDataFiles } from "../../src/data/synthetic/fixtureFiles.ts";

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "fixtures");

test("Prng: same seed gives the same stream, different seeds differ, ranges hold", () => {
  const a = new Prng(42);
  const b = new Prng(42);
  const c = new Prng(43);
  const sa = Array.from({ length: 50 }, () => a.nextUint32());
  const sb = Array.from({ length: 50 }, () => b.nextUint32());
  const sc = Array.from({ length: 50 }, () => c.nextUint32());
  assert.deepEqual(sa, sb);
  assert.notDeepEqual(sa, sc);
  const r = new Prng(1);
  const seen = new Set<number>();
  for (let i = 0; i < 2000; i++) {
    const v = r.int(3, 7);
    assert.ok(v >= 3 && v <= 7 && Number.isInteger(v));
    seen.add(v);
  }
  assert.deepEqual([...seen].sort(), [3, 4, 5, 6, 7]);
  assert.throws(() => r.int(5, 4), /lo <= hi/);
});

test("chats are deterministic per seed and well formed", () => {
  const a = generateChats(new Prng(9), 300, "train");
  const b = generateChats(new Prng(9), 300, "train");
  const c = generateChats(new Prng(10), 300, "train");
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
  for (const convo of a) {
    assert.ok(convo.length >= 2);
    const body = convo[0].role === "system" ? convo.slice(1) : convo;
    // Guess-number games open with the player's guess right after the system prompt.
    const first = convo[0].role === "system" ? "assistant" : "user";
    const second = first === "user" ? "assistant" : "user";
    body.forEach((m, i) => assert.equal(m.role, i % 2 === 0 ? first : second));
    for (const m of convo) assert.ok(m.content.length > 0 && !m.content.includes("\n\n"), JSON.stringify(m));
  }
});

function additionTurns(convo: Conversation): Array<{ x: number; y: number; answer: string }> {
  const out: Array<{ x: number; y: number; answer: string }> = [];
  for (let i = 0; i + 1 < convo.length; i++) {
    const m = /^What is (\d+) \+ (\d+)\?$/.exec(convo[i].content);
    if (convo[i].role === "user" && m) out.push({ x: Number(m[1]), y: Number(m[2]), answer: convo[i + 1].content });
  }
  return out;
}

test("addition answers are correct and splits never leak held-out pairs", () => {
  let trainSeen = 0;
  let testSeen = 0;
  for (const convo of generateChats(new Prng(3), 2000, "train")) {
    for (const t of additionTurns(convo)) {
      assert.equal(t.answer, String(t.x + t.y));
      if (!(t.x === 4 && t.y === 5)) assert.equal(isHeldOutPair(t.x, t.y), false, `${t.x}+${t.y} is held out`);
      trainSeen++;
    }
  }
  for (const convo of generateChats(new Prng(3), 2000, "test")) {
    for (const t of additionTurns(convo)) {
      if (!(t.x === 4 && t.y === 5)) assert.equal(isHeldOutPair(t.x, t.y), true);
      testSeen++;
    }
  }
  assert.ok(trainSeen > 100 && testSeen > 100);
  const held = allAdditionPairs("test");
  assert.ok(held.length > 800 && held.length < 1300, `held-out pairs: ${held.length}`);
  // Held out as unordered pairs: x + y held out iff y + x is.
  for (const [x, y] of held) assert.ok(isHeldOutPair(y, x));
  for (const p of generateArithmeticProblems(new Prng(5), 200, "train")) {
    const m = /^What is (\d+) \+ (\d+)\?$/.exec(p.question);
    assert.ok(m);
    const [x, y] = [Number(m[1]), Number(m[2])];
    assert.ok(x <= 100 && y <= 100);
    assert.equal(p.answer, String(x + y));
  }
});

test("guess-number games: feedback is consistent with one hidden number", () => {
  const rng = new Prng(11);
  for (let g = 0; g < 200; g++) {
    const game = guessNumberGame(rng, { historyRole: "player", noise: 0.35 });
    assert.equal(game[0].content, GUESS_SYSTEM_PROMPT);
    let lo = 0;
    let hi = 1023;
    for (let i = 1; i < game.length; i += 2) {
      assert.equal(game[i].role, "player");
      const guess = Number(/^Guess: (\d+)$/.exec(game[i].content)?.[1]);
      const reply = game[i + 1].content;
      if (reply === "Too low") lo = Math.max(lo, guess + 1);
      else if (reply === "Too high") hi = Math.min(hi, guess - 1);
      else {
        assert.equal(reply, "Correct");
        assert.equal(i + 2, game.length, "Correct ends the game");
        lo = hi = guess;
      }
      assert.ok(lo <= hi, `inconsistent feedback in ${JSON.stringify(game)}`);
    }
    assert.ok((game.length - 1) / 2 <= 10);
  }
  const prefix = guessNumberPrefix(new Prng(2), { historyRole: "player", noise: 0.35 });
  assert.equal(prefix[prefix.length - 1].role, "assistant");
  assert.ok(prefix.slice(1, -1).every((m) => m.role === "player" || m.role === "user"));
});

test("role_colon text matches the renderer's format", () => {
  const convo: Conversation = [...ARITHMETIC_FEWSHOT_PREFIX, { role: "user", content: "What is 23 + 58?" }];
  assert.equal(renderRoleColonPrompt(convo), "User: What is 4 + 5?\n\nAssistant: 9\n\nUser: What is 23 + 58?\n\nAssistant:");
  assert.equal(
    renderRoleColonDocument([...convo, { role: "assistant", content: "81" }]),
    "User: What is 4 + 5?\n\nAssistant: 9\n\nUser: What is 23 + 58?\n\nAssistant: 81\n\nUser:",
  );
  assert.equal(renderRoleColonDocument([{ role: "PLAYER", content: "Guess: 1" }]), "Player: Guess: 1\n\n");
  const docs = takeDocuments(4, 500);
  assert.deepEqual(docs, takeDocuments(4, 500));
  assert.ok(docs.every((d) => d.endsWith("\n\nUser:") || d.endsWith("\n\n")));
  assert.ok(docs.some((d) => d.includes("Player: Guess:")));
});

test("persona chats: deterministic, every answer in the pirate voice, correct sums, splits kept apart", () => {
  const a = generatePersonaChats(new Prng(4), 1000, "train");
  assert.deepEqual(a, generatePersonaChats(new Prng(4), 1000, "train"));
  assert.notDeepEqual(a, generatePersonaChats(new Prng(5), 1000, "train"));
  let sums = 0;
  for (const convo of a) {
    assert.ok(convo.length >= 2 && convo.length % 2 === 0);
    convo.forEach((m, i) => assert.equal(m.role, i % 2 === 0 ? "user" : "assistant"));
    for (const m of convo.filter((x) => x.role === "assistant")) {
      assert.match(m.content, /^(Arr, .*, matey!|(Ahoy|A fine|Good|Fair|Farewell|See ye).*)$/, m.content);
      assert.ok(m.content.includes("matey") || m.content.startsWith("Ahoy"), m.content);
    }
    for (let i = 0; i + 1 < convo.length; i += 2) {
      const q = /^What is (\d+) \+ (\d+)\?$/.exec(convo[i].content);
      if (!q) continue;
      const [x, y] = [Number(q[1]), Number(q[2])];
      assert.equal(convo[i + 1].content, `Arr, ${x} + ${y} be ${x + y}, matey!`);
      assert.equal(isHeldOutPair(x, y), false);
      sums++;
    }
  }
  assert.ok(sums > 100, `addition turns: ${sums}`);
  for (const convo of generatePersonaChats(new Prng(4), 500, "test")) {
    for (const m of convo) {
      const q = /^What is (\d+) \+ (\d+)\?$/.exec(m.content);
      if (q) assert.equal(isHeldOutPair(Number(q[1]), Number(q[2])), true);
    }
  }
  // The voice is new to tiny-chat: its pretraining corpus never contains it.
  assert.ok(takeDocuments(7, 3000).every((d) => !d.includes("matey") && !d.includes("Arr,")));
});

test("shipped fixtures/data files are exactly what the generator produces", () => {
  for (const f of fixtureDataFiles()) {
    const file = path.join(FIXTURES, "data", f.name);
    assert.ok(fs.existsSync(file), `${file} is missing; run npx tsx scripts/makeFixtures.ts`);
    assert.equal(fs.readFileSync(file, "utf8"), f.lines.join("\n") + "\n", `${f.name} differs from a fresh generation`);
    for (const line of f.lines.slice(0, 50)) {
      const rec = JSON.parse(line) as Record<string, unknown>;
      assert.ok(Array.isArray(rec.messages) || (typeof rec.question === "string" && typeof rec.answer === "string"));
    }
  }
});
