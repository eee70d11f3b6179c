// Regenerates the synthetic comparison sets in fixtures/data/prefs_<set>_{train,test}.jsonl
// (cookbook comparison rows; see src/preference/synthetic.ts for what each set prefers).
//
//   npx tsx scripts/makeComparisonFixtures.ts [--out <fixtures/data dir>]
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Prng } from "../src/data/synthetic/prng.ts";
import { comparisonToJsonLine } from "../src/preference/comparisonFile.ts";
import { SYNTHETIC_SETS } from "../src/preference/datasets.ts";
import { generateComparisons } from "../src/preference/synthetic.ts";

const SEED = 20261123;
const COUNTS = { train: 2000, test: 200 } as const;

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
if (args.length > 0 && !(args.length === 2 && args[0] === "--out")) {
  throw new Error(`makeComparisonFixtures: unknown arguments ${JSON.stringify(args)} (expected --out <dir>)`);
}
const out = args.length === 2 ? path.resolve(args[1]!) : path.resolve(here, "..", "fixtures", "data");
fs.mkdirSync(out, { recursive: true });
const root = new Prng(SEED);
for (const set of SYNTHETIC_SETS) {
  for (const split of ["train", "test"] as const) {
    const rows = generateComparisons(root.fork(), set, COUNTS[split], split).map(comparisonToJsonLine);
    const file = path.join(out, `prefs_${set}_${split}.jsonl`);
    fs.writeFileSync(file, rows.join("\n") + "\n");
    console.log(`${path.relative(process.cwd(), file)}: ${rows.length} comparisons`);
  }
}
