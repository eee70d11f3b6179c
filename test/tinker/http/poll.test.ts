import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { pollFuture, type PollContext } from "../../../src/tinker/http/poll.ts";
import { HttpTransport } from "../../../src/tinker/http/transport.ts";
import { APIConnectionError, APIStatusError, RequestFailedError } from "../../../src/tinker/errors.ts";
import { FakeClock, MemoryLogger, scripted, startFakeServer, type Reply } from "./fakeServer.ts";

const RESULT = { value: 42 };
const parseJson = (v: unknown): { value: number } => z.object({ value: z.number() }).parse(v);

async function run(replies: Reply[], extra: Partial<PollContext> = {}, resubmit?: () => Promise<string>) {
  const server = await startFakeServer(scripted({ "POST /api/v1/retrieve_future": replies }), 50);
  const clock = new FakeClock();
  const logger = new MemoryLogger();
  const states: string[] = [];
  const ctx: PollContext = {
    transport: new HttpTransport({ baseUrl: server.url, apiKey: "tml-secret", headers: {}, timeoutMs: 5000 }),
    clock,
    logger,
    pollTimeoutMs: 5000,
    maxBillingPauseMs: 12_000,
    connectionBudgetMs: 60_000,
    onQueueState: (s, info) => states.push(`${s}:${info.requestId}:${info.reason ?? ""}`),
    ...extra,
  };
  try {
    const result = await pollFuture(ctx, { requestId: "req-1", parseJson, resubmit }).then(
      (v) => ({ ok: true as const, v }),
      (e: unknown) => ({ ok: false as const, e }),
    );
    return { result, clock, states, logger, requests: server.requests };
  } finally {
    await server.close();
  }
}

test("try_again surfaces queue state and polls again at once", async () => {
  const r = await run([
    { json: { type: "try_again", request_id: "req-1", queue_state: "paused_capacity", queue_state_reason: "busy" } },
    { json: { type: "try_again", request_id: "req-1", queue_state: "active" } },
    { json: RESULT },
  ]);
  assert.deepEqual(r.result, { ok: true, v: RESULT });
  assert.deepEqual(r.states, ["paused_capacity:req-1:busy", "active:req-1:"]);
  assert.deepEqual(r.clock.sleeps, []);
  assert.equal(r.requests[0]!.headers["accept"], "application/x-protobuf, application/json");
  assert.deepEqual(r.requests[0]!.json(), { request_id: "req-1", allow_metadata_only: false });
});

test("408 polls again and reports the queue state", async () => {
  const r = await run([{ status: 408, json: { queue_state: "paused_rate_limit" } }, { status: 408, body: "" }, { json: RESULT }]);
  assert.deepEqual(r.result, { ok: true, v: RESULT });
  assert.deepEqual(r.states, ["paused_rate_limit:req-1:"]);
  assert.equal(r.requests.length, 3);
});

test("410 resubmits the original request and polls the new id", async () => {
  let resubmits = 0;
  const r = await run([{ status: 410, json: { detail: "expired" } }, { json: RESULT }], {}, async () => {
    resubmits++;
    return "req-2";
  });
  assert.deepEqual(r.result, { ok: true, v: RESULT });
  assert.equal(resubmits, 1);
  assert.equal(r.requests[1]!.json()["request_id"], "req-2");
  const noResubmit = await run([{ status: 410, json: { detail: "expired" } }]);
  assert.equal(noResubmit.result.ok, false);
  assert.match(String((noResubmit.result as { e: Error }).e.message), /HTTP 410.*cannot be resubmitted/);
});

test("429 backs off min(2^k, 30) s", async () => {
  const r = await run([{ status: 429 }, { status: 429 }, { status: 429 }, { json: RESULT }]);
  assert.deepEqual(r.result, { ok: true, v: RESULT });
  assert.deepEqual(r.clock.sleeps, [1000, 2000, 4000]);
});

