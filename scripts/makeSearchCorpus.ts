// Writes the search_tool recipe's shipped data from src/data/synthetic/searchCorpus.ts:
// fixtures/data/search_corpus.jsonl (one {"id","title","text"} document per fact, the BM25 index's
// input), search_qa_train.jsonl and search_qa_test.jsonl (questions with their gold answers).
//
//   npx tsx scripts/makeSearchCorpus.ts [--out <fixtures/data dir>]
import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { generateSearchWorld } from "../src/data/synthetic/searchCorpus.ts";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const out = args[0] === "--out" && args[1] !== undefined ? path.resolve(args[1]) : path.resolve(here, "..", "fixtures", "data");
const world = generateSearchWorld(20_261_126, 160, 0.15);
for (const [name, rows] of [
  ["search_corpus.jsonl", world.documents],
  ["search_qa_train.jsonl", world.train],
  ["search_qa_test.jsonl", world.test],
] as const) {
  const file = path.join(out, name);
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  console.log(`${file}: ${rows.length} rows`);
}
