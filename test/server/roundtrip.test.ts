// Our HTTP client against `cookbook serve` in-process: the training calls, checkpoints and REST
// queries behave like the embedded engine, with the same numbers for the same seed and data.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import type { EmbeddedServiceClient } from "../../src/engine/index.ts";
import type { TrainingClient } from "../../src/tinker/clients.ts";
import type { Datum, ForwardBackwardOutput } from "../../src/tinker/types.ts";
import { ceDatum, client, embedded, makeEnv, randomTokens, serve, type Env, type Served } from "./helpers.ts";

let env: Env;
let served: Served;
let emb: EmbeddedServiceClient;

before(async () => {
  env = makeEnv();
  served = await serve(env);
  emb = embedded(env);
});

after(async () => {
  await emb.close();
  await served.server.close();
  env.cleanup();
});

const DATA: Datum[] = [ceDatum(randomTokens(12, 1)), ceDatum(randomTokens(9, 2)), ceDatum(randomTokens(6, 3), [0, 0, 1, 1, 1])];

export function assertClose(a: number, b: number, what: string, tol = 1e-5): void {
  assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(a), Math.abs(b)), `${what}: ${a} vs ${b}`);
}

export function assertSameOutput(a: ForwardBackwardOutput, b: ForwardBackwardOutput, what: string): void {
  assert.deepEqual(Object.keys(a.metrics).sort(), Object.keys(b.metrics).sort(), `${what}: metric keys`);
  for (const k of Object.keys(a.metrics)) assertClose(a.metrics[k]!, b.metrics[k]!, `${what}: ${k}`);
  assert.equal(a.loss_fn_outputs.length, b.loss_fn_outputs.length);
  a.loss_fn_outputs.forEach((o, i) => {
    const x = o["logprobs"]!.data;
    const y = b.loss_fn_outputs[i]!["logprobs"]!.data;
    assert.equal(x.length, y.length, `${what}: datum ${i} length`);
    x.forEach((v, t) => assertClose(v, y[t]!, `${what}: datum ${i} token ${t}`));
  });
}

async function step(tc: TrainingClient, lr = 1e-2): Promise<{ fb: ForwardBackwardOutput; opt: Record<string, number> | undefined }> {
  const fb = await tc.forwardBackward(DATA, "cross_entropy");
  const opt = await tc.optimStep({ learning_rate: lr });
  const [fbOut, optOut] = await Promise.all([fb.result(), opt.result()]);
  return { fb: fbOut, opt: optOut.metrics };
}

for (const proto of [false, true]) {
  test(`training over HTTP (${proto ? "protobuf" : "JSON"} bodies) matches the embedded engine step for step`, async () => {
    const remote = client(served.server.url, { protoForwardBackward: proto });
    try {
      const tcR = await remote.createLoraTrainingClient(env.modelDir, { rank: 4, seed: 1 });
      const tcE = await emb.createLoraTrainingClient(env.modelDir, { rank: 4, seed: 1 });
      for (let i = 0; i < 3; i++) {
        const r = await step(tcR);
        const e = await step(tcE);
        assertSameOutput(r.fb, e.fb, `step ${i}`);
        assert.deepEqual(Object.keys(r.opt ?? {}).sort(), Object.keys(e.opt ?? {}).sort());
        for (const k of Object.keys(e.opt ?? {})) assertClose(r.opt![k]!, e.opt![k]!, `step ${i} optim ${k}`);
      }
      // The loss went down, so the steps really trained.
      const first = await (await tcR.forward(DATA, "cross_entropy")).result();
      await step(tcR);
      const second = await (await tcR.forward(DATA, "cross_entropy")).result();
      assert.ok(second.metrics["loss:sum"]! < first.metrics["loss:sum"]!);

      const info = await tcR.getInfo();
      assert.equal(info.model_id, tcR.modelId);
      assert.equal(info.is_lora, true);
      assert.equal(info.lora_rank, 4);
    } finally {
      await remote.close();
    }
  });
}

test("save_state, new clients from state (with and without optimizer), and the REST endpoints", async () => {
  const remote = client(served.server.url);
  try {
    const tc = await remote.createLoraTrainingClient(env.modelDir, { rank: 4, seed: 2 });
    await step(tc);
    const saved = await (await tc.saveState("after-one")).result();
    assert.equal(saved.path, `tinker://${tc.modelId}/weights/after-one`);

    // Weights only: the same forward pass as the client that saved them.
    const fresh = await remote.createTrainingClientFromState(saved.path);
    assert.notEqual(fresh.modelId, tc.modelId);
    const a = await (await tc.forward(DATA, "cross_entropy")).result();
    const b = await (await fresh.forward(DATA, "cross_entropy")).result();
    assertSameOutput(a, b, "loaded weights");

    // With the optimizer: the next step is the same step the original takes.
    const resumed = await remote.createTrainingClientFromStateWithOptimizer(saved.path);
    const s1 = await step(tc);
    const s2 = await step(resumed);
    assertSameOutput(s1.fb, s2.fb, "resumed step");
    const after1 = await (await tc.forward(DATA, "cross_entropy")).result();
    const after2 = await (await resumed.forward(DATA, "cross_entropy")).result();
    assertSameOutput(after1, after2, "after resumed step");

    // A second save under the same name is a conflict that reaches the caller.
    await assert.rejects(async () => (await tc.saveState("after-one")).result(), /exists|409|already/i);

    const sampler = await (await tc.saveWeightsForSampler("for-sampler")).result();
    assert.equal(sampler.path, `tinker://${tc.modelId}/sampler_weights/for-sampler`);

    const rest = remote.createRestClient();
    const runs = await rest.listTrainingRuns({ limit: 100 });
    assert.ok(runs.training_runs.some((r) => r.training_run_id === tc.modelId));
    const run = await rest.getTrainingRun(tc.modelId);
    assert.equal(run.lora_rank, 4);
    const cps = await rest.listCheckpoints(tc.modelId);
    assert.deepEqual(cps.checkpoints.map((c) => c.checkpoint_id).sort(), ["sampler_weights/for-sampler", "weights/after-one"]);
    const wi = await rest.getWeightsInfoByTinkerPath(saved.path);
    assert.equal(wi.lora_rank, 4);
    assert.equal(wi.is_lora, true);
    const all = await rest.listUserCheckpoints();
    assert.ok(all.checkpoints.some((c) => c.tinker_path === saved.path));
    await rest.deleteCheckpointFromTinkerPath(sampler.path);
    const left = await rest.listCheckpoints(tc.modelId);
    assert.deepEqual(
      left.checkpoints.map((c) => c.checkpoint_id),
      ["weights/after-one"],
    );
    await assert.rejects(rest.deleteCheckpointFromTinkerPath(sampler.path), /404|not found/i);
  } finally {
    await remote.close();
  }
});

