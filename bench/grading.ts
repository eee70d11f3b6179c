// `npm run bench:grading`: answers graded per second over the labelled corpus
// (fixtures/grading/corpus.jsonl), all paths mixed, over its symbolic cases alone (the
// answers that need mathjs: radicals, π, polynomials, complex numbers, tuples), and over the
// independent corpus (fixtures/grading/independent-*.jsonl). The first pass
// loads mathjs and is not timed. "cold" clears the normalisation and compiled-expression caches
// before every round, so each answer and reference is normalised, parsed and compiled afresh;
// "warm" keeps them, as a training run does when a group's samples repeat an answer and a
// reference is graded many times. Rates per second
// of wall time depend on what else the machine runs; per CPU-second they do not.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { clearGradingCaches, grade } from "../src/grading/index.ts";

interface Row {
  mode: "boxed" | "lenient";
  category: string;
  response: string;
  reference: string;
}

function readCorpus(name: string): Row[] {
  return readFileSync(fileURLToPath(new URL(`../fixtures/grading/${name}`, import.meta.url)), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Row);
}
const rows = readCorpus("corpus.jsonl");
const independent = [...readCorpus("independent-boxed.jsonl"), ...readCorpus("independent-lenient.jsonl")];
const SYMBOLIC = new Set(["radicals", "pi", "polynomials", "complex", "mixed_numbers", "tuples", "intervals", "matrices"]);

/** Answers per second of wall time and per second of this process's CPU time (the machine may be shared). */
function rate(set: readonly Row[], cold: boolean, minMs: number): { wall: number; cpu: number } {
  let n = 0;
  let busyMs = 0;
  let cpuUs = 0;
  const start = performance.now();
  while (performance.now() - start < minMs) {
    if (cold) clearGradingCaches();
    const t = performance.now();
    const c = process.cpuUsage();
    for (const r of set) grade(r.response, r.reference, { mode: r.mode });
    const used = process.cpuUsage(c);
    cpuUs += used.user + used.system;
    busyMs += performance.now() - t;
    n += set.length;
  }
  return { wall: n / (busyMs / 1000), cpu: n / (cpuUs / 1e6) };
}

for (const r of [...rows, ...independent]) grade(r.response, r.reference, { mode: r.mode });
const symbolic = rows.filter((r) => SYMBOLIC.has(r.category));
for (const [name, set] of [
  ["corpus, all paths", rows],
  ["symbolic categories", symbolic],
  ["independent corpus", independent],
] as const) {
  const cold = rate(set, true, 2000);
  const warm = rate(set, false, 2000);
  console.log(
    `grading ${name} (${set.length} rows): cold ${Math.round(cold.wall)} answers/s (${Math.round(cold.cpu)} per CPU-second), warm ${Math.round(warm.wall)} answers/s (${Math.round(warm.cpu)} per CPU-second)`,
  );
}
