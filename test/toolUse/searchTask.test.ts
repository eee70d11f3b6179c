// The search_tool task: the shipped corpus answers every shipped question at rank 1 of its query
// (so the task is solvable by searching), a typed episode (search, then answer) is graded by exact
// match, a direct answer without Answer: loses the format reward, and the warm-up's places are not
// the RL questions' places.
import { test } from "node:test";
import assert from "node:assert/strict";
import { recipes } from "../../recipes/registry.ts";
import { fixtureDataPath } from "../../src/data/fixtures.ts";
import { generateSearchWorld } from "../../src/data/synthetic/searchCorpus.ts";
import { openPlay } from "../../src/play/open.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { readSearchQA, searchWarmupRows } from "../../src/toolUse/searchTask.ts";
import { DocumentIndex, documentSearchTool, readDocuments } from "../../src/toolUse/tools/documentSearch.ts";

test("the shipped corpus is what scripts/makeSearchCorpus.ts writes, and BM25 puts each question's fact first", () => {
  const documents = readDocuments(fixtureDataPath("search_corpus.jsonl"));
  const train = readSearchQA(fixtureDataPath("search_qa_train.jsonl"));
  const testSet = readSearchQA(fixtureDataPath("search_qa_test.jsonl"));
  const world = generateSearchWorld(20_261_126, 160, 0.15);
  assert.deepEqual(
    documents.map((d) => d.text),
    world.documents.map((d) => d.text),
  );
  assert.equal(train.length + testSet.length, documents.length);
  const index = new DocumentIndex(documents);
  for (const qa of [...train, ...testSet]) {
    const top = index.search(qa.query, 2)[0];
    assert.ok(top?.text.endsWith(` ${qa.answers[0]}.`), `${qa.query} → ${top?.text}`);
    // The question itself, searched as it is, finds it too.
    assert.ok(index.search(qa.question, 1)[0]!.text.endsWith(` ${qa.answers[0]}.`), qa.question);
  }
});

test("cookbook play search_tool: a typed search then a typed answer is graded by exact match", async () => {
  const { session } = await openPlay(recipes, "search_tool", ["log_path=/tmp/unused-search-play"]);
  assert.match(session.observationText(), /search\(query\)/);
  const question = /What is the (\w+) of (\w+)\?/.exec(session.observationText())!;
  const first = await session.act(`<call>search ${question[2]} ${question[1]}</call>`);
  assert.equal(first.done, false);
  const answer = new RegExp(`The ${question[1]} of ${question[2]} is (\\w+)\\.`).exec(first.newObservationText);
  assert.ok(answer, `the result names the answer: ${first.newObservationText}`);
  const last = await session.act(`Answer: ${answer[1]}`);
  assert.equal(last.done, true);
  assert.equal(last.reward, 1);
  assert.equal(last.metrics["correct"], 1);
  assert.equal(last.metrics["called_tool"], 1);

  const direct = (await openPlay(recipes, "search_tool", ["log_path=/tmp/unused-search-play"])).session;
  const guessed = await direct.act("Melkan");
  assert.equal(guessed.done, true);
  assert.ok(Math.abs(guessed.reward - -0.1) < 1e-9, "no Answer: line costs format_coef");
});

test("warm-up transcripts search the warm-up's own places and copy the answer out of the real tool's result", async () => {
  const renderer = getRenderer("role_colon", await getTokenizer("tiny-chat"));
  const search = documentSearchTool(fixtureDataPath("search_corpus.jsonl"));
  const rows = searchWarmupRows({ renderer, search, examples: 60, batchSize: 4, toolShare: 0.9, decisionShare: 0.05, seed: 0, k: 2, maxChars: 200 });
  const shipped = new Set(readDocuments(fixtureDataPath("search_corpus.jsonl")).map((d) => d.title!.split(" ")[0]));
  let searching = 0;
  for (const row of rows) {
    const rest = row.messages.slice(-3);
    const place = /of (\w+)\?/.exec(String(row.messages.find((m) => m.role === "user")!.content))![1]!;
    assert.ok(!shipped.has(place), `${place} is a shipped place`);
    if (rest.length === 3 && rest[1]!.role === "tool") {
      searching += 1;
      const answer = /^Answer: (\w+)$/.exec(String(rest[2]!.content))![1]!;
      assert.match(String(rest[1]!.content), new RegExp(`^\\[\\d+\\] ${place} \\w+: The \\w+ of ${place} is ${answer}\\.`));
    }
  }
  assert.ok(searching > 40 && searching < 60, `${searching} of 60 search`);
  assert.ok(rows.filter((r) => r.trainDecision).length < 20, "the decision is trained in few rows");
});
