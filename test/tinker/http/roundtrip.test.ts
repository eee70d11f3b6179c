import { test } from "node:test";
import assert from "node:assert/strict";
import { HttpServiceClient } from "../../../src/tinker/http/serviceClient.ts";
import { makeDatum } from "../../../src/tinker/datum.ts";
import { modelInputFromInts } from "../../../src/tinker/modelInput.ts";
import { FakeClock, MemoryLogger, startFakeServer } from "./fakeServer.ts";
import { FakeTinker, type FakeTinkerOptions } from "./fakeTinker.ts";

const KEY = "tml-roundtrip-secret";

async function withClient(
  opts: FakeTinkerOptions,
  body: (
    c: HttpServiceClient,
    fake: FakeTinker,
    env: { clock: FakeClock; logger: MemoryLogger; states: string[]; requests: { path: string; headers: Record<string, unknown> }[] },
  ) => Promise<void>,
): Promise<void> {
  const fake = new FakeTinker(opts);
  const server = await startFakeServer(fake.handler, 300);
  const clock = new FakeClock();
  const logger = new MemoryLogger();
  const states: string[] = [];
  const client = new HttpServiceClient({
    baseUrl: server.url,
    apiKey: KEY,
    clock,
    logger,
    onQueueState: (s) => states.push(s),
    env: {},
  });
  try {
    await body(client, fake, { clock, logger, states, requests: server.requests });
  } finally {
    await client.close();
    await server.close();
  }
  assert.ok(!logger.lines.some((l) => l.includes(KEY)), "API key leaked into the log");
}

const datum = (n: number) =>
  makeDatum(modelInputFromInts(Array.from({ length: n }, (_, i) => i + 1)), {
    target_tokens: Array.from({ length: n }, (_, i) => i + 2),
    weights: Array.from({ length: n }, () => 1),
  });

test("create → forward_backward → optim_step → save → sample round trip (JSON era)", async () => {
  await withClient({ tryAgainFirst: true }, async (service, fake, env) => {
    const tc = await service.createLoraTrainingClient("tiny", { rank: 8, seed: 3 });
    assert.equal(tc.modelId, "sess:train:0");
    const create = env.requests.find((r) => r.path === "/api/v1/create_model")!;
    assert.equal(create.headers["x-api-key"], KEY);

    const fb = await tc.forwardBackward([datum(3), datum(2)], "cross_entropy");
    const opt = await tc.optimStep({ learning_rate: 1e-3 });
    const [fbOut, optOut] = await Promise.all([fb.result(), opt.result()]);
    assert.equal(fbOut.loss_fn_outputs.length, 2);
    assert.deepEqual(fbOut.loss_fn_outputs[0]!["logprobs"]!.shape, [3]);
    assert.equal(optOut.metrics?.["lr:mean"], 1e-3);

    const saved = await (await tc.saveState("step_1")).result();
    assert.equal(saved.path, "tinker://sess:train:0/weights/step_1");
    const forSampler = await (await tc.saveWeightsForSampler("s1")).result();
    assert.equal(forSampler.path, "tinker://sess:train:0/sampler_weights/s1");
    const info = await tc.getInfo();
    assert.equal(info.model_data.tokenizer_id, "org/tok");

    const sc = await tc.createSamplingClient(forSampler.path);
    assert.equal(sc.baseModel, "tiny");
    assert.equal(sc.modelPath, forSampler.path);
    const res = await sc.sample(modelInputFromInts([1, 2]), 2, { max_tokens: 4, temperature: 0.7 });
    assert.equal(res.sequences.length, 2);
    const lps = await sc.computeLogprobs(modelInputFromInts([1, 2]));
    assert.deepEqual(lps, [null, -2]);

    const eph = await tc.saveWeightsAndGetSamplingClient();
    await eph.sample(modelInputFromInts([1]), 1, { max_tokens: 1 });

    // Training requests carry seq_ids 1, 2, … in arrival order; samples count from 0 per sampler.
    const training = fake.seqLog.filter((s) => s.modelId === "sess:train:0");
    assert.deepEqual(
      training.map((s) => s.seqId),
      [1, 2, 3, 4, 5],
    );
    assert.deepEqual(
      fake.seqLog.filter((s) => s.path === "/api/v1/asample").map((s) => `${s.modelId}#${s.seqId}`),
      ["samp-0#0", "samp-0#1", "eph-1#0"],
    );
    assert.ok(env.states.includes("active"));
    assert.ok(env.logger.lines.some((l) => l.includes("welcome")));
    const sampleReq = env.requests.find((r) => r.path === "/api/v1/asample")!;
    assert.equal(sampleReq.headers["x-tinker-sampling-backpressure"], "1");
  });
});

