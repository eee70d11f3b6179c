import assert from "node:assert/strict";
import { mock, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { IdleCollector } from "../../src/engine/worker/idleGc.ts";

// Fake timers: "quiet for a moment" is about time between calls, which a loaded machine stretches.
test("a release is followed by one full collection once the worker is quiet", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    let collections = 0;
    const collector = new IdleCollector(30, () => collections++);
    collector.released();
    mock.timers.tick(20);
    collector.released();
    mock.timers.tick(20);
    assert.equal(collections, 0, "not while releases are still arriving");
    mock.timers.tick(20);
    assert.equal(collections, 1, "two releases in a burst give one collection");
    assert.equal(collector.pending, false);
  } finally {
    mock.timers.reset();
  }
});

test("requests postpone a pending collection; without a release nothing is collected", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    let collections = 0;
    const collector = new IdleCollector(40, () => collections++);
    collector.busy();
    mock.timers.tick(60);
    assert.equal(collections, 0, "busy alone never collects");
    collector.released();
    for (let i = 0; i < 4; i++) {
      mock.timers.tick(30);
      collector.busy();
    }
    assert.equal(collections, 0, "a steady stream of requests keeps postponing it");
    mock.timers.tick(39);
    assert.equal(collections, 0);
    mock.timers.tick(1);
    assert.equal(collections, 1);
  } finally {
    mock.timers.reset();
  }
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