test("sampling through the server: ephemeral and named samplers match in-process sampling", async () => {
  const remote = client(served.server.url);
  try {
    const tc = await remote.createLoraTrainingClient(env.modelDir, { rank: 4, seed: 3 });
    await step(tc);
    const sc = await tc.saveWeightsAndGetSamplingClient();
    const prompt = DATA[0]!.model_input;
    const res = await sc.sample(prompt, 2, { max_tokens: 5, temperature: 1, seed: 11 });
    assert.equal(res.sequences.length, 2);
    for (const s of res.sequences) {
      assert.ok(s.tokens.length >= 1 && s.tokens.length <= 5);
      assert.equal(s.logprobs?.length, s.tokens.length);
    }
    const lps = await sc.computeLogprobs(prompt);
    assert.equal(lps[0], null);
    assert.equal(lps.length, (prompt.chunks[0] as { tokens: number[] }).tokens.length);
    // The same checkpoint sampled in-process gives the same tokens for the same seed.
    const named = await (await tc.saveWeightsForSampler("s")).result();
    const remoteNamed = await remote.createSamplingClient({ modelPath: named.path });
    const viaServer = await remoteNamed.sample(prompt, 2, { max_tokens: 5, seed: 11 });
    const local = embedded(env, "served-store");
    try {
      const localSampler = await local.createSamplingClient({ modelPath: named.path });
      const inProcess = await localSampler.sample(prompt, 2, { max_tokens: 5, seed: 11 });
      assert.deepEqual(
        viaServer.sequences.map((s) => s.tokens),
        inProcess.sequences.map((s) => s.tokens),
      );
      viaServer.sequences.forEach((s, i) => s.logprobs!.forEach((lp, t) => assertClose(lp, inProcess.sequences[i]!.logprobs![t]!, `sample ${i} token ${t}`)));
    } finally {
      await local.close();
    }
  } finally {
    await remote.close();
  }
});

test("chunks posted in parallel, first chunk last, are ordered by seq_id and sum like one call", async () => {
  const remote = client(served.server.url);
  try {
    const tcR = await remote.createLoraTrainingClient(env.modelDir, { rank: 4, seed: 4 });
    const tcE = await emb.createLoraTrainingClient(env.modelDir, { rank: 4, seed: 4 });
    // One datum per chunk: three requests for one call, sent concurrently with the first one last.
    remote.ctx.flags = { ...remote.ctx.flags, fwdbwdMaxChunkLen: 1, parallelFwdbwdChunks: true };
    for (let i = 0; i < 2; i++) {
      const r = await step(tcR);
      const e = await step(tcE);
      assertSameOutput(r.fb, e.fb, `chunked step ${i}`);
    }
  } finally {
    await remote.close();
  }
});

test("several clients train at once, each model in its own order, with the embedded engine's numbers", async () => {
  const seeds = [5, 6, 7];
  const remotes = seeds.map(() => client(served.server.url));
  try {
    const train = async (tc: TrainingClient): Promise<number[]> => {
      const losses: number[] = [];
      for (let i = 0; i < 3; i++) losses.push((await step(tc)).fb.metrics["loss:sum"]!);
      return losses;
    };
    const servedLosses = await Promise.all(seeds.map(async (seed, i) => train(await remotes[i]!.createLoraTrainingClient(env.modelDir, { rank: 4, seed }))));
    for (const [i, seed] of seeds.entries()) {
      const expected = await train(await emb.createLoraTrainingClient(env.modelDir, { rank: 4, seed }));
      expected.forEach((l, k) => assertClose(servedLosses[i]![k]!, l, `seed ${seed} step ${k}`));
    }
  } finally {
    await Promise.all(remotes.map((r) => r.close()));
  }
});

test("a session keeps its most recently used samplers; older ones are released", async () => {
  const small = await serve(env, { maxSamplersPerSession: 2 }, "sampler-store");
  const remote = client(small.server.url);
  try {
    const tc = await remote.createLoraTrainingClient(env.modelDir, { rank: 4, seed: 8 });
    const prompt = DATA[1]!.model_input;
    const s1 = await tc.saveWeightsAndGetSamplingClient();
    const s2 = await tc.saveWeightsAndGetSamplingClient();
    await s1.sample(prompt, 1, { max_tokens: 2, seed: 1 }); // s1 is now more recent than s2
    await tc.saveWeightsAndGetSamplingClient();
    await s1.sample(prompt, 1, { max_tokens: 2, seed: 1 });
    await assert.rejects(s2.sample(prompt, 1, { max_tokens: 2, seed: 1 }), /404|not found/);
  } finally {
    await remote.close();
    await small.server.close();
  }
});
