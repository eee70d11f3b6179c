import { test } from "node:test";
import assert from "node:assert/strict";
import { combineFutures, futureFromPromise, mapFuture, OrderedSubmitter, resolvedFuture } from "../../src/tinker/futures.ts";
import { TimeoutError } from "../../src/tinker/errors.ts";

test("resolved and mapped futures", async () => {
  const f = resolvedFuture(2);
  assert.equal(await f.result(), 2);
  assert.equal(await mapFuture(f, (x) => x * 3).result(), 6);
  assert.deepEqual(await combineFutures([f, resolvedFuture(5)], (v) => v.join(",")).result(), "2,5");
});

test("futureFromPromise caches and times out without cancelling", async () => {
  let calls = 0;
  let release!: (v: number) => void;
  const p = new Promise<number>((r) => {
    calls++;
    release = r;
  });
  const f = futureFromPromise(p);
  await assert.rejects(f.result(10), (e: unknown) => e instanceof TimeoutError && /after 10 ms/.test(e.message));
  release(42);
  assert.equal(await f.result(), 42);
  assert.equal(await f.result(1000), 42);
  assert.equal(calls, 1);
});

test("unobserved rejection does not crash", async () => {
  futureFromPromise(Promise.reject(new Error("boom")));
  await new Promise((r) => setTimeout(r, 5));
});

test("OrderedSubmitter assigns seq ids from 1 and serialises sends", async () => {
  const s = new OrderedSubmitter();
  const log: string[] = [];
  const sends: Promise<unknown>[] = [];
  // The first send is slow; the second must not start until it is done.
  sends.push(
    s.submit(async (seq) => {
      log.push(`start ${seq}`);
      await new Promise((r) => setTimeout(r, 20));
      log.push(`end ${seq}`);
      return futureFromPromise(new Promise((r) => setTimeout(() => r(seq), 30)));
    }),
  );
  sends.push(s.submitMany(2, (seqs) => log.push(`start ${seqs.join("+")}`)));
  sends.push(
    s.submit((seq) => {
      log.push(`start ${seq}`);
      throw new Error("send failed");
    }),
  );
  sends.push(s.submit((seq) => log.push(`start ${seq}`)));
  assert.equal(s.peekSeqId(), 6);
  const [first] = await Promise.allSettled(sends);
  assert.deepEqual(log, ["start 1", "end 1", "start 2+3", "start 4", "start 5"]);
  assert.equal(first.status, "fulfilled");
  const fut = (first as PromiseFulfilledResult<{ result(): Promise<number> }>).value;
  assert.equal(await fut.result(), 1);
});
