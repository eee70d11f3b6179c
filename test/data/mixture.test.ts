// The mixture schedules: weights normalised (or sizes when none are given), rows interleaved with
// Hugging Face's three stopping rules, RL groups drawn by weight with every group of a source used
// once per pass; all a pure function of the seed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { MixtureError, interleaveRows, mixtureProbabilities, scheduleGroups } from "../../src/data/mixture.ts";

test("probabilities: explicit weights normalised, none = by size, a mix of the two or a bad weight refused", () => {
  assert.deepEqual(mixtureProbabilities([3, 1], [10, 10], ["a", "b"]), [0.75, 0.25]);
  assert.deepEqual(mixtureProbabilities([null, null], [30, 10], ["a", "b"]), [0.75, 0.25]);
  assert.throws(() => mixtureProbabilities([1, null], [1, 1], ["a", "b"]), /give every source a weight or none \(sources without one: b\)/);
  assert.throws(
    () => mixtureProbabilities([1, 0], [1, 1], ["a", "b"]),
    (e: unknown) => e instanceof MixtureError && /source b: weight must be a positive/.test(e.message),
  );
});

test("interleaved rows follow the weights and take each source's rows in order", () => {
  const rows = interleaveRows([1000, 1000], [0.8, 0.2], 7, "first_exhausted");
  const first = rows.filter(([s]) => s === 0).map(([, r]) => r);
  assert.deepEqual(
    first,
    Array.from({ length: first.length }, (_, i) => i),
    "rows of a source in order",
  );
  assert.equal(first.length, 1000, "stops when source 0 runs out");
  const share = first.length / rows.length;
  assert.ok(share > 0.76 && share < 0.84, `share of source 0: ${share}`);
  assert.deepEqual(interleaveRows([1000, 1000], [0.8, 0.2], 7, "first_exhausted"), rows, "same seed, same rows");
  assert.notDeepEqual(interleaveRows([1000, 1000], [0.8, 0.2], 8, "first_exhausted"), rows);
});

test("stopping rules: first_exhausted stops early, all_exhausted repeats a small source, without replacement uses every row once", () => {
  const sizes = [5, 200];
  const p = [0.5, 0.5];
  const first = interleaveRows(sizes, p, 1, "first_exhausted");
  assert.equal(first.filter(([s]) => s === 0).length, 5);
  assert.ok(first.filter(([s]) => s === 1).length < 200);

  const all = interleaveRows(sizes, p, 1, "all_exhausted");
  const big = all.filter(([s]) => s === 1).map(([, r]) => r);
  assert.deepEqual(
    big,
    Array.from({ length: 200 }, (_, i) => i),
    "the big source is used up exactly once, then it stops",
  );
  const small = all.filter(([s]) => s === 0).map(([, r]) => r);
  assert.ok(small.length > 100, "the small source repeats about as often as the big one is drawn");
  assert.ok(small.every((r) => r < 5));

  const once = interleaveRows(sizes, p, 1, "all_exhausted_without_replacement");
  assert.equal(once.length, 205);
  assert.equal(new Set(once.map(([s, r]) => `${s}:${r}`)).size, 205);
});

test("RL schedule: batches of groupsPerBatch slots by weight, each source's groups once per pass in shuffled order", () => {
  const schedule = scheduleGroups([12, 400], [0.5, 0.5], 8, 30, 3);
  assert.equal(schedule.length, 30);
  assert.ok(schedule.every((b) => b.length === 8));
  const small = schedule
    .flat()
    .filter(([s]) => s === 0)
    .map(([, g]) => g);
  const share = small.length / (30 * 8);
  assert.ok(share > 0.4 && share < 0.6, `share of source 0: ${share}`);
  // Every full pass of 12 uses each group exactly once, in an order that is not the identity.
  const passes = Math.floor(small.length / 12);
  assert.ok(passes >= 2);
  for (let p = 0; p < passes; p++)
    assert.deepEqual(
      [...small.slice(p * 12, (p + 1) * 12)].sort((a, b) => a - b),
      Array.from({ length: 12 }, (_, i) => i),
    );
  assert.notDeepEqual(
    small.slice(0, 12),
    Array.from({ length: 12 }, (_, i) => i),
  );
  assert.notDeepEqual(small.slice(0, 12), small.slice(12, 24), "a new order each pass");
  assert.deepEqual(scheduleGroups([12, 400], [0.5, 0.5], 8, 30, 3), schedule);
  // Without a batch count: until the first source would be used up (12 / (0.5 × 8) = 3 batches).
  assert.equal(scheduleGroups([12, 400], [0.5, 0.5], 8, null, 3).length, 3);
});
