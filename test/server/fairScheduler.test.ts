import { test } from "node:test";
import assert from "node:assert/strict";
import { FairScheduler } from "../../src/server/fairScheduler.ts";

function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

test("sessions take turns: a flood from one session does not queue ahead of another's small request", async () => {
  const s = new FairScheduler(100);
  const order: string[] = [];
  const gates = new Map<string, ReturnType<typeof gate>>();
  const job = (name: string) => () => {
    order.push(name);
    const g = gate();
    gates.set(name, g);
    return g.promise;
  };
  const all = [1, 2, 3, 4].map((i) => s.run("A", 100, job(`A${i}`)));
  all.push(s.run("B", 1, job("B1")));
  await Promise.resolve();
  assert.deepEqual(order, ["A1"], "one full-budget job at a time");
  assert.equal(s.waiting, 4);
  gates.get("A1")!.open();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, ["A1", "B1"], "B's request goes before A's next ones");
  gates.get("B1")!.open();
  await new Promise((r) => setImmediate(r));
  for (const name of ["A2", "A3", "A4"]) {
    gates.get(name)!.open();
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all(all);
  assert.deepEqual(order, ["A1", "B1", "A2", "A3", "A4"]);
});

test("small jobs run together within the budget; one job above the budget runs alone; errors pass through", async () => {
  const s = new FairScheduler(10);
  let running = 0;
  let most = 0;
  const small = () => async (): Promise<void> => {
    running++;
    most = Math.max(most, running);
    await new Promise((r) => setTimeout(r, 5));
    running--;
  };
  await Promise.all(Array.from({ length: 6 }, (_, i) => s.run(i % 2 === 0 ? "A" : "B", 3, small())));
  assert.equal(most, 3, "3 jobs of cost 3 fit a budget of 10");
  assert.equal(await s.run("A", 1000, async () => 42), 42);
  await assert.rejects(
    s.run("A", 1, async () => Promise.reject(new Error("boom"))),
    /boom/,
  );
  await assert.rejects(
    s.run("A", 1, () => {
      throw new Error("sync boom");
    }),
    /sync boom/,
  );
  assert.equal(await s.run("B", 1, async () => "still works"), "still works");
});
