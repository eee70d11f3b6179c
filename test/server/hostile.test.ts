// Requests a server must survive: each gets the right 4xx with a message, and the server stays
// healthy (healthz answers, and a normal request on the same model still works).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServer } from "../../src/server/index.ts";
import { APIStatusError, ConfigurationError } from "../../src/tinker/errors.ts";
import { client, ceDatum, makeEnv, randomTokens, raw, rawModel, serve, waitFuture, type Env, type Served } from "./helpers.ts";

let env: Env;
let served: Served;
let url: string;

before(async () => {
  env = makeEnv();
  served = await serve(env, { maxBodyBytes: 64 * 1024, longPollSec: 0.2 });
  url = served.server.url;
});

after(async () => {
  await served.server.close();
  env.cleanup();
});

const DATA = [ceDatum(randomTokens(8, 1)), ceDatum(randomTokens(6, 2))];

/** healthz answers and the model still trains: a forward_backward at the next seq_id completes. */
async function assertHealthy(modelId: string, nextSeq: number): Promise<void> {
  assert.equal((await raw(url, "/api/v1/healthz")).json["status"], "ok");
  const r = await raw(url, "/api/v1/forward_backward", {
    json: { model_id: modelId, seq_id: nextSeq, forward_backward_input: { data: DATA, loss_fn: "cross_entropy" } },
  });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  const out = await waitFuture(url, r.json["request_id"] as string);
  assert.equal(typeof (out.json["metrics"] as Record<string, number>)["loss:sum"], "number", JSON.stringify(out.json));
}

test("oversized bodies get 413, announced or streamed", async () => {
  const { modelId } = await rawModel(url, env.modelDir);
  const big = JSON.stringify({ model_id: modelId, seq_id: 1, pad: "x".repeat(200 * 1024) });
  const announced = await raw(url, "/api/v1/forward_backward", { body: big, headers: { "content-type": "application/json" } });
  assert.equal(announced.status, 413);
  assert.match(String(announced.json["detail"]), /exceeds.*65536 bytes/);
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < 20; i++) c.enqueue(new Uint8Array(16 * 1024).fill(32));
      c.close();
    },
  });
  const res = await fetch(`${url}/api/v1/forward_backward`, {
    method: "POST",
    body: stream,
    headers: { "content-type": "application/json" },
    duplex: "half",
  } as RequestInit);
  assert.equal(res.status, 413);
  await assertHealthy(modelId, 1);
});

test("bad JSON is a 400, a wrong shape a 422 naming the field, and neither blocks the model's queue", async () => {
  const { modelId } = await rawModel(url, env.modelDir);
  const bad = await raw(url, "/api/v1/create_session", { body: "{not json", headers: { "content-type": "application/json" } });
  assert.equal(bad.status, 400);
  assert.match(String(bad.json["detail"]), /not valid JSON/);
  const empty = await raw(url, "/api/v1/optim_step", { body: "", headers: { "content-type": "application/json" } });
  assert.equal(empty.status, 400);
  const shape = await raw(url, "/api/v1/forward_backward", { json: { model_id: modelId, seq_id: 1, forward_backward_input: { data: DATA, loss_fn: "nope" } } });
  assert.equal(shape.status, 422);
  assert.match(String(shape.json["detail"]), /forward_backward_input\.loss_fn/);
  const adam = await raw(url, "/api/v1/optim_step", { json: { model_id: modelId, seq_id: 2, adam_params: { learning_rate: -1 } } });
  assert.equal(adam.status, 422);
  assert.match(String(adam.json["detail"]), /adam_params\.learning_rate/);
  // A datum the engine refuses fails inside its future as a user error.
  const oob = await raw(url, "/api/v1/forward_backward", {
    json: { model_id: modelId, seq_id: 3, forward_backward_input: { data: [ceDatum([-1, 2, 3])], loss_fn: "cross_entropy" } },
  });
  assert.equal(oob.status, 200);
  const failed = await waitFuture(url, oob.json["request_id"] as string);
  assert.equal(failed.json["category"], "user");
  assert.equal(typeof failed.json["error"], "string");
  assert.equal((await raw(url, "/api/v1/forward_backward", { body: "x", headers: { "content-encoding": "gzip" } })).status, 415);
  assert.equal((await raw(url, "/api/v1/no_such_thing", { json: {} })).status, 404);
  assert.equal((await raw(url, "/api/v1/create_session")).status, 405);
  await assertHealthy(modelId, 4);
});

