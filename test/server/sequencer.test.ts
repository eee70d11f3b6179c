import { test } from "node:test";
import assert from "node:assert/strict";
import { HttpError } from "../../src/server/http.ts";
import { MAX_SEQ_AHEAD, ModelSequencer } from "../../src/server/sequencer.ts";

let n = 0;
const id = (): string => `r${n++}`;

test("submissions run in seq_id order whatever order they arrive in, one at a time", async () => {
  const s = new ModelSequencer("model m");
  const ran: number[] = [];
  let running = 0;
  const job = (k: number) => async (): Promise<void> => {
    running++;
    assert.equal(running, 1, "two submissions overlapped");
    await new Promise((r) => setTimeout(r, 5));
    ran.push(k);
    running--;
  };
  for (const k of [3, 5, 2, 4]) s.schedule(s.accept(k, `d${k}`, id).seqId, job(k), () => assert.fail("failed"));
  await new Promise((r) => setTimeout(r, 30));
  assert.deepEqual(ran, [], "nothing may run before seq 1");
  assert.equal(s.heldCount, 4);
  s.schedule(s.accept(1, "d1", id).seqId, job(1), () => assert.fail("failed"));
  await s.after(async () => undefined);
  assert.deepEqual(ran, [1, 2, 3, 4, 5]);
});

test("repeats are idempotent, reuse with another payload and seq_ids behind or far ahead are refused", () => {
  const s = new ModelSequencer("model m");
  const a = s.accept(1, "x", id);
  assert.equal(a.isNew, true);
  const again = s.accept(1, "x", id);
  assert.deepEqual(again, { ...a, isNew: false });
  assert.throws(
    () => s.accept(1, "y", id),
    (e: unknown) => e instanceof HttpError && e.status === 409 && /sequence number was reused/.test(e.message),
  );
  s.schedule(
    1,
    async () => undefined,
    () => undefined,
  );
  assert.throws(
    () => s.accept(1 + MAX_SEQ_AHEAD + 1, "z", id),
    (e: unknown) => e instanceof HttpError && e.status === 400,
  );
  assert.throws(
    () => s.accept(0, "z", id),
    (e: unknown) => e instanceof HttpError && e.status === 400,
  );
  // Without a seq_id a request takes the next one after the highest seen.
  assert.equal(s.accept(undefined, "w", id).seqId, 2);
});

test("closing fails the held requests and refuses new ones with 404", () => {
  const s = new ModelSequencer("model m");
  const failures: string[] = [];
  s.schedule(
    s.accept(2, "a", id).seqId,
    async () => assert.fail("ran"),
    (e) => failures.push(e.message),
  );
  s.close("it was unloaded");
  assert.equal(failures.length, 1);
  assert.match(failures[0]!, /unloaded/);
  assert.throws(
    () => s.accept(1, "b", id),
    (e: unknown) => e instanceof HttpError && e.status === 404,
  );
});

test("a missing seq_id: the requests held behind it fail after the grace time with an error naming the gap, and the model moves on", async () => {
  const s = new ModelSequencer("model m", 50);
  const failures: string[] = [];
  const ran: number[] = [];
  s.schedule(
    s.accept(1, "a", id).seqId,
    async () => ran.push(1),
    () => assert.fail("1 failed"),
  );
  for (const k of [3, 4])
    s.schedule(
      s.accept(k, `d${k}`, id).seqId,
      async () => ran.push(k),
      (e) => failures.push(e.message),
    );
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(failures, [], "still within the grace time");
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(failures.length, 2);
  assert.match(failures[0]!, /seq_id 2 never arrived within 0\.05 s, so seq_id 3, 4 waiting behind it did not run/);
  assert.match(failures[0]!, /bad JSON|size limit/);
  assert.equal(s.heldCount, 0);
  // The next request runs at once; the missing one arriving late is refused, naming what happened.
  s.schedule(
    s.accept(5, "e", id).seqId,
    async () => ran.push(5),
    () => assert.fail("5 failed"),
  );
  await s.after(async () => undefined);
  assert.deepEqual(ran, [1, 5]);
  assert.throws(
    () => s.accept(2, "b", id),
    (e: unknown) => e instanceof HttpError && e.status === 409 && /gave up waiting/.test(e.message),
  );
});

test("the grace time restarts whenever the queue moves, so a slow but steady client is not cut off", async () => {
  const s = new ModelSequencer("model m", 60);
  const failures: string[] = [];
  s.schedule(
    s.accept(3, "c", id).seqId,
    async () => undefined,
    (e) => failures.push(e.message),
  );
  await new Promise((r) => setTimeout(r, 40));
  s.schedule(
    s.accept(1, "a", id).seqId,
    async () => undefined,
    (e) => failures.push(e.message),
  );
  await new Promise((r) => setTimeout(r, 40));
  s.schedule(
    s.accept(2, "b", id).seqId,
    async () => undefined,
    (e) => failures.push(e.message),
  );
  await s.after(async () => undefined);
  assert.deepEqual(failures, []);
});
