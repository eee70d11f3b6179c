// The rubric environment: the grader reads the conversation with the policy's reply and one rubric
// item, its score is read with the item's regex, the reward is the sum over items, and every
// verdict is the transcript's closing message; plus the shipped demo data and `cookbook play rubric`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { recipes } from "../../recipes/registry.ts";
import { fixtureDataPath } from "../../src/data/fixtures.ts";
import { generateRubricAddition } from "../../src/data/synthetic/rubricAddition.ts";
import { openPlay } from "../../src/play/open.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { RubricEnv, extractScore, flattenConversation, graderPrompt, readRubricJsonl, type RubricGrader } from "../../src/rl/envs/rubric.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";

const item = (rubric_str: string, extra: Record<string, string> = {}) => ({
  rubric_str,
  extraction_regex: "<score>(.*)</score>",
  grader_output_format_instruction: "Score 0 to 1 in <score></score>",
  ...extra,
});

test("scores are read with the item's regex; unreadable replies score none", () => {
  assert.equal(extractScore(item("x"), "reason...<score> 0.5 </score>"), 0.5);
  assert.equal(extractScore(item("x"), "no score here"), null);
  assert.equal(extractScore(item("x"), "<score>high</score>"), null);
  assert.equal(extractScore(item("x", { extraction_regex: "SCORE=(\\d)" }), "SCORE=4"), 4);
  assert.equal(extractScore(item("x", { extraction_regex: "(" }), "anything"), null, "a bad regex reads nothing rather than throwing");
});

test("the grader prompt holds the flattened conversation, the rubric and the output format", () => {
  const convo = [
    { role: "user", content: "What is 2 + 2?" },
    { role: "assistant", content: "4" },
  ];
  assert.equal(flattenConversation(convo), "Human: What is 2 + 2?\n\nChatbot: 4");
  const prompt = graderPrompt(convo, item("Is it 4?"));
  assert.match(prompt, /<conversation>\nHuman: What is 2 \+ 2\?\n\nChatbot: 4\n<\/conversation>/);
  assert.match(prompt, /<rubric>\nIs it 4\?\n<\/rubric>/);
  assert.ok(prompt.endsWith("Score 0 to 1 in <score></score>"));
});

test("a reply's reward is the sum of the grader's scores, with each verdict in the transcript", async () => {
  const renderer = getRenderer("role_colon", await getTokenizer("tiny-chat"));
  const seen: string[] = [];
  // A grader that reads the reply out of the prompt: full marks when it says 7, half otherwise.
  const grader: RubricGrader = {
    async reply(prompt) {
      seen.push(prompt);
      if (prompt.includes("polite")) return "cannot tell";
      return /Chatbot: 7\n<\/conversation>/.test(prompt) ? "right <score>1</score>" : "wrong <score>0.5</score>";
    },
  };
  const env = new RubricEnv(
    renderer,
    { convo: [{ role: "user", content: "What is 3 + 4?" }], rubric_items: [item("Is it 7?"), item("Is it polite?")] },
    grader,
  );
  await env.initialObservation();
  const result = await env.step(renderer.tokenizer.encode("7\n\n", { addSpecialTokens: false }), { stopReason: "stop" });
  assert.equal(seen.length, 2);
  assert.equal(result.reward, 1);
  assert.equal(result.metrics?.["judge_unreadable"], 0.5);
  const closing = result.messages!.at(-1)!;
  assert.equal(closing.role, "environment");
  assert.match(String(closing.content), /rubric 1: Is it 7\?\nverdict: right <score>1<\/score>\nscore: 1/);
  assert.match(String(closing.content), /rubric 2: Is it polite\?\nverdict: cannot tell\nscore: none found \(0\)/);
  assert.equal(result.logs?.["judge_2"], "none: cannot tell");
});

test("the shipped demo data is what scripts/makeRubricData.ts writes, in the cookbook's format", () => {
  const train = readRubricJsonl(fixtureDataPath("rubric_addition_train.jsonl"));
  const testSet = readRubricJsonl(fixtureDataPath("rubric_addition_test.jsonl"));
  const all = generateRubricAddition(7, 560);
  assert.equal(train.length, 500);
  assert.equal(testSet.length, 60);
  assert.deepEqual(train[3]!.convo, all[3]!.convo);
  assert.equal(train[3]!.rubric_items[0]!.extraction_regex, "<score>(.*)</score>", "defaults filled as the cookbook's Rubric has them");
  const [a, b] = /What is (\d+) \+ (\d+)\?/.exec(train[0]!.convo.at(-1)!.content)!.slice(1).map(Number);
  assert.equal(train[0]!.rubric_items[0]!.rubric_str, `Does the chatbot correctly get the answer ${a! + b!}?`);
});

test("cookbook play rubric: a typed reply is graded by the configured grader and its verdict shown", async () => {
  const { session } = await openPlay(recipes, "rubric", ["log_path=/tmp/unused-rubric-play", "grader_max_tokens=4"]);
  assert.match(session.observationText(), /What is \d+ \+ \d+\?/);
  const step = await session.act("42");
  assert.equal(step.done, true);
  assert.ok(
    step.closing !== null && /environment \(judge\): rubric 1: Does the chatbot correctly get the answer \d+\?\nverdict: /.test(step.closing),
    String(step.closing),
  );
  assert.equal(typeof step.metrics["judge_score"], "number");
});
