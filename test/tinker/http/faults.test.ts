// Our HTTP client against `cookbook serve` (in-process) through a proxy that injects the faults a
// remote server and its network produce: 429 with retry-after, 503s, a reset while the body is
// uploading, a request the server never answers (timeout), and an answer lost after the server did
// the work. Training through all of it must give exactly the numbers of a clean run: nothing
// skipped, nothing applied twice (the lost optim_step is resent with its seq_id and the server
// answers with the original request).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import type { TrainingClient } from "../../../src/tinker/clients.ts";
import type { Datum } from "../../../src/tinker/types.ts";
import { ceDatum, client, makeEnv, randomTokens, serve, type Env, type Served } from "../../server/helpers.ts";
import { startProxy, type Exchange, type Fault, type Proxy as FaultProxy } from "./proxy.ts";

let env: Env;
let served: Served;

before(async () => {
  env = makeEnv();
  served = await serve(env);
});

after(async () => {
  await served.server.close();
  env.cleanup();
});

const DATA: Datum[] = [ceDatum(randomTokens(40, 1)), ceDatum(randomTokens(30, 2))];
const STEPS = 4;

async function train(tc: TrainingClient): Promise<{ losses: number[]; optim: Record<string, number>[] }> {
  const losses: number[] = [];
  const optim: Record<string, number>[] = [];
  for (let i = 0; i < STEPS; i++) {
    const fb = await tc.forwardBackward(DATA, "cross_entropy");
    const opt = await tc.optimStep({ learning_rate: 1e-2 });
    losses.push((await fb.result()).metrics["loss:sum"]!);
    optim.push((await opt.result()).metrics ?? {});
  }
  return { losses, optim };
}

/** The n-th request (counting retries) to each path gets the fault listed for it. */
const FAULTS: Record<string, Record<number, Fault>> = {
  "/api/v1/forward_backward": {
    0: { kind: "answer", status: 429, headers: { "retry-after-ms": "50" }, json: { detail: "rate limited" } },
    2: { kind: "reset_upload" },
    4: { kind: "hang" },
  },
  "/api/v1/optim_step": {
    0: { kind: "answer", status: 503, json: { detail: "overloaded" } },
    1: { kind: "answer", status: 503, json: { detail: "overloaded" } },
    3: { kind: "lose_answer" },
  },
  "/api/v1/retrieve_future": { 2: { kind: "answer", status: 503, json: { detail: "overloaded" } } },
};

test("training through 429, 503, a reset upload, a hung request and a lost answer gives the clean run's numbers", async () => {
  const clean = client(served.server.url);
  const seen: Record<string, number> = {};
  let proxy: FaultProxy | undefined;
  const faulty = async (): Promise<FaultProxy> =>
    startProxy(served.server.url, (req) => {
      const n = seen[req.path] ?? 0;
      seen[req.path] = n + 1;
      return FAULTS[req.path]?.[n];
    });
  try {
    proxy = await faulty();
    const expected = await train(await clean.createLoraTrainingClient(env.modelDir, { rank: 4, seed: 3 }));
    const remote = client(proxy.url, { requestTimeoutMs: 1500, pollTimeoutMs: 1500, retryBudgetMs: 30_000 });
    try {
      const got = await train(await remote.createLoraTrainingClient(env.modelDir, { rank: 4, seed: 3 }));
      assert.deepEqual(got.losses, expected.losses, "losses step for step");
      assert.deepEqual(got.optim, expected.optim, "optimizer metrics: no step applied twice or skipped");
    } finally {
      await remote.close();
    }

    // Every fault really happened, and the request it hit was sent again under the same
    // idempotency key until the server's answer got through.
    const faulted = proxy.exchanges.filter((e) => e.fault !== undefined);
    assert.deepEqual(
      faulted.map((e) => `${e.path} ${e.fault}`).sort(),
      Object.entries(FAULTS)
        .flatMap(([p, f]) => Object.values(f).map((x) => `${p} ${x.kind}`))
        .sort(),
    );
    for (const f of faulted.filter((e) => e.path !== "/api/v1/retrieve_future")) {
      const key = f.requestHeaders["x-idempotency-key"];
      assert.ok(typeof key === "string" && key.length > 0, `${f.path} ${f.fault}: no idempotency key`);
      const answered: Exchange | undefined = proxy.exchanges.find(
        (e) => e.index > f.index && e.requestHeaders["x-idempotency-key"] === key && e.status === 200,
      );
      assert.ok(answered !== undefined, `${f.path} ${f.fault} (exchange ${f.index}) was never sent again successfully`);
      assert.deepEqual(answered.requestBody, f.fault === "reset_upload" ? answered.requestBody : f.requestBody, "the retry carries the same body");
    }
    // The lost optim_step answer: the server ran it once; the resend got the same request id back.
    const lost = faulted.find((e) => e.fault === "lose_answer")!;
    const resent = proxy.exchanges.find((e) => e.index > lost.index && e.path === lost.path && e.status === 200)!;
    assert.equal(JSON.parse(resent.requestBody.toString()).seq_id, JSON.parse(lost.requestBody.toString()).seq_id);
  } finally {
    await clean.close();
    await proxy?.close();
  }
});
