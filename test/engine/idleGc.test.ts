import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { IdleCollector } from "../../src/engine/worker/idleGc.ts";

test("a release is followed by one full collection once the worker is quiet", async () => {
  let collections = 0;
  const collector = new IdleCollector(30, () => collections++);
  collector.released();
  collector.released();
  assert.equal(collections, 0, "not while releases are still arriving");
  await sleep(80);
  assert.equal(collections, 1, "two releases in a burst give one collection");
  assert.equal(collector.pending, false);
});

test("requests postpone a pending collection; without a release nothing is collected", async () => {
  let collections = 0;
  const collector = new IdleCollector(40, () => collections++);
  collector.busy();
  await sleep(60);
  assert.equal(collections, 0, "busy alone never collects");
  collector.released();
  for (let i = 0; i < 4; i++) {
    await sleep(20);
    collector.busy();
  }
  assert.equal(collections, 0, "a steady stream of requests keeps postponing it");
  await sleep(80);
  assert.equal(collections, 1);
});

test("the default collector can reach V8's gc in this process", async () => {
  const before = process.memoryUsage().heapUsed;
  let garbage: number[][] | undefined = Array.from({ length: 200 }, () => Array.from({ length: 1000 }, (_, i) => i));
  assert.ok(garbage.length > 0);
  garbage = undefined;
  const collector = new IdleCollector(1);
  collector.released();
  assert.equal(collector.pending, true, "gc must be available (exposed at run time), else a release would not schedule anything");
  await sleep(30);
  assert.ok(process.memoryUsage().heapUsed <= before + 8 * 1024 * 1024, "heap is back near where it started after the collection");
});
