// The reusable RL envs of src/rl/envs: answer grading, the arithmetic problem env on the real
// role_colon renderer, the guess-the-number game and its reward shapes, and the data sources.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { getRenderer } from "../../src/renderers/registry.ts";
import { ArithmeticDataset, ArithmeticTestDataset, makeArithmeticEnv } from "../../src/rl/envs/arithmetic.ts";
import { extractBoxed, grade, gradeFirstChunk, gsm8kReference, normalizeAnswer } from "../../src/grading/index.ts";
import { GuessNumberDataset, GuessNumberEnv, parseGuess } from "../../src/rl/envs/guessNumber.ts";
import { ProblemListDataset, QuestionAnswerEnv } from "../../src/rl/envs/problems.ts";
import { QAFileError, readQAJsonl } from "../../src/rl/envs/qaSources.ts";
import { isHeldOutPair } from "../../src/data/synthetic/arithmetic.ts";
import { loadTokenizerFromDir } from "../../src/tokenizers/index.ts";
import type { ProblemGroupBuilder } from "../../src/rl/problemEnv.ts";
import type { InitialObservation } from "../../src/rl/types.ts";

const REPO = resolve(import.meta.dirname, "../..");

async function roleColon() {
  const tokenizer = await loadTokenizerFromDir(join(REPO, "fixtures", "models", "tiny-chat"));
  return { tokenizer, renderer: getRenderer("role_colon", tokenizer) };
}

test("graders: first chunk, \\boxed{}, GSM8K references", () => {
  assert.equal(gradeFirstChunk(" 42 because", "42").correct, true);
  assert.equal(gradeFirstChunk("4 2", "42").correct, false);
  assert.equal(gradeFirstChunk("", "0").correct, false);
  assert.equal(gradeFirstChunk("1,234", "1234").correct, true);
  assert.equal(extractBoxed("so \\boxed{3} then \\boxed{\\frac{1}{2}}"), "\\frac{1}{2}");
  assert.equal(extractBoxed("\\boxed{unclosed"), null);
  assert.equal(grade("The answer is \\boxed{$1,000}.", "1000", { mode: "boxed" }).correct, true);
  assert.equal(grade("The answer is 1000.", "1000", { mode: "boxed" }).correct, false);
  assert.equal(gsm8kReference("She has 3 + 4 = <<3+4=7>>7 apples.\n#### 7"), "7");
  assert.equal(gsm8kReference("no marker"), null);
  assert.equal(normalizeAnswer("-3.50"), "-3.5");
});

test("arithmetic env on role_colon: a correct, stopped answer earns 1; a wrong one 0; an unstopped one loses the format bonus", async () => {
  const { tokenizer, renderer } = await roleColon();
  const env = makeArithmeticEnv(renderer, { question: "What is 12 + 30?", answer: "42" });
  const init = (await env.initialObservation()) as InitialObservation;
  const prompt = tokenizer.decode(init.observation.chunks.flatMap((c) => (c.type === "encoded_text" ? c.tokens : [])));
  assert.match(prompt, /User: What is 4 \+ 5\?\n\nAssistant: 9\n\nUser: What is 12 \+ 30\?\n\nAssistant:$/);
  const act = (s: string) => tokenizer.encode(s, { addSpecialTokens: false });
  const cases: [string, number, number, number][] = [
    [" 42\n\nUser:", 1, 1, 1],
    [" 41\n\nUser:", 0, 1, 0],
    [" 42", 0.9, 0, 1],
    [" forty\n\nUser:", -0.1, 0, 0],
  ];
  for (const [text, reward, format, correct] of cases) {
    const r = await makeArithmeticEnv(renderer, { question: "What is 12 + 30?", answer: "42" }).step(act(text));
    assert.ok(Math.abs(r.reward - reward) < 1e-12, `${JSON.stringify(text)}: reward ${r.reward}, expected ${reward}`);
    assert.equal(r.metrics?.["format"], format, text);
    assert.equal(r.metrics?.["correct"], correct, text);
  }
  const cut = await makeArithmeticEnv(renderer, { question: "q", answer: "1" }).step(act(" 1"), { stopReason: "length" });
  assert.equal(cut.metrics?.["stop/max_tokens"], 1);
});

