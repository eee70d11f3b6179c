// The search_tool task: the shipped corpus answers every shipped question at rank 1 of its query
// (so the task is solvable by searching), a typed episode (search, then answer) is graded by exact
// match, a direct answer without Answer: loses the format reward, the warm-up's places are not
// the RL questions' places, the names keep one token layout, and the embedding index serves play.
import { test } from "node:test";
import assert from "node:assert/strict";
import { recipes } from "../../recipes/registry.ts";
import { fixtureDataPath } from "../../src/data/fixtures.ts";
import { PLACE_WORDS, SEARCH_ATTRIBUTES, VALUE_WORDS, generateSearchFacts, generateSearchWorld } from "../../src/data/synthetic/searchCorpus.ts";
import { openPlay } from "../../src/play/open.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { placesAskedAbout, readSearchQA, searchWarmupRows } from "../../src/toolUse/searchTask.ts";
import { DocumentIndex, documentSearchTool, readDocuments } from "../../src/toolUse/tools/documentSearch.ts";
import { EmbeddingIndex, transformersEmbedder } from "../../src/toolUse/tools/embeddingSearch.ts";

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
  const question = /What is the (\w+) of (\w+ \w+)\?/.exec(session.observationText())!;
  const first = await session.act(`<call>search ${question[1]} of ${question[2]}</call>`);
  assert.equal(first.done, false);
  const answer = new RegExp(`\\[d\\d{3}\\] The ${question[1]} of ${question[2]} is (\\w+ \\w+)\\.`).exec(first.newObservationText);
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
  const questions = [...readSearchQA(fixtureDataPath("search_qa_train.jsonl")), ...readSearchQA(fixtureDataPath("search_qa_test.jsonl"))];
  const avoidPlaces = placesAskedAbout(questions);
  assert.equal(new Set(avoidPlaces).size, 160);
  const rows = searchWarmupRows({
    renderer,
    search,
    examples: 400,
    batchSize: 4,
    toolShare: 0.9,
    decisionShare: 0.05,
    seed: 0,
    k: 1,
    maxChars: 200,
    avoidPlaces,
  });
  const shipped = new Set(avoidPlaces);
  const places = new Set<string>();
  let searching = 0;
  for (const row of rows) {
    const rest = row.messages.slice(-3);
    const place = /of (\w+ \w+)\?/.exec(String(row.messages.find((m) => m.role === "user")!.content))![1]!;
    assert.ok(!shipped.has(place) && !shipped.has(place.split(" ").reverse().join(" ")), `${place} is a shipped place`);
    places.add(place);
    if (rest.length === 3 && rest[1]!.role === "tool") {
      searching += 1;
      const answer = /^Answer: (\w+ \w+)$/.exec(String(rest[2]!.content))![1]!;
      assert.match(String(rest[1]!.content), new RegExp(`^\\[d\\d{3}\\] The \\w+ of ${place} is ${answer}\\.$`));
    }
  }
  assert.ok(searching > 330 && searching < 390, `${searching} of 400 search`);
  assert.ok(rows.filter((r) => r.trainDecision).length < 80, "the decision is trained in few rows");
  // 400 rows span three worlds of 60 places: the facts keep changing.
  assert.ok(places.size > 100, `${places.size} places`);
});

test("the names are word pairs tiny-chat has as single tokens, place and answer words apart, so every fact has one token layout", async () => {
  const tokenizer = await getTokenizer("tiny-chat");
  for (const w of [...PLACE_WORDS, ...VALUE_WORDS, ...SEARCH_ATTRIBUTES]) {
    assert.equal(tokenizer.encode(` ${w}`, { addSpecialTokens: false }).length, 1, `" ${w}" is one token`);
  }
  const places = new Set<string>(PLACE_WORDS);
  assert.ok(!VALUE_WORDS.some((w) => places.has(w)) && !SEARCH_ATTRIBUTES.some((a) => places.has(a) || VALUE_WORDS.includes(a)));
  const lengths = new Set(
    readDocuments(fixtureDataPath("search_corpus.jsonl")).map((d) => tokenizer.encode(`[${d.id}] ${d.text}`, { addSpecialTokens: false }).length),
  );
  assert.equal(lengths.size, 1, `result lines of ${[...lengths].join(", ")} tokens`);
  assert.throws(() => generateSearchFacts(1, 436), /436 places \(0 avoided\) need more words names than the 435 places/);
});

test("search_index=embedding: play searches the tiny-embed index; without embedding_model it is refused", async () => {
  const args = ["log_path=/tmp/unused-search-play", "search_index=embedding", "embedding_model=tiny-embed", "search_k=2"];
  const { session } = await openPlay(recipes, "search_tool", args);
  const question = /What is the (\w+) of (\w+ \w+)\?/.exec(session.observationText())!;
  const query = `${question[1]} of ${question[2]}`;
  const step = await session.act(`<call>search ${query}</call>`);
  const documents = readDocuments(fixtureDataPath("search_corpus.jsonl"));
  const index = await EmbeddingIndex.build(documents, await transformersEmbedder("tiny-embed", { allowDownload: false }));
  const expected = (await index.search(query, 2)).map((d) => `[${d.id}] ${d.text}`).join("\n");
  assert.ok(step.newObservationText.includes(expected), `${step.newObservationText} has ${expected}`);
  await assert.rejects(
    openPlay(recipes, "search_tool", ["log_path=/tmp/unused-search-play", "search_index=embedding"]),
    /search_index=embedding needs embedding_model/,
  );
});
