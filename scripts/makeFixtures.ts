// Regenerates the synthetic fixtures: fixtures/data/*.jsonl and the tiny-chat tokenizer files.
// The model weights themselves come from `scripts/pretrainTiny/index.ts` (see fixtures/models/README.md).
//
//   npx tsx scripts/makeFixtures.ts [--out <fixtures dir>] [--only data|tokenizer]
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { writeFixtureData } from "../src/data/synthetic/fixtureFiles.ts";
import { trainTinyChatTokenizer } from "../src/tokenizerTraining/tinyChat.ts";
import { writeHfTokenizer } from "../src/tokenizerTraining/hfFiles.ts";

const TINY_CHAT_MAX_LENGTH = 512;

function parseArgs(argv: string[]): { out: string; only: "data" | "tokenizer" | null } {
  const here = path.dirname(fileURLToPath(import.meta.url));
  let out = path.resolve(here, "..", "fixtures");
  let only: "data" | "tokenizer" | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--out" && argv[i + 1]) out = path.resolve(argv[++i]);
    else if (a === "--only" && (argv[i + 1] === "data" || argv[i + 1] === "tokenizer")) only = argv[++i] as "data" | "tokenizer";
    else throw new Error(`make_fixtures: unknown argument ${JSON.stringify(a)} (expected --out <dir> or --only data|tokenizer)`);
  }
  return { out, only };
}

const { out, only } = parseArgs(process.argv.slice(2));
if (only !== "tokenizer") {
  const files = writeFixtureData(path.join(out, "data"));
  for (const f of files) console.log(`fixtures/data/${f.name}: ${f.lines.length} lines — ${f.description}`);
}
if (only !== "data") {
  const dir = path.join(out, "models", "tiny-chat");
  const bpe = trainTinyChatTokenizer();
  writeHfTokenizer(dir, bpe, { modelMaxLength: TINY_CHAT_MAX_LENGTH });
  const size = fs.statSync(path.join(dir, "tokenizer.json")).size;
  console.log(`fixtures/models/tiny-chat/tokenizer.json: vocab ${bpe.vocab.size}, ${bpe.merges.length} merges, ${size} bytes`);
}
