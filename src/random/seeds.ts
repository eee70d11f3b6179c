// Every seed mixer and small generator of the project, in one place (docs/numerics.md#determinism-and-seeds).
// They are pure 32-bit integer arithmetic, so a seed gives the same numbers on every platform;
// changing any of them changes sampled tokens, initial weights and data orders, which tests pin.

/** Weyl increment of splitmix32 (2^32 / golden ratio). */
const GOLDEN_GAMMA = 0x9e3779b9;

/** MurmurHash3's 32-bit finaliser: every input bit moves every output bit. */
export function fmix32(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** One step of splitmix32: advances `state.s` and returns a uniform 32-bit unsigned integer. */
export function splitmix32(state: { s: number }): number {
  state.s = (state.s + GOLDEN_GAMMA) | 0;
  return fmix32(state.s);
}

/** FNV-1a over a string's UTF-16 code units, continuing from `h`. */
export function fnv1a(text: string, h = 0x811c9dc5): number {
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Mixes integers into a 31-bit seed (a group's seed from the run's seed, its batch and index, ...). */
export function mixSeed(...parts: number[]): number {
  let h = GOLDEN_GAMMA;
  for (const part of parts) {
    h = Math.imul(h ^ (part | 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 1;
}

/** A 31-bit seed from a run's seed and a string id (an eval example's id). */
export function stringSeed(seed: number, id: string): number {
  let h = Math.imul((seed | 0) ^ GOLDEN_GAMMA, 0x85ebca6b) ^ fnv1a(id);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 1;
}

/** mulberry32: a small generator of uniform numbers in [0, 1), plenty for permuting indices. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
