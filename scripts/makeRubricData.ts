// Writes the rubric recipe's shipped demo data from src/data/synthetic/rubricAddition.ts:
// fixtures/data/rubric_addition_train.jsonl and rubric_addition_test.jsonl, in the cookbook's
// format ({"convo": [...], "rubric_items": [{"rubric_str", ...}]}).
//
//   npx tsx scripts/makeRubricData.ts [--out <fixtures/data dir>]
import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { generateRubricAddition } from "../src/data/synthetic/rubricAddition.ts";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const out = args[0] === "--out" && args[1] !== undefined ? path.resolve(args[1]) : path.resolve(here, "..", "fixtures", "data");
const all = generateRubricAddition(7, 560);
for (const [name, rows] of [
  ["rubric_addition_train.jsonl", all.slice(0, 500)],
  ["rubric_addition_test.jsonl", all.slice(500)],
] as const) {
  const file = path.join(out, name);
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  console.log(`${file}: ${rows.length} datapoints`);
}