test("arithmetic datasets: batches are deterministic per (seed, index) and never contain held-out pairs", async () => {
  const { renderer } = await roleColon();
  const ds = new ArithmeticDataset({ renderer, batchSize: 4, groupSize: 3, numBatches: 10, seed: 7 });
  const questions = async (i: number, d = ds) =>
    Promise.all(d.getBatch(i).map(async (b) => ((await (b as ProblemGroupBuilder).makeEnvs())[0] as QuestionAnswerEnv).problem.question));
  assert.deepEqual(await questions(3), await questions(3));
  assert.notDeepEqual(await questions(3), await questions(4));
  assert.notDeepEqual(await questions(3), await questions(3, new ArithmeticDataset({ renderer, batchSize: 4, groupSize: 3, numBatches: 10, seed: 8 })));
  assert.equal((await ds.getBatch(0)[0]!.makeEnvs()).length, 3);
  for (let i = 0; i < 10; i++) {
    for (const q of await questions(i)) {
      const [x, y] = /(\d+) \+ (\d+)/.exec(q)!.slice(1).map(Number) as [number, number];
      assert.equal(isHeldOutPair(x, y), false, q);
    }
  }
  const testDs = new ArithmeticTestDataset(renderer, 5, 1);
  assert.equal(testDs.length, 1);
  for (const b of testDs.getBatch(0)) {
    const q = ((await b.makeEnvs())[0] as QuestionAnswerEnv).problem.question;
    const [x, y] = /(\d+) \+ (\d+)/.exec(q)!.slice(1).map(Number) as [number, number];
    assert.equal(isHeldOutPair(x, y), true, q);
  }
});

test("guess number: bisection finds the number and the interval reward sums to exactly 1", async () => {
  assert.equal(parseGuess("Guess: 512"), 512);
  assert.equal(parseGuess(" Guess:7 "), 7);
  assert.equal(parseGuess("I think 512"), null);
  assert.equal(parseGuess("Guess: 5 or 6"), null);
  for (const target of [0, 1, 333, 1023]) {
    const env = new GuessNumberEnv(target, { maxTurns: 11 });
    const messages = await env.initialObservation();
    assert.match(String(messages[0]!.content), /between 0 and 1024/);
    let lo = 0;
    let hi = 1024;
    let total = 0;
    for (let turn = 1; ; turn++) {
      const guess = Math.floor((lo + hi) / 2);
      const r = await env.step({ role: "assistant", content: `Guess: ${guess}` });
      total += r.reward;
      const reply = String(r.nextMessages.at(-1)!.content);
      assert.equal(r.nextMessages.at(-2)!.role, "player");
      if (reply === "Correct") {
        assert.equal(r.episodeDone, true);
        assert.equal(r.metrics?.["correct"], 1);
        assert.equal(r.metrics?.["turns"], turn);
        break;
      }
      assert.equal(r.episodeDone, false, `turn ${turn}`);
      if (reply === "Too low") lo = guess + 1;
      else hi = guess - 1;
    }
    assert.ok(Math.abs(total - 1) < 1e-9, `target ${target}: total ${total}`);
  }
});