test("path traversal in checkpoint names and ids is refused and writes nothing outside the store", async () => {
  const { modelId } = await rawModel(url, env.modelDir);
  const sentinel = join(env.root, "sentinel.txt");
  writeFileSync(sentinel, "keep");
  const before = readdirSync(env.root).sort();
  const save = await raw(url, "/api/v1/save_weights", { json: { model_id: modelId, seq_id: 1, path: "../../escape" } });
  assert.equal(save.status, 400);
  assert.match(String(save.json["detail"]), /checkpoint name/);
  const forSampler = await raw(url, "/api/v1/save_weights_for_sampler", { json: { model_id: modelId, seq_id: 2, path: "a/../../b" } });
  assert.equal(forSampler.status, 400);
  const load = await raw(url, "/api/v1/load_weights", { json: { model_id: modelId, seq_id: 3, path: "tinker://../weights/x", optimizer: false } });
  assert.equal(load.status, 400);
  const load2 = await raw(url, "/api/v1/load_weights", { json: { model_id: modelId, seq_id: 4, path: "tinker://a/weights/../../x", optimizer: false } });
  assert.equal(load2.status, 400);
  const info = await raw(url, "/api/v1/weights_info", { json: { tinker_path: "tinker://..%2F..%2Fx/weights/y" } });
  assert.ok(info.status === 400 || info.status === 404, `weights_info: ${info.status}`);
  for (const path of [
    `/api/v1/training_runs/..%2F..%2Fetc/checkpoints/weights/x`,
    `/api/v1/training_runs/${modelId}/checkpoints/weights/..%2F..%2Fsentinel.txt`,
    `/api/v1/training_runs/${modelId}/checkpoints/..%2F..%2F/x`,
    `/api/v1/training_runs/local-1..%2F`,
    `/api/v1/training_runs/a..b`,
  ]) {
    const r = await raw(url, path, { method: path.includes("checkpoints") ? "DELETE" : "GET" });
    assert.equal(r.status, 400, `${path}: ${r.status} ${JSON.stringify(r.json)}`);
  }
  assert.ok(existsSync(sentinel));
  assert.deepEqual(readdirSync(env.root).sort(), before);
  await assertHealthy(modelId, 5);
});

test("unknown model, session, sampler and request ids are 404s", async () => {
  const { modelId } = await rawModel(url, env.modelDir);
  const fb = await raw(url, "/api/v1/forward_backward", {
    json: { model_id: "local-nothere", seq_id: 1, forward_backward_input: { data: DATA, loss_fn: "cross_entropy" } },
  });
  assert.equal(fb.status, 404);
  assert.match(String(fb.json["detail"]), /local-nothere/);
  assert.equal((await raw(url, "/api/v1/get_info", { json: { model_id: "local-nothere" } })).status, 404);
  assert.equal((await raw(url, "/api/v1/optim_step", { json: { model_id: "x", seq_id: 1, adam_params: {} } })).status, 404);
  assert.equal((await raw(url, "/api/v1/create_model", { json: { session_id: "session-nope", model_seq_id: 0, base_model: env.modelDir } })).status, 404);
  assert.equal((await raw(url, "/api/v1/retrieve_future", { json: { request_id: "req-nope" } })).status, 404);
  assert.equal((await raw(url, "/api/v1/samplers/sampler-nope")).status, 404);
  assert.equal(
    (
      await raw(url, "/api/v1/asample", {
        json: { sampling_session_id: "sampler-nope", seq_id: 0, prompt: { chunks: [] }, sampling_params: { max_tokens: 1 } },
      })
    ).status,
    404,
  );
  assert.equal((await raw(url, "/api/v1/training_runs/local-nothere")).status, 404);
  // An unknown base model fails inside create_model's future, as a user error.
  const s = await raw(url, "/api/v1/create_session", { json: {} });
  const c = await raw(url, "/api/v1/create_model", { json: { session_id: s.json["session_id"], model_seq_id: 0, base_model: "no/such-model" } });
  const res = await waitFuture(url, c.json["request_id"] as string);
  assert.equal(res.json["category"], "user");
  await assertHealthy(modelId, 1);
});

