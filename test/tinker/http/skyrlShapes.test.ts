// The client against a server that answers as SkyRL tx does (test/tinker/http/fakeTinker.ts with
// `skyrl: true`): explicit nulls, short sampler paths, prompt logprobs without the leading null.
import { test } from "node:test";
import assert from "node:assert/strict";
import { HttpServiceClient } from "../../../src/tinker/http/serviceClient.ts";
import { alignPromptLogprobs } from "../../../src/tinker/http/samplingClient.ts";
import { modelInputFromInts } from "../../../src/tinker/modelInput.ts";
import { FakeClock, MemoryLogger, startFakeServer } from "./fakeServer.ts";
import { FakeTinker } from "./fakeTinker.ts";

async function withSkyrl(body: (c: HttpServiceClient, requests: { path: string }[]) => Promise<void>): Promise<void> {
  const fake = new FakeTinker({ skyrl: true });
  const server = await startFakeServer(fake.handler, 300);
  const client = new HttpServiceClient({ baseUrl: server.url, clock: new FakeClock(), logger: new MemoryLogger(), env: {} });
  try {
    await body(client, server.requests);
  } finally {
    await client.close();
    await server.close();
  }
}

test("SkyRL answers: named and ephemeral sampler saves with null fields, the short path kept and sampled from", async () => {
  await withSkyrl(async (service) => {
    const tc = await service.createLoraTrainingClient("tiny", { rank: 8 });
    const named = await (await tc.saveWeightsForSampler("s1")).result();
    // Kept as the server gave it, so checkpoints.jsonl records what that server understands.
    assert.equal(named.path, "tinker://sess:train:0/s1");
    const sc = await tc.createSamplingClient(named.path);
    assert.equal(sc.modelPath, named.path);
    const eph = await tc.saveWeightsAndGetSamplingClient();
    const res = await eph.sample(modelInputFromInts([4, 5, 6]), 1, { max_tokens: 1 }, { includePromptLogprobs: true });
    assert.deepEqual(res.prompt_logprobs, [null, -5, -6]);
    assert.equal(res.topk_prompt_logprobs, undefined);
    assert.deepEqual(await sc.computeLogprobs(modelInputFromInts([7, 8])), [null, -8]);
    const info = await tc.getInfo();
    assert.equal(info.model_id, tc.modelId);
    assert.equal(info.model_data.model_name, undefined);
  });
});

test("SkyRL REST: checkpoints without optional fields; the archive of a short sampler path by its bare name", async () => {
  await withSkyrl(async (service, requests) => {
    const rest = service.createRestClient();
    const list = await rest.listCheckpoints("m");
    assert.equal(list.checkpoints[0]!.public, false);
    assert.equal(list.cursor, undefined);
    const short = await rest.getCheckpointArchiveUrlFromTinkerPath("tinker://m/s1");
    assert.match(short.url, /\/training_runs\/m\/checkpoints\/s1\/download$/);
    // A full-form sampler path SkyRL does not know under sampler_weights/ is tried by its bare name.
    const full = await rest.getCheckpointArchiveUrlFromTinkerPath("tinker://m/sampler_weights/s1");
    assert.equal(full.url, short.url);
    assert.deepEqual(
      requests.filter((r) => r.path.endsWith("/archive")).map((r) => r.path),
      [
        "/api/v1/training_runs/m/checkpoints/s1/archive",
        "/api/v1/training_runs/m/checkpoints/sampler_weights/s1/archive",
        "/api/v1/training_runs/m/checkpoints/s1/archive",
      ],
    );
  });
});

test("prompt logprobs are aligned by length, with or without the leading null; other lengths are an error", () => {
  const prompt = modelInputFromInts([1, 2, 3]);
  const seq = [{ stop_reason: "length" as const, tokens: [9] }];
  assert.deepEqual(alignPromptLogprobs({ sequences: seq, prompt_logprobs: [-2, -3] }, prompt).prompt_logprobs, [null, -2, -3]);
  assert.deepEqual(alignPromptLogprobs({ sequences: seq, prompt_logprobs: [null, -2, -3] }, prompt).prompt_logprobs, [null, -2, -3]);
  const topk = alignPromptLogprobs({ sequences: seq, topk_prompt_logprobs: [[[1, -0.5]], [[2, -0.7]]] }, prompt).topk_prompt_logprobs;
  assert.deepEqual(topk, [null, [[1, -0.5]], [[2, -0.7]]]);
  assert.throws(
    () => alignPromptLogprobs({ sequences: seq, prompt_logprobs: [-3] }, prompt),
    /prompt_logprobs has 1 entries for a prompt of 3 tokens; expected 3 \(or 2 without the leading null\)/,
  );
  const untouched = { sequences: seq };
  assert.equal(alignPromptLogprobs(untouched, prompt), untouched);
});
