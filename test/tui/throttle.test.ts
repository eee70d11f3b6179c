import assert from "node:assert/strict";
import { test } from "node:test";
import { Throttle } from "../../src/tui/services/throttle.ts";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test("the first value goes out at once, a burst collapses to its newest value", async () => {
  const got: number[] = [];
  const t = new Throttle<number>(80, (v) => got.push(v));
  t.push(1);
  assert.deepEqual(got, [1]);
  for (let i = 2; i <= 20; i++) t.push(i);
  assert.deepEqual(got, [1], "held within the interval");
  await sleep(200);
  assert.deepEqual(got, [1, 20]);
});

test("deliveries are at least the interval apart", async () => {
  const at: number[] = [];
  const t = new Throttle<number>(60, () => at.push(performance.now()));
  const end = performance.now() + 400;
  while (performance.now() < end) {
    t.push(0);
    await sleep(5);
  }
  await sleep(100);
  assert.ok(at.length >= 3 && at.length <= 8, `deliveries: ${at.length}`);
  for (let i = 1; i < at.length; i++) assert.ok(at[i] - at[i - 1] >= 55, `gap ${at[i] - at[i - 1]} ms`);
});

test("cancel drops the held value", async () => {
  const got: number[] = [];
  const t = new Throttle<number>(50, (v) => got.push(v));
  t.push(1);
  t.push(2);
  t.cancel();
  await sleep(100);
  assert.deepEqual(got, [1]);
});