test("seq_ids: a repeat returns the same request, a different payload is a 409, later ones wait for earlier ones", async () => {
  const { modelId } = await rawModel(url, env.modelDir);
  const bodies = (id: string) => ({
    fb: { model_id: id, seq_id: 1, forward_backward_input: { data: DATA, loss_fn: "cross_entropy" } },
    opt: { model_id: id, seq_id: 2, adam_params: { learning_rate: 0.01 } },
    fwd: { model_id: id, seq_id: 3, forward_input: { data: DATA, loss_fn: "cross_entropy" } },
  });
  const b = bodies(modelId);
  const optBody = b.opt;
  // Arrive in reverse order: 3 and 2 are held until 1 comes.
  const r3 = await raw(url, "/api/v1/forward", { json: b.fwd });
  const r2 = await raw(url, "/api/v1/optim_step", { json: b.opt });
  const held = await raw(url, "/api/v1/retrieve_future", { json: { request_id: r3.json["request_id"] } });
  assert.equal(held.status, 408);
  assert.equal(held.json["queue_state"], "active");
  const r1 = await raw(url, "/api/v1/forward_backward", { json: b.fb });
  const first = await waitFuture(url, r1.json["request_id"] as string);
  await waitFuture(url, r2.json["request_id"] as string);
  const third = await waitFuture(url, r3.json["request_id"] as string);
  // The same three requests sent in order to a twin model give the same numbers: seq 3 ran after
  // the optimizer step of seq 2.
  const twin = await rawModel(url, env.modelDir);
  const t = bodies(twin.modelId);
  const t1 = await raw(url, "/api/v1/forward_backward", { json: t.fb });
  await raw(url, "/api/v1/optim_step", { json: t.opt });
  const t3 = await raw(url, "/api/v1/forward", { json: t.fwd });
  const loss = (r: { json: Record<string, unknown> }): number => (r.json["metrics"] as Record<string, number>)["loss:sum"]!;
  assert.equal(loss(await waitFuture(url, t1.json["request_id"] as string)), loss(first));
  assert.equal(loss(await waitFuture(url, t3.json["request_id"] as string)), loss(third));
  assert.notEqual(loss(third), loss(first));

  const again = await raw(url, "/api/v1/optim_step", { json: optBody });
  assert.equal(again.status, 200);
  assert.equal(again.json["request_id"], r2.json["request_id"]);
  const reused = await raw(url, "/api/v1/optim_step", { json: { ...optBody, adam_params: { learning_rate: 0.5 } } });
  assert.equal(reused.status, 409);
  assert.match(String(reused.json["detail"]), /Training request sequence number was reused/);
  const tooFar = await raw(url, "/api/v1/optim_step", { json: { ...optBody, seq_id: 1_000_000 } });
  assert.equal(tooFar.status, 400);
  await assertHealthy(modelId, 4);
});

test("an API key is required on every endpoint but healthz, compared without leaking it", async () => {
  const KEY = "tml-serve-secret-key";
  const keyed = await serve(env, { apiKey: KEY }, "keyed-store");
  try {
    const u = keyed.server.url;
    assert.equal((await raw(u, "/api/v1/healthz")).status, 200);
    const missing = await raw(u, "/api/v1/create_session", { json: {} });
    assert.equal(missing.status, 401);
    assert.equal((await raw(u, "/api/v1/create_session", { json: {}, headers: { "x-api-key": "tml-wrong" } })).status, 401);
    assert.equal((await raw(u, "/api/v1/create_session", { json: {}, headers: { "x-api-key": `${KEY}x` } })).status, 401);
    assert.equal((await raw(u, "/api/v1/training_runs", { headers: { "x-api-key": KEY.slice(0, -1) } })).status, 401);
    const { modelId } = await rawModel(u, env.modelDir, { "x-api-key": KEY });
    assert.match(modelId, /^local-/);
    // Our client with the wrong key fails at once with the 401 (not retried).
    const wrong = client(u, { apiKey: "tml-not-the-key" });
    await assert.rejects(wrong.createLoraTrainingClient(env.modelDir, { rank: 4 }), (e: unknown) => e instanceof APIStatusError && e.status === 401);
    await wrong.close();
    const right = client(u, { apiKey: KEY });
    const tc = await right.createLoraTrainingClient(env.modelDir, { rank: 4, seed: 1 });
    await (await tc.forwardBackward(DATA, "cross_entropy")).result();
    await right.close();
    assert.ok(!keyed.lines.some((l) => l.includes(KEY)), "the API key reached the server log");
  } finally {
    await keyed.server.close();
  }
  await assert.rejects(startServer({ host: "0.0.0.0", port: 0 }), (e: unknown) => e instanceof ConfigurationError && /api-key/.test((e as Error).message));
  await assert.rejects(startServer({ port: 0, apiKey: "short" }), ConfigurationError);
});