test("chunked forward_backward merges outputs and metrics; forward uses /forward", async () => {
  await withClient({ clientConfig: { fwdbwd_max_chunk_len: 2, parallel_fwdbwd_chunks: true } }, async (service, fake) => {
    const tc = await service.createLoraTrainingClient("tiny");
    const fb = await tc.forwardBackward([datum(1), datum(2), datum(3)], "cross_entropy");
    const opt = await tc.optimStep({});
    const out = await fb.result();
    await opt.result();
    assert.deepEqual(
      out.loss_fn_outputs.map((o) => o["logprobs"]!.data.length),
      [1, 2, 3],
    );
    assert.equal(out.metrics["loss:sum"], 3);
    // chunk sizes 2 and 1: mean of (2, 1) weighted by datums = (2·2 + 1·1) / 3
    assert.equal(out.metrics["datums:mean"], 5 / 3);
    const fwdbwd = fake.seqLog
      .filter((s) => s.path === "/api/v1/forward_backward")
      .map((s) => s.seqId)
      .sort();
    assert.deepEqual(fwdbwd, [1, 2]);
    assert.equal(fake.seqLog.find((s) => s.path === "/api/v1/optim_step")!.seqId, 3);
    assert.equal(fake.seqLog.at(-1)!.path, "/api/v1/optim_step");
    const fwd = await (await tc.forward([datum(2)], "cross_entropy")).result();
    assert.equal(fwd.loss_fn_outputs.length, 1);
    assert.deepEqual(fake.seqLog.at(-1), { modelId: "sess:train:0", seqId: 4, path: "/api/v1/forward" });
  });
});

test("proto_write_fwdbwd sends protobuf forward_backward bodies", async () => {
  await withClient({ clientConfig: { proto_write_fwdbwd: true } }, async (service, fake, env) => {
    const tc = await service.createLoraTrainingClient("tiny");
    const out = await (await tc.forwardBackward([datum(2), datum(2)], "cross_entropy")).result();
    assert.equal(out.loss_fn_outputs.length, 2);
    assert.deepEqual(fake.seqLog.at(-1), { modelId: "sess:train:0", seqId: 1, path: "/api/v1/forward_backward" });
    const req = env.requests.find((r) => r.path === "/api/v1/forward_backward")!;
    assert.equal(req.headers["content-type"], "application/x-protobuf");
  });
});

test("training client from state: weights_info → create_model with its LoRA config → load_weights", async () => {
  await withClient({}, async (service, fake, env) => {
    const tc = await service.createTrainingClientFromStateWithOptimizer("tinker://old:train:0/weights/ckpt");
    assert.equal(tc.baseModel, "tiny");
    const create = env.requests.find((r) => r.path === "/api/v1/create_model")! as unknown as { json(): Record<string, unknown> };
    assert.deepEqual(create.json()["lora_config"], { rank: 8, train_mlp: true, train_attn: false, train_unembed: false });
    const load = env.requests.find((r) => r.path === "/api/v1/load_weights")! as unknown as { json(): Record<string, unknown> };
    assert.equal(load.json()["optimizer"], true);
    assert.equal(load.json()["seq_id"], 1);
    assert.equal(fake.seqLog.length, 1);
    await assert.rejects(tc.loadState("tinker://x/sampler_weights/a"), /expected a tinker:\/\/<model_id>\/weights\/<name> path/);
  });
});

test("REST client: runs, checkpoints, delete with the two-segment id; no session needed", async () => {
  await withClient({}, async (service, _fake, env) => {
    const rest = service.createRestClient();
    const runs = await rest.listTrainingRuns({ limit: 5 });
    assert.equal(runs.training_runs[0]!.training_run_id, "sess:train:0");
    const ckpts = await rest.listCheckpoints("sess:train:0");
    assert.equal(ckpts.checkpoints.length, 1);
    await rest.deleteCheckpointFromTinkerPath("tinker://sess:train:0/sampler_weights/final");
    const del = env.requests.find((r) => r.path.startsWith("/api/v1/training_runs/") && r.path.includes("final"))!;
    assert.equal(decodeURIComponent(del.path), "/api/v1/training_runs/sess:train:0/checkpoints/sampler_weights/final");
    const wi = await rest.getWeightsInfoByTinkerPath("tinker://m/weights/a");
    assert.equal(wi.lora_rank, 8);
    assert.ok(!env.requests.some((r) => r.path === "/api/v1/create_session"));
    assert.deepEqual((await service.getServerCapabilities()).supported_models, [{ model_name: "tiny" }]);
  });
});

