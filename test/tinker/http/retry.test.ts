import { test } from "node:test";
import assert from "node:assert/strict";
import { sendWithRetries, type RetryPolicy } from "../../../src/tinker/http/retry.ts";
import { HttpTransport } from "../../../src/tinker/http/transport.ts";
import { APIConnectionError, APIStatusError } from "../../../src/tinker/errors.ts";
import { FakeClock, MemoryLogger, scripted, startFakeServer, type Reply } from "./fakeServer.ts";

const KEY = "tml-super-secret-key";

async function run(replies: Reply[], policy: Partial<RetryPolicy> = {}) {
  const server = await startFakeServer(scripted({ "POST /api/v1/optim_step": replies }), 50);
  const clock = new FakeClock();
  const logger = new MemoryLogger();
  const transport = new HttpTransport({ baseUrl: server.url, apiKey: KEY, headers: {}, timeoutMs: 5000 });
  try {
    const result = await sendWithRetries(
      transport,
      { method: "POST", path: "/api/v1/optim_step", json: { seq_id: 1 } },
      { clock, logger, budgetMs: 60_000, maxBillingPauseMs: 10_000, ...policy },
    ).then(
      (v) => ({ ok: true as const, status: v.status }),
      (e: unknown) => ({ ok: false as const, e: e as Error }),
    );
    return { result, clock, logger, requests: server.requests };
  } finally {
    await server.close();
  }
}

test("5xx and 408 are retried with the same idempotency key and the API key header", async () => {
  const r = await run([{ status: 500 }, { status: 408 }, { json: { request_id: "x" } }]);
  assert.deepEqual(r.result, { ok: true, status: 200 });
  assert.deepEqual(r.clock.sleeps, [1000, 2000]);
  const keys = r.requests.map((q) => q.headers["x-idempotency-key"]);
  assert.ok(typeof keys[0] === "string" && keys[0].length > 10);
  assert.ok(keys.every((k) => k === keys[0]));
  assert.equal(r.requests[0]!.headers["x-api-key"], KEY);
});

test("retry-after headers are honoured when at most 60 s", async () => {
  const r = await run([
    { status: 429, headers: { "retry-after": "3" } },
    { status: 503, headers: { "retry-after-ms": "250" } },
    { status: 503, headers: { "retry-after": "600" } },
    { json: {} },
  ]);
  assert.deepEqual(r.clock.sleeps, [3000, 250, 4000]);
});

test("409 sequence reuse is fatal at once", async () => {
  const r = await run([{ status: 409, json: { detail: "Training request sequence number was reused" } }, { json: {} }]);
  assert.equal(r.result.ok, false);
  assert.match((r.result as { e: Error }).e.message, /HTTP 409: .*sequence number was reused.*not retried/);
  assert.equal(r.requests.length, 1);
});

test("400 with a body is fatal; a bare 400 is retried", async () => {
  const fatal = await run([{ status: 400, json: { detail: "bad loss_fn" } }]);
  assert.ok((fatal.result as { e: unknown }).e instanceof APIStatusError);
  assert.equal(fatal.requests.length, 1);
  const bare = await run([{ status: 400 }, { json: {} }]);
  assert.equal(bare.result.ok, true);
  assert.equal(bare.requests.length, 2);
});

test("x-should-retry overrides the status rules", async () => {
  const noRetry = await run([{ status: 500, headers: { "x-should-retry": "false" } }, { json: {} }]);
  assert.equal(noRetry.result.ok, false);
  const forced = await run([{ status: 418, headers: { "x-should-retry": "true" } }, { json: {} }]);
  assert.equal(forced.result.ok, true);
});

test("retries stop when the time budget is spent", async () => {
  const r = await run(
    Array.from({ length: 10 }, () => ({ status: 503 })),
    { budgetMs: 10_000 },
  );
  assert.equal(r.result.ok, false);
  assert.deepEqual(r.clock.sleeps, [1000, 2000, 4000]);
  assert.match((r.result as { e: Error }).e.message, /HTTP 503.*gave up after retrying for 7 s/);
});

test("402 pauses, then gives up past the maximum", async () => {
  const r = await run([{ status: 402 }, { status: 402 }, { status: 402 }, { json: {} }]);
  assert.equal(r.result.ok, false);
  assert.deepEqual(r.clock.sleeps, [5000, 5000]);
  assert.ok(r.logger.lines.some((l) => l.includes("billing hold")));
});

test("connection failures are retried with backoff", async () => {
  const r = await run(["drop", { json: {} }]);
  assert.equal(r.result.ok, true);
  assert.deepEqual(r.clock.sleeps, [1000]);
  const never = await run(["drop", "drop", "drop"], { budgetMs: 2500 });
  assert.ok((never.result as { e: unknown }).e instanceof APIConnectionError);
});

test("the API key never appears in error messages, even when the server echoes it", async () => {
  const r = await run([{ status: 401, json: { detail: `invalid key ${KEY}` } }]);
  const e = (r.result as { e: Error }).e;
  assert.ok(!e.message.includes(KEY));
  assert.match(e.message, /invalid key <redacted>/);
  const transport = new HttpTransport({ baseUrl: `http://127.0.0.1:9/${KEY}`, apiKey: KEY, headers: {}, timeoutMs: 2000 });
  const err = await transport.send({ method: "GET", path: "/api/v1/healthz" }).catch((x: unknown) => x as Error);
  assert.ok(err instanceof APIConnectionError);
  assert.ok(!err.message.includes(KEY), err.message);
});
