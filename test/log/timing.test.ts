import { test } from "node:test";
import assert from "node:assert/strict";
import { StepTimer } from "../../src/log/timing.ts";

test("single spans give time/name, repeated spans give total/count/mean/max, plus time/total", async () => {
  const timer = new StepTimer();
  await timer.span("sample", () => new Promise((r) => setTimeout(r, 20)));
  timer.record("fwd", 1);
  timer.record("fwd", 3);
  const value = timer.spanSync("sync", () => 42);
  assert.equal(value, 42);
  const m = timer.metrics();
  assert.ok(m["time/sample"] >= 0.015 && m["time/sample"] < 1, `sample ${m["time/sample"]}`);
  assert.equal(m["time/fwd:total"], 4);
  assert.equal(m["time/fwd:count"], 2);
  assert.equal(m["time/fwd:mean"], 2);
  assert.equal(m["time/fwd:max"], 3);
  assert.equal(m["time/fwd"], undefined);
  assert.ok("time/sync" in m);
  assert.ok(m["time/total"] >= m["time/sample"]);
});

test("a span that throws is still recorded and the error propagates", async () => {
  const timer = new StepTimer();
  await assert.rejects(
    timer.span("bad", () => Promise.reject(new Error("boom"))),
    { message: "boom" },
  );
  assert.ok("time/bad" in timer.metrics());
});