test("guess number: wasted guesses earn nothing, running out of turns ends the game, malformed answers are penalised", async () => {
  const env = new GuessNumberEnv(700, { maxTurns: 3 });
  await env.initialObservation();
  const first = await env.step({ role: "assistant", content: "Guess: 512" });
  assert.ok(first.reward > 0 && first.reward < 0.2);
  const repeat = await env.step({ role: "assistant", content: "Guess: 100" });
  assert.equal(repeat.reward, 0, "a guess outside the remaining interval removes no uncertainty");
  const last = await env.step({ role: "assistant", content: "Guess: 600" });
  assert.equal(last.episodeDone, true);
  assert.equal(last.metrics?.["correct"], 0);
  assert.equal(last.metrics?.["stop/max_turns"], 1);

  const binary = new GuessNumberEnv(5, { rewardShape: "binary", historyRole: "assistant" });
  await binary.initialObservation();
  assert.equal((await binary.step({ role: "assistant", content: "Guess: 4" })).reward, 0);
  const hit = await binary.step({ role: "assistant", content: "Guess: 5" });
  assert.equal(hit.reward, 1);
  assert.equal(hit.nextMessages.at(-2)!.role, "assistant");

  const bad = new GuessNumberEnv(5);
  await bad.initialObservation();
  const r = await bad.step({ role: "assistant", content: "five?" });
  assert.deepEqual([r.reward, r.episodeDone, r.metrics?.["format"], r.metrics?.["stop/parse_error"]], [-0.1, true, 0, 1]);
});

test("guess number dataset: groups share a target; rollouts through the renderer carry messages", async () => {
  const { renderer, tokenizer } = await roleColon();
  const ds = new GuessNumberDataset({ renderer, batchSize: 3, groupSize: 2, numBatches: 5, seed: 1 });
  const envs = await ds.getBatch(2)[0]!.makeEnvs();
  assert.equal(envs.length, 2);
  const init = (await envs[0]!.initialObservation()) as InitialObservation;
  assert.deepEqual(init.stopCondition, ["\n\nUser:"]);
  const step = await envs[0]!.step(tokenizer.encode(" Guess: 512\n\nUser:", { addSpecialTokens: false }), { stopReason: "stop" });
  assert.equal(step.metrics?.["format"], 1);
  assert.equal(step.messages?.at(-1)?.content, "Guess: 512");
  const next = tokenizer.decode(step.nextObservation.chunks.flatMap((c) => (c.type === "encoded_text" ? c.tokens : [])));
  assert.match(next, /Player: Guess: 512\n\nUser: Too (low|high)\n\nAssistant:$/);
});

test("question/answer JSONL: records load, and errors name the file, line and field", () => {
  const dir = mkdtempSync(join(tmpdir(), "qa-"));
  try {
    const good = join(dir, "good.jsonl");
    writeFileSync(good, '{"question":"What is 1 + 1?","answer":"2"}\n\n{"question":"q2","answer":3}\n');
    assert.deepEqual(readQAJsonl(good), [
      { question: "What is 1 + 1?", answer: "2" },
      { question: "q2", answer: "3" },
    ]);
    const bad = join(dir, "bad.jsonl");
    writeFileSync(bad, '{"question":"a","answer":"1"}\n{"question":"b"}\n');
    assert.throws(
      () => readQAJsonl(bad),
      (e: unknown) => e instanceof QAFileError && /bad\.jsonl:2: "answer"/.test(e.message),
    );
    writeFileSync(bad, "{not json\n");
    assert.throws(() => readQAJsonl(bad), /bad\.jsonl:1: not valid JSON/);
    assert.throws(() => readQAJsonl(join(dir, "missing.jsonl")), /cannot read/);
    const fixture = readQAJsonl(join(REPO, "fixtures", "data", "arithmetic.jsonl"));
    assert.ok(fixture.length >= 1000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("problem list dataset: full batches only, shuffled by seed", async () => {
  const { renderer } = await roleColon();
  const problems = Array.from({ length: 10 }, (_, i) => ({ question: `q${i}`, answer: String(i) }));
  const makeEnv = (p: { question: string; answer: string }) => new QuestionAnswerEnv(renderer, p, gradeFirstChunk);
  const ds = new ProblemListDataset(problems, { batchSize: 3, groupSize: 2, makeEnv, datasetName: "file", shuffleSeed: 1 });
  assert.equal(ds.length, 3);
  assert.throws(() => ds.getBatch(3), RangeError);
  const seen = ds.problems.map((p) => p.question);
  assert.deepEqual([...seen].sort(), problems.map((p) => p.question).sort());
  assert.notDeepEqual(
    seen,
    problems.map((p) => p.question),
  );
  assert.deepEqual(ds.getBatch(0)[0]!.loggingTags(), ["file"]);
});
