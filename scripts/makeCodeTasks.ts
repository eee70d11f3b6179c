// Writes the shipped code_rl tasks: fixtures/data/code_tasks_train.jsonl (240 tasks) and
// code_tasks_test.jsonl (48 tasks, other hidden tests), from src/data/synthetic/codeTasks.ts.
//
//   npx tsx scripts/makeCodeTasks.ts [--out <fixtures/data dir>]
import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { generateCodeTasks } from "../src/data/synthetic/codeTasks.ts";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const out = args[0] === "--out" && args[1] !== undefined ? path.resolve(args[1]) : path.resolve(here, "..", "fixtures", "data");
for (const [name, seed, count, prefix] of [
  ["code_tasks_train.jsonl", 1, 240, "train"],
  ["code_tasks_test.jsonl", 2, 48, "test"],
] as const) {
  const tasks = generateCodeTasks(seed, count, 5, `${prefix}-`);
  const file = path.join(out, name);
  writeFileSync(file, tasks.map((t) => JSON.stringify(t)).join("\n") + "\n");
  console.log(`${file}: ${tasks.length} tasks`);
}
