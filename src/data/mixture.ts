// Weighted mixtures of datasets: which source each slot of the mixed stream comes from, as a pure
// function of the seed (a resumed run sees the same mixture). Two schedules, as the cookbook has
// two: rows for supervised data (Hugging Face `interleave_datasets`: each row drawn from a source
// picked by probability, taking that source's next row), and groups for RL (each group slot of each
// batch picked by probability, every source visited in a fresh shuffled order per pass).
import { mulberry32 } from "../random/seeds.ts";
import { seededPermutation } from "./shuffle.ts";

/** When the supervised mixture stops: as Hugging Face's `interleave_datasets` names it. */
export type StoppingStrategy = "first_exhausted" | "all_exhausted" | "all_exhausted_without_replacement";

export class MixtureError extends Error {
  override name = "MixtureError";
}

/**
 * Probabilities from weights: explicit weights normalised, or, when every weight is null, each
 * source's size (every row equally likely, as a concatenation would be).
 */
export function mixtureProbabilities(weights: readonly (number | null)[], sizes: readonly number[], names: readonly string[]): number[] {
  if (weights.length === 0) throw new MixtureError("a mixture needs at least one source");
  const given = weights.filter((w) => w !== null).length;
  if (given !== 0 && given !== weights.length) {
    throw new MixtureError(`give every source a weight or none (sources without one: ${names.filter((_, i) => weights[i] === null).join(", ")})`);
  }
  const raw = given === 0 ? sizes.map(Number) : (weights as number[]);
  raw.forEach((w, i) => {
    if (!(w > 0) || !Number.isFinite(w)) throw new MixtureError(`source ${names[i]}: weight must be a positive number, got ${w}`);
  });
  const total = raw.reduce((a, b) => a + b, 0);
  return raw.map((w) => w / total);
}

function pick(rand: () => number, probabilities: readonly number[], allowed: (i: number) => boolean): number {
  let total = 0;
  for (let i = 0; i < probabilities.length; i++) if (allowed(i)) total += probabilities[i]!;
  let u = rand() * total;
  let last = -1;
  for (let i = 0; i < probabilities.length; i++) {
    if (!allowed(i)) continue;
    last = i;
    u -= probabilities[i]!;
    if (u < 0) return i;
  }
  return last;
}

/**
 * The supervised mixture's rows as [source, row] pairs, rows of a source taken in order.
 * first_exhausted stops when a source runs out; all_exhausted restarts a spent source until every
 * source has been used up at least once (small sources repeat); all_exhausted_without_replacement
 * stops drawing from a spent source and ends when all are spent (every row exactly once).
 */
export function interleaveRows(sizes: readonly number[], probabilities: readonly number[], seed: number, strategy: StoppingStrategy): [number, number][] {
  const taken = sizes.map(() => 0);
  const out: [number, number][] = [];
  for (const source of interleaveSources(sizes, probabilities, seed, strategy)) {
    out.push([source, taken[source]! % sizes[source]!]);
    taken[source]! += 1;
  }
  return out;
}

/**
 * interleaveRows one slot at a time, as the source each slot draws from: the row is that source's
 * count of earlier draws, modulo its size (what a streamed mixture keeps instead of the pairs).
 */
export function* interleaveSources(sizes: readonly number[], probabilities: readonly number[], seed: number, strategy: StoppingStrategy): Generator<number> {
  sizes.forEach((n, i) => {
    if (n <= 0) throw new MixtureError(`source ${i} is empty`);
  });
  const rand = mulberry32(seed);
  const next = sizes.map(() => 0);
  const exhausted = sizes.map(() => false);
  for (;;) {
    const source = pick(rand, probabilities, (i) => strategy !== "all_exhausted_without_replacement" || next[i]! < sizes[i]!);
    if (source < 0) return;
    yield source;
    next[source]! += 1;
    if (next[source]! < sizes[source]!) continue;
    exhausted[source] = true;
    if (strategy === "first_exhausted") return;
    if (exhausted.every(Boolean)) return;
    if (strategy === "all_exhausted") next[source] = 0;
  }
}

/**
 * The RL mixture's schedule: `totalBatches` batches of `groupsPerBatch` [source, group] pairs. Each
 * slot's source is drawn by probability; each source hands out its groups in a shuffled order and
 * reshuffles when a pass is done. totalBatches null = until the first source would be used up.
 */
export function scheduleGroups(
  groupCounts: readonly number[],
  probabilities: readonly number[],
  groupsPerBatch: number,
  totalBatches: number | null,
  seed: number,
): [number, number][][] {
  groupCounts.forEach((n, i) => {
    if (n <= 0) throw new MixtureError(`source ${i} has no groups`);
  });
  const batches = totalBatches ?? Math.max(1, Math.min(...groupCounts.map((n, i) => Math.floor(n / (probabilities[i]! * groupsPerBatch)))));
  const rand = mulberry32(seed);
  let passes = 0;
  const order = groupCounts.map((n, i) => seededPermutation(n, seed + 7919 * (i + 1)));
  const position = groupCounts.map(() => 0);
  const schedule: [number, number][][] = [];
  for (let b = 0; b < batches; b++) {
    const batch: [number, number][] = [];
    for (let g = 0; g < groupsPerBatch; g++) {
      const source = pick(rand, probabilities, () => true);
      if (position[source]! >= groupCounts[source]!) {
        passes += 1;
        order[source] = seededPermutation(groupCounts[source]!, seed + 7919 * (source + 1) + 104729 * passes);
        position[source] = 0;
      }
      batch.push([source, order[source]![position[source]!]!]);
      position[source]! += 1;
    }
    schedule.push(batch);
  }
  return schedule;
}
