// Seeded shuffling: dataset order must be a pure function of the seed, so a resumed run sees the
// same batches as the run it continues.

import { mulberry32 } from "../random/seeds.ts";

/** A permutation of 0..n-1 (Fisher–Yates) determined by `seed`. */
export function seededPermutation(n: number, seed: number): number[] {
  if (!Number.isInteger(seed)) throw new Error(`shuffle seed must be an integer, got ${seed}`);
  const rand = mulberry32(seed);
  const out = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    const t = out[i]!;
    out[i] = out[j]!;
    out[j] = t;
  }
  return out;
}

export function seededShuffle<T>(items: readonly T[], seed: number): T[] {
  return seededPermutation(items.length, seed).map((i) => items[i]!);
}
