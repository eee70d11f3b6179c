// `npm run bench:grading`: answers graded per second over the labelled corpus
// (fixtures/grading/corpus.jsonl), all paths mixed, and over its symbolic cases alone (the
// answers that need mathjs: radicals, π, polynomials, complex numbers, tuples). The first pass
// loads mathjs and is not timed. "cold" clears the compiled-expression cache before every round,
// so each symbolic answer is parsed and compiled afresh; "warm" keeps it, as a training run does
// when a group's samples repeat an answer and a reference is graded many times.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { grade } from "../src/grading/index.ts";
import { clearSymbolicCache } from "../src/grading/symbolic.ts";

interface Row {
  mode: "boxed" | "lenient";
  category: string;
  response: string;
  reference: string;
}

const rows: Row[] = readFileSync(fileURLToPath(new URL("../fixtures/grading/corpus.jsonl", import.meta.url)), "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l) as Row);
const SYMBOLIC = new Set(["radicals", "pi", "polynomials", "complex", "mixed_numbers", "tuples", "intervals", "matrices"]);

function rate(set: readonly Row[], cold: boolean, minMs: number): number {
  let n = 0;
  let busyMs = 0;
  const start = performance.now();
  while (performance.now() - start < minMs) {
    if (cold) clearSymbolicCache();
    const t = performance.now();
    for (const r of set) grade(r.response, r.reference, { mode: r.mode });
    busyMs += performance.now() - t;
    n += set.length;
  }
  return n / (busyMs / 1000);
}

for (const r of rows) grade(r.response, r.reference, { mode: r.mode });
const symbolic = rows.filter((r) => SYMBOLIC.has(r.category));
for (const [name, set] of [["corpus, all paths", rows], ["symbolic categories", symbolic]] as const) {
  const cold = rate(set, true, 2000);
  const warm = rate(set, false, 2000);
  console.log(`grading ${name} (${set.length} rows): ${Math.round(cold)} answers/s cold, ${Math.round(warm)} answers/s warm`);
}