test("a session without heartbeats expires and its models are unloaded; heartbeats keep one alive", async () => {
  const short = await serve(env, { sessionTimeoutSec: 1 }, "expiry-store");
  try {
    const u = short.server.url;
    // Loading a model can take longer than the timeout, so both sessions beat while their models
    // are made; then only one keeps beating.
    const beat = (id: string) => raw(u, "/api/v1/session_heartbeat", { json: { session_id: id } });
    const newSession = async (): Promise<string> => (await raw(u, "/api/v1/create_session", { json: {} })).json["session_id"] as string;
    const aliveSession = await newSession();
    const silentSession = await newSession();
    let beating = [aliveSession, silentSession];
    const timer = setInterval(() => beating.forEach((id) => void beat(id)), 100);
    const model = async (sessionId: string): Promise<string> => {
      const c = await raw(u, "/api/v1/create_model", { json: { session_id: sessionId, model_seq_id: 0, base_model: env.modelDir, lora_config: { rank: 4 } } });
      return (await waitFuture(u, c.json["request_id"] as string)).json["model_id"] as string;
    };
    const alive = { sessionId: aliveSession, modelId: await model(aliveSession) };
    const silent = { sessionId: silentSession, modelId: await model(silentSession) };
    beating = [aliveSession];
    await new Promise((r) => setTimeout(r, 2500));
    clearInterval(timer);
    assert.equal((await beat(alive.sessionId)).status, 200);
    assert.equal((await raw(u, "/api/v1/get_info", { json: { model_id: silent.modelId } })).status, 404);
    assert.equal((await raw(u, "/api/v1/session_heartbeat", { json: { session_id: silent.sessionId } })).status, 404);
    assert.equal((await raw(u, "/api/v1/get_info", { json: { model_id: alive.modelId } })).status, 200);
    assert.ok(short.lines.some((l) => l.includes(silent.sessionId) && l.includes("expired")));
  } finally {
    await short.server.close();
  }
});

test("unload_model ends a model: its held requests fail, later ones are 404s, the session forgets it", async () => {
  const { sessionId, modelId } = await rawModel(url, env.modelDir);
  const info = await raw(url, `/api/v1/sessions/${sessionId}`);
  assert.deepEqual(info.json["training_run_ids"], [modelId]);
  // seq 2 waits for a seq 1 that never comes.
  const held = await raw(url, "/api/v1/optim_step", { json: { model_id: modelId, seq_id: 2, adam_params: {} } });
  const u = await raw(url, "/api/v1/unload_model", { json: { model_id: modelId, type: "unload_model" } });
  assert.equal(u.status, 200);
  assert.deepEqual((await waitFuture(url, u.json["request_id"] as string)).json, { model_id: modelId, type: "unload_model" });
  const failed = await waitFuture(url, held.json["request_id"] as string);
  assert.match(String(failed.json["error"]), /unloaded/);
  assert.equal((await raw(url, "/api/v1/get_info", { json: { model_id: modelId } })).status, 404);
  assert.equal((await raw(url, "/api/v1/optim_step", { json: { model_id: modelId, seq_id: 1, adam_params: {} } })).status, 404);
  assert.deepEqual((await raw(url, `/api/v1/sessions/${sessionId}`)).json["training_run_ids"], []);
  assert.deepEqual((await raw(url, "/api/v1/telemetry", { json: { events: [], session_id: sessionId } })).json, { status: "accepted" });
  // The run's record and checkpoints stay in the store.
  assert.equal((await raw(url, `/api/v1/training_runs/${modelId}`)).status, 200);
});