test("heartbeat runs on the clock and warns after 120 s of failures without leaking the key", async () => {
  let status = 200;
  await withClient({ heartbeatStatus: () => status }, async (service, _fake, env) => {
    await service.createLoraTrainingClient("tiny");
    assert.equal(env.clock.timerCount, 1);
    const beats = () => env.requests.filter((r) => r.path === "/api/v1/session_heartbeat").length;
    // A tick while a heartbeat is still in flight is skipped, so keep ticking until one lands.
    const tickUntil = async (cond: () => boolean) => {
      for (let i = 0; i < 500 && !cond(); i++) {
        env.clock.fire();
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.ok(cond(), "condition not reached");
    };
    await tickUntil(() => beats() >= 1);
    status = 503;
    env.clock.t += 60_000;
    const before = beats();
    await tickUntil(() => beats() >= before + 2);
    assert.ok(!env.logger.lines.some((l) => l.includes("heartbeat")));
    // The first (successful) beat may finish after the clock moved, so jump well past 120 s.
    env.clock.t += 200_000;
    await tickUntil(() => env.logger.lines.some((l) => /heartbeats have failed for \d+ s/.test(l)));
    const secs = Number(/failed for (\d+) s/.exec(env.logger.lines.find((l) => l.includes("failed for"))!)![1]);
    assert.ok(secs >= 200, `warned after ${secs} s`);
    await service.close();
    assert.equal(env.clock.timerCount, 0);
  });
});

test("argument errors are clear", async () => {
  await withClient({}, async (service) => {
    await assert.rejects(service.createLoraTrainingClient("tiny", { trainMlp: false, trainAttn: false, trainUnembed: false }), /at least one of/);
    await assert.rejects(service.createLoraTrainingClient("tiny", { rank: 12 }), /rank is 12; expected a positive power of two/);
    await assert.rejects(service.createSamplingClient({ modelPath: "/tmp/x" }), /must start with tinker:\/\//);
    const tc = await service.createLoraTrainingClient("tiny");
    await assert.rejects(tc.saveState("bad name"), /checkpoint name "bad name" is invalid/);
    await assert.rejects(tc.optimStep({ learning_rate: -1 }), /invalid adam params \(learning_rate/);
    await assert.rejects(tc.forwardBackward([], "cross_entropy"), /data is empty/);
  });
});

test("sampling backpressure: 429 waits 1 s and resubmits the same seq_id; 410 resubmits the request", async () => {
  const fake = new FakeTinker({});
  let asample = 0;
  let expired = false;
  const server = await startFakeServer((req) => {
    if (req.path === "/api/v1/asample" && asample++ < 2) return { status: 429, json: { detail: "slow down" } };
    if (req.path === "/api/v1/retrieve_future" && !expired) {
      expired = true;
      return { status: 410, json: { detail: "expired" } };
    }
    return fake.handler(req);
  }, 100);
  const clock = new FakeClock();
  const client = new HttpServiceClient({ baseUrl: server.url, clock, logger: new MemoryLogger(), env: {} });
  try {
    const sc = await client.createSamplingClient({ baseModel: "tiny" });
    const res = await sc.sample(modelInputFromInts([1]), 1, { max_tokens: 2 });
    assert.equal(res.sequences.length, 1);
    assert.deepEqual(clock.sleeps, [1000, 1000]);
    const sent = server.requests.filter((r) => r.path === "/api/v1/asample").map((r) => r.json()["seq_id"]);
    assert.deepEqual(sent, [0, 0, 0, 0]);
  } finally {
    await client.close();
    await server.close();
  }
});

test("checkpoint archive URL: 503 waits 30 s, then a 302 Location is returned", async () => {
  let calls = 0;
  const server = await startFakeServer((req) => {
    if (!req.path.endsWith("/archive")) return { status: 404 };
    calls++;
    if (calls === 1) return { status: 503, json: { detail: "packing" } };
    return { status: 302, headers: { location: "https://dl.example/a.tar", expires: "Wed, 21 Oct 2026 07:28:00 GMT" } };
  }, 10);
  const clock = new FakeClock();
  const client = new HttpServiceClient({ baseUrl: server.url, clock, logger: new MemoryLogger(), env: {} });
  try {
    const res = await client.createRestClient().getCheckpointArchiveUrlFromTinkerPath("tinker://m:train:0/weights/final");
    assert.equal(res.url, "https://dl.example/a.tar");
    assert.equal(res.expires.toISOString(), "2026-10-21T07:28:00.000Z");
    assert.deepEqual(clock.sleeps, [30_000]);
    assert.equal(decodeURIComponent(server.requests[0]!.path), "/api/v1/training_runs/m:train:0/checkpoints/weights/final/archive");
  } finally {
    await client.close();
    await server.close();
  }
});