test("5xx is polled again: at once a few times, then with backoff", async () => {
  const r = await run([{ status: 500 }, { status: 502 }, { status: 503 }, { status: 504 }, { status: 500 }, { json: RESULT }]);
  assert.deepEqual(r.result, { ok: true, v: RESULT });
  assert.deepEqual(r.clock.sleeps, [1000, 2000]);
});

test("402 pauses 5 s at a time up to the configured maximum", async () => {
  const ok = await run([{ status: 402 }, { status: 402 }, { json: RESULT }]);
  assert.deepEqual(ok.result, { ok: true, v: RESULT });
  assert.deepEqual(ok.clock.sleeps, [5000, 5000]);
  assert.ok(ok.logger.lines.some((l) => /billing hold/.test(l)));
  const fail = await run([{ status: 402 }, { status: 402 }, { status: 402 }, { json: RESULT }]);
  assert.equal(fail.result.ok, false);
  assert.match((fail.result as { e: Error }).e.message, /billing hold lasted longer than 12000 ms/);
  assert.deepEqual(fail.clock.sleeps, [5000, 5000]);
});

test("bare 400 is retried 3 times, then fails", async () => {
  const ok = await run([{ status: 400 }, { status: 400 }, { status: 400 }, { json: RESULT }]);
  assert.deepEqual(ok.result, { ok: true, v: RESULT });
  const fail = await run([{ status: 400 }, { status: 400 }, { status: 400 }, { status: 400 }, { json: RESULT }]);
  assert.equal(fail.result.ok, false);
  assert.equal(fail.requests.length, 4);
  assert.ok((fail.result as { e: unknown }).e instanceof APIStatusError);
});

test("other 4xx is fatal and names the request", async () => {
  const r = await run([{ status: 404, json: { detail: "unknown request" } }, { json: RESULT }]);
  assert.equal(r.result.ok, false);
  const e = (r.result as { e: APIStatusError }).e;
  assert.ok(e instanceof APIStatusError);
  assert.equal(e.status, 404);
  assert.match(e.message, /HTTP 404: \{"detail":"unknown request"\} \(request req-1\)/);
  assert.equal(r.requests.length, 1);
});

test("{error, category} becomes RequestFailedError", async () => {
  const r = await run([{ json: { error: "Prompt too long", category: "user" } }]);
  const e = (r.result as { e: RequestFailedError }).e;
  assert.ok(e instanceof RequestFailedError);
  assert.equal(e.category, "user");
  assert.equal(e.requestId, "req-1");
  assert.match(e.message, /Prompt too long/);
});

test("connection errors back off, and the budget ends them", async () => {
  const ok = await run(["drop", "drop", { json: RESULT }]);
  assert.deepEqual(ok.result, { ok: true, v: RESULT });
  assert.deepEqual(ok.clock.sleeps, [1000, 2000]);
  const fail = await run(["drop", "drop", "drop", "drop", { json: RESULT }], { connectionBudgetMs: 5000 });
  assert.equal(fail.result.ok, false);
  assert.ok((fail.result as { e: unknown }).e instanceof APIConnectionError);
  assert.deepEqual(fail.clock.sleeps, [1000, 2000]);
});

test("protobuf results are decoded by Content-Type", async () => {
  const server = await startFakeServer(
    scripted({ "POST /api/v1/retrieve_future": [{ body: Buffer.from([1, 2, 3]), headers: { "content-type": "application/x-protobuf" } }] }),
  );
  try {
    const ctx: PollContext = {
      transport: new HttpTransport({ baseUrl: server.url, apiKey: undefined, headers: {}, timeoutMs: 5000 }),
      clock: new FakeClock(),
      logger: new MemoryLogger(),
      pollTimeoutMs: 5000,
      maxBillingPauseMs: 0,
      connectionBudgetMs: 0,
    };
    const v = await pollFuture(ctx, { requestId: "r", parseJson, decodeProto: (b) => ({ value: b.length }) });
    assert.deepEqual(v, { value: 3 });
  } finally {
    await server.close();
  }
});
