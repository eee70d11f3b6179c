// A teacher's (or judge's) sampler on a remote server outlives the server: requests that fail
// because the server went away wait for it, reconnect once for all of them and are sent again;
// failures that are the request's own, or a server that stays away, end the call with the error.
import { test } from "node:test";
import assert from "node:assert/strict";
import type { SamplingClient, ServerProbe, ServiceClient } from "../../src/tinker/clients.ts";
import { APIConnectionError, APIStatusError } from "../../src/tinker/errors.ts";
import { openSampler, ReconnectingSamplingClient } from "../../src/training/reconnectingSampler.ts";
import type { ModelInput } from "../../src/tinker/types.ts";
import { fakeTime } from "./fakeTime.ts";

const PROMPT: ModelInput = { chunks: [{ type: "encoded_text", tokens: [1, 2, 3] }] };

/**
 * A server that can be stopped and restarted: a restart forgets every session, so samplers opened
 * before it answer 404; while stopped nothing connects.
 */
class FakeServer {
  epoch = 0;
  up = true;
  connects = 0;
  closes = 0;
  requests = 0;
  /** Probes answered "unreachable" before the server is up again (while stopped). */
  downProbes = Number.POSITIVE_INFINITY;
  /** A request fails with this, whatever the server's state (a bad request, a server bug). */
  failWith: Error | null = null;

  restart(): void {
    this.epoch++;
  }

  connect = async (): Promise<ServiceClient> => {
    if (!this.up) throw new APIConnectionError("ECONNREFUSED");
    this.connects++;
    const epoch = this.epoch;
    const check = (): void => {
      this.requests++;
      if (this.failWith !== null) throw this.failWith;
      if (!this.up) throw new APIConnectionError("ECONNREFUSED");
      if (this.epoch !== epoch) throw new APIStatusError("POST /api/v1/asample failed with HTTP 404", 404, { detail: "unknown session" });
    };
    const sampler: SamplingClient = {
      baseModel: "teacher-model",
      sample: async () => {
        check();
        return { sequences: [] };
      },
      computeLogprobs: async () => {
        check();
        return [null, -0.5, -0.25];
      },
    };
    const service = {
      engineKind: "remote",
      baseUrl: "http://127.0.0.1:9",
      probeServer: async (): Promise<ServerProbe> => {
        if (!this.up && this.downProbes-- <= 0) this.up = true;
        if (!this.up) return "unreachable";
        return this.epoch === epoch ? "alive" : "session_lost";
      },
      createSamplingClient: async () => sampler,
      close: async () => {
        this.closes++;
      },
    };
    return service as unknown as ServiceClient;
  };
}

async function open(server: FakeServer, waitMs = 60_000) {
  const warnings: string[] = [];
  const time = fakeTime();
  const client = await ReconnectingSamplingClient.open(
    { baseModel: "teacher-model" },
    { role: "teacher", log: { warn: (m) => warnings.push(m) }, waitMs, connect: server.connect, ...time },
  );
  return { client, warnings, time };
}

test("after a restart, requests in flight together reconnect once and all succeed", async () => {
  const server = new FakeServer();
  const { client, warnings } = await open(server);
  assert.deepEqual(await client.computeLogprobs(PROMPT), [null, -0.5, -0.25]);
  server.restart();
  const results = await Promise.all(Array.from({ length: 5 }, () => client.computeLogprobs(PROMPT)));
  assert.equal(results.length, 5);
  for (const r of results) assert.deepEqual(r, [null, -0.5, -0.25]);
  assert.equal(server.connects, 2, "one new connection for the five failed requests");
  assert.equal(server.closes, 1, "the dead connection was closed");
  assert.match(warnings.join("\n"), /the teacher's server at http:\/\/127\.0\.0\.1:9 is back; the teacher \(teacher-model\) reconnected/);
  // The next restart is survived too.
  server.restart();
  assert.deepEqual(await client.sample(PROMPT, 1, { max_tokens: 4 }), { sequences: [] });
  assert.equal(server.connects, 3);
  assert.equal(server.closes, 2);
  await client.close();
  assert.equal(server.closes, 3, "close releases the live connection");
});

test("a stopped server is waited for with backoff, then the request goes through", async () => {
  const server = new FakeServer();
  const { client, time, warnings } = await open(server);
  server.up = false;
  server.downProbes = 3;
  server.restart();
  assert.deepEqual(await client.computeLogprobs(PROMPT), [null, -0.5, -0.25]);
  assert.deepEqual(time.slept, [1000, 2000, 4000]);
  assert.match(warnings[0]!, /the teacher's server at .* does not answer \(ECONNREFUSED\); waiting up to 60 s/);
});

test("a server that stays away past the wait ends the request with its failure", async () => {
  const server = new FakeServer();
  const { client, time, warnings } = await open(server, 10_000);
  server.up = false;
  await assert.rejects(client.computeLogprobs(PROMPT), (err: Error) => err instanceof APIConnectionError);
  assert.ok(time.now() <= 10_000);
  assert.match(warnings.at(-1)!, /did not come back within 10 s \(server_wait_seconds\)/);
  assert.equal(server.connects, 1);
});

test("the request's own failures are not retried, and neither is a server that still knows the session", async () => {
  const server = new FakeServer();
  const { client, time } = await open(server);
  server.failWith = new APIStatusError("bad prompt", 400, "");
  await assert.rejects(client.computeLogprobs(PROMPT), /bad prompt/);
  assert.equal(server.requests, 1);
  // A 500 from a server whose session is alive is its own failure, not a restart.
  server.failWith = new APIStatusError("internal error", 500, "");
  await assert.rejects(client.computeLogprobs(PROMPT), /internal error/);
  assert.equal(server.requests, 2);
  assert.equal(server.connects, 1);
  assert.deepEqual(time.slept, []);
});

test("on the embedded engine the run's engine is shared and never closed by the sampler", async () => {
  let opened = 0;
  let closed = 0;
  const engine = {
    engineKind: "embedded",
    createSamplingClient: async () => {
      opened++;
      return { baseModel: "m" } as SamplingClient;
    },
    close: async () => {
      closed++;
    },
  } as unknown as ServiceClient;
  const { client, close } = await openSampler({ shared: engine, baseUrl: null, waitMs: 1000, log: { warn: () => undefined } }, { baseModel: "m" }, "teacher");
  assert.equal(client.baseModel, "m");
  await close();
  assert.equal(opened, 1);
  assert.equal(closed, 0);
});
