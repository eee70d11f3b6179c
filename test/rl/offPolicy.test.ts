import { test } from "node:test";
import assert from "node:assert/strict";
import { AsyncQueue } from "../../src/rl/asyncQueue.ts";
import { OffPolicyBatcher, type StampedGroup } from "../../src/rl/offPolicy.ts";
import { TrajectoryGroup, type EnvGroupBuilder } from "../../src/rl/types.ts";
import { FnGroupBuilder, OneTurnEnv } from "./fakes.ts";

function stamped(step: number): StampedGroup {
  return {
    group: new TrajectoryGroup([], [], []),
    builder: new FnGroupBuilder(() => new OneTurnEnv([1], () => 0), 1, [`from-${step}`]),
    samplingClientStep: step,
    samplingTimeSeconds: 0.1,
  };
}

test("fresh groups are batched; stale ones are requeued while data remains", () => {
  const requeued: EnvGroupBuilder[] = [];
  let exhausted = false;
  const b = new OffPolicyBatcher({ maxStepsOffPolicy: 1, groupsPerBatch: 2, requeue: (x) => requeued.push(x), dataExhausted: () => exhausted });
  assert.equal(b.offer(stamped(3), 3), "accepted");
  assert.equal(b.offer(stamped(2), 3), "accepted", "one step behind is within max_steps_off_policy=1");
  const stale = stamped(1);
  assert.equal(b.offer(stale, 3), "requeued", "two steps behind is too stale");
  assert.deepEqual(requeued, [stale.builder]);
  const batch = b.takeBatch();
  assert.ok(batch !== null);
  assert.deepEqual(
    batch.map((g) => g.samplingClientStep),
    [3, 2],
  );
  assert.equal(b.takeBatch(), null);
  exhausted = true;
  assert.equal(b.offer(stamped(0), 3), "discarded", "nothing would resample it once the data is exhausted");
  assert.equal(requeued.length, 1);
  assert.deepEqual(b.counts, { accepted: 2, requeued: 1, discarded: 1 });
});

test("max_steps_off_policy=0 keeps only groups from the current sampler", () => {
  const b = new OffPolicyBatcher({ maxStepsOffPolicy: 0, groupsPerBatch: 1, requeue: () => {}, dataExhausted: () => false });
  assert.equal(b.screen(stamped(5), 5), "accepted");
  assert.equal(b.screen(stamped(4), 5), "requeued");
  assert.equal(b.size, 0, "screen alone keeps nothing");
  assert.throws(() => new OffPolicyBatcher({ maxStepsOffPolicy: 0, groupsPerBatch: 0, requeue: () => {}, dataExhausted: () => false }), /groups_per_batch/);
});

test("AsyncQueue: FIFO, bounded put waits for a get, close releases blocked puts", async () => {
  const q = new AsyncQueue<number>(1);
  await q.put(1);
  let secondDone = false;
  const second = q.put(2).then(() => (secondDone = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(secondDone, false, "the queue is full");
  assert.equal(await q.get(), 1);
  await second;
  assert.equal(await q.get(), 2);
  const waiting = q.get();
  q.putNowait(3);
  assert.equal(await waiting, 3);
  await q.put(4);
  const blocked = q.put(5);
  q.close();
  await blocked;
  assert.equal(q.size, 1, "the blocked item was dropped");
  assert.equal(await q.get(), 4);
});
