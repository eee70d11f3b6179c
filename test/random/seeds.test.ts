// The project's seed mixers and generators live in src/random/seeds.ts. Their outputs are pinned
// here (values from the implementations each module had before they were gathered in one place):
// a change would silently move every initial weight, sampled token and data order.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Prng } from "../../src/data/synthetic/prng.ts";
import { seededPermutation } from "../../src/data/shuffle.ts";
import { RandomStream } from "../../src/engine/model/rng.ts";
import { uniformAt } from "../../src/engine/sampling/rng.ts";
import { exampleSeed } from "../../src/eval/runner.ts";
import { fmix32, fnv1a, mixSeed, splitmix32 } from "../../src/random/seeds.ts";

test("every generator and mixer gives the numbers it gave before the merge", () => {
  const stream = new RandomStream(2 ** 33 + 7, "layers.0.q_proj.lora_A");
  assert.deepEqual([stream.nextUint32(), stream.nextUint32(), stream.nextUint32()], [2131945684, 2176607104, 1520676914]);
  assert.deepEqual([uniformAt(0, 0), uniformAt(123456789012, 7)], [0.34263328749511823, 0.4256083444048566]);
  const prng = new Prng(4294967295 + 12);
  assert.deepEqual([prng.nextUint32(), prng.nextUint32()], [1958489464, 663632455]);
  assert.deepEqual(seededPermutation(10, 42), [0, 7, 3, 5, 2, 1, 8, 9, 4, 6]);
  assert.deepEqual([exampleSeed(0, "gsm8k/17"), exampleSeed(-5, "x")], [1917004947, 1952638455]);
  assert.deepEqual([mixSeed(0), mixSeed(3, 1, 2), mixSeed(-1, 2 ** 40)], [246504805, 290901729, 1918641352]);
});

test("the building blocks: splitmix32 is fmix32 of a Weyl sequence, FNV-1a matches its published vectors", () => {
  const state = { s: 0 };
  assert.equal(splitmix32(state), fmix32(0x9e3779b9 | 0));
  assert.equal(splitmix32(state), fmix32((2 * 0x9e3779b9) | 0));
  // FNV-1a 32-bit test vectors: "" → 0x811c9dc5, "a" → 0xe40c292c, "foobar" → 0xbf9cf968.
  assert.deepEqual([fnv1a(""), fnv1a("a"), fnv1a("foobar")], [0x811c9dc5, 0xe40c292c, 0xbf9cf968]);
  assert.notEqual(mixSeed(1, 2), mixSeed(2, 1), "order matters");
  assert.ok(mixSeed(7, 9) >= 0 && mixSeed(7, 9) < 2 ** 31, "31-bit seeds");
});
