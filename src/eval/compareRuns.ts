// Two eval runs example by example (`cookbook eval --compare A B`): for every benchmark both ran,
// the examples both finished, matched by example id, each scored as its fraction of correct
// samples; an example whose score rose from A to B is an improvement, one that fell a
// regression. Headline scores hide these swaps; this shows which examples moved.
import { UsageError } from "../config/errors.ts";
import { type EvalStore, finishedExamples, type TrajectoryRecord } from "./store.ts";

export interface ExampleChange {
  exampleId: string;
  index: number;
  reference: string;
  /** Fraction of correct samples in A and in B. */
  before: number;
  after: number;
  /** The first sample's extracted answer in A and in B. */
  beforeAnswer: string | null;
  afterAnswer: string | null;
}

export interface BenchmarkRunComparison {
  benchmark: string;
  /** Examples finished in both runs. */
  shared: number;
  /** Mean per-example score over the shared examples, in A and in B. */
  scoreA: number;
  scoreB: number;
  improvements: ExampleChange[];
  regressions: ExampleChange[];
  /** Examples finished in only one of the runs. */
  onlyA: number;
  onlyB: number;
}

export interface RunComparison {
  runA: string;
  runB: string;
  modelA: string;
  modelB: string;
  benchmarks: BenchmarkRunComparison[];
  /** Benchmarks only one run has. */
  onlyA: string[];
  onlyB: string[];
}

/** A run id, or a prefix of exactly one run id in the store; the error names the candidates. */
export function resolveEvalRunId(store: EvalStore, idOrPrefix: string): string {
  const ids = [...new Set(store.listIndex().map((r) => r.run_id))];
  if (ids.includes(idOrPrefix)) return idOrPrefix;
  const matches = ids.filter((id) => id.startsWith(idOrPrefix));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) throw new UsageError(`no eval run ${JSON.stringify(idOrPrefix)} in ${store.root} (runs: ${ids.slice(-8).join(", ") || "none"})`);
  throw new UsageError(`eval run prefix ${JSON.stringify(idOrPrefix)} matches ${matches.length} runs: ${matches.join(", ")}`);
}

function score(t: TrajectoryRecord): number {
  if (t.samples.length === 0) return 0;
  return t.samples.filter((s) => s.correct).length / t.samples.length;
}

function benchmarksOf(store: EvalStore, runId: string): string[] {
  const rec = store.listIndex().find((r) => r.run_id === runId);
  return rec?.benchmarks ?? [];
}

function compareBenchmark(store: EvalStore, runA: string, runB: string, benchmark: string): BenchmarkRunComparison {
  const a = finishedExamples(store.readTrajectories(runA, benchmark));
  const b = finishedExamples(store.readTrajectories(runB, benchmark));
  const improvements: ExampleChange[] = [];
  const regressions: ExampleChange[] = [];
  let shared = 0;
  let sumA = 0;
  let sumB = 0;
  for (const [id, ta] of a) {
    const tb = b.get(id);
    if (tb === undefined) continue;
    shared++;
    const before = score(ta);
    const after = score(tb);
    sumA += before;
    sumB += after;
    if (before === after) continue;
    const change: ExampleChange = {
      exampleId: id,
      index: ta.index,
      reference: ta.reference,
      before,
      after,
      beforeAnswer: ta.samples[0]?.extracted ?? null,
      afterAnswer: tb.samples[0]?.extracted ?? null,
    };
    (after > before ? improvements : regressions).push(change);
  }
  const byIndex = (x: ExampleChange, y: ExampleChange): number => x.index - y.index;
  return {
    benchmark,
    shared,
    scoreA: shared === 0 ? 0 : sumA / shared,
    scoreB: shared === 0 ? 0 : sumB / shared,
    improvements: improvements.sort(byIndex),
    regressions: regressions.sort(byIndex),
    onlyA: [...a.keys()].filter((id) => !b.has(id)).length,
    onlyB: [...b.keys()].filter((id) => !a.has(id)).length,
  };
}

/** Compares two eval runs of a store (ids or unique prefixes). */
export function compareEvalRuns(store: EvalStore, a: string, b: string): RunComparison {
  const runA = resolveEvalRunId(store, a);
  const runB = resolveEvalRunId(store, b);
  const benchA = benchmarksOf(store, runA);
  const benchB = benchmarksOf(store, runB);
  const label = (id: string): string => {
    const m = store.readMetadata(id);
    return m === null ? id : (m.model_path ?? m.model);
  };
  return {
    runA,
    runB,
    modelA: label(runA),
    modelB: label(runB),
    benchmarks: benchA.filter((x) => benchB.includes(x)).map((x) => compareBenchmark(store, runA, runB, x)),
    onlyA: benchA.filter((x) => !benchB.includes(x)),
    onlyB: benchB.filter((x) => !benchA.includes(x)),
  };
}

const pct = (v: number): string => `${(100 * v).toFixed(1)}%`;

/** The comparison as text: per benchmark the scores, counts and up to `limit` changed examples each way. */
export function formatRunComparison(c: RunComparison, limit = 20): string {
  const lines = [`A = ${c.runA} (${c.modelA})`, `B = ${c.runB} (${c.modelB})`];
  for (const b of c.benchmarks) {
    lines.push(
      "",
      `${b.benchmark}: ${pct(b.scoreA)} → ${pct(b.scoreB)} on ${b.shared} shared examples; ${b.improvements.length} improved, ${b.regressions.length} regressed`,
    );
    if (b.onlyA + b.onlyB > 0) lines.push(`  not compared: ${b.onlyA} finished only in A, ${b.onlyB} only in B`);
    const show = (title: string, list: readonly ExampleChange[]): void => {
      if (list.length === 0) return;
      lines.push(`  ${title}:`);
      for (const e of list.slice(0, limit)) {
        lines.push(
          `    ${e.exampleId}  reference ${JSON.stringify(e.reference)}  A ${pct(e.before)} ${JSON.stringify(e.beforeAnswer)} → B ${pct(e.after)} ${JSON.stringify(e.afterAnswer)}`,
        );
      }
      if (list.length > limit) lines.push(`    … ${list.length - limit} more (limit=${limit})`);
    };
    show("regressions (right in A, worse in B)", b.regressions);
    show("improvements (better in B)", b.improvements);
  }
  if (c.benchmarks.length === 0) lines.push("", "no benchmark in common");
  if (c.onlyA.length > 0) lines.push(`only in A: ${c.onlyA.join(", ")}`);
  if (c.onlyB.length > 0) lines.push(`only in B: ${c.onlyB.join(", ")}`);
  return lines.join("\n");
}
