// Counter-based uniform numbers for sampling (docs/numerics.md#sampling-order-of-operations, docs/numerics.md#determinism-and-seeds): the draw for step t of
// a sequence is a pure function of (its seed, t), so it cannot depend on batching, scheduling or
// what other requests run at the same time.
//
// Seeding rule: sample i (0-based) of a request with SamplingParams.seed = s uses sequence seed
// s + i (as SkyRL-tx does), so sample i of a seeded request reproduces sample 0 of a request with
// seed s + i. Without a seed, the engine draws a random s per request.

import { fmix32 as mix32 } from "../../random/seeds.ts";

/** Uniform in [0, 1) with 53 random bits, keyed by a (non-negative safe integer) seed and a step. */
export function uniformAt(seed: number, step: number): number {
  const lo = seed >>> 0;
  const hi = Math.floor(seed / 4294967296) >>> 0;
  let h = mix32(lo ^ 0x9e3779b9);
  h = mix32(h ^ Math.imul(hi, 0x27d4eb2f) ^ 0x165667b1);
  h = mix32(h ^ Math.imul(step >>> 0, 0x2545f491));
  const a = mix32(h ^ 0x68e31da4) >>> 5; // 27 bits
  const b = mix32(h ^ 0xb5297a4d) >>> 6; // 26 bits
  return (a * 67108864 + b) / 9007199254740992;
}

/** The sequence seed of sample `index` of a request seeded with `seed`. */
export function sampleSeed(seed: number, index: number): number {
  return seed + index;
}
