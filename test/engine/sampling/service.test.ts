// Sampling through the embedded service (worker thread, decode scheduler, checkpoint store).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createEmbeddedServiceClient, type EmbeddedServiceClient } from "../../../src/engine/index.ts";
import { loadModelDir } from "../../../src/engine/storage/loadModel.ts";
import { referenceKernels } from "../../../src/engine/kernels/index.ts";
import { EngineModel, type SequenceInput } from "../../../src/engine/model/model.ts";
import { InvalidArgumentError } from "../../../src/tinker/errors.ts";
import type { SamplingClient } from "../../../src/tinker/clients.ts";
import type { ModelInput, SampleResponse } from "../../../src/tinker/types.ts";
import { ceDatum, randomTokens, tempDir, TINY_VOCAB, writeTinyModel } from "../helpers.ts";

let root: { dir: string; cleanup: () => void };
let svc: EmbeddedServiceClient;
let modelDir: string;
let oracle: EngineModel;

/** Token i decodes to the character with code 33 + i ('!' .. '`'): a byte-level BPE without merges. */
function writeTinyTokenizer(dir: string): void {
  const vocab: Record<string, number> = {};
  for (let i = 0; i < TINY_VOCAB; i++) vocab[String.fromCharCode(33 + i)] = i;
  writeFileSync(
    join(dir, "tokenizer.json"),
    JSON.stringify({
      version: "1.0",
      truncation: null,
      padding: null,
      added_tokens: [],
      normalizer: null,
      pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
      post_processor: null,
      decoder: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
      model: {
        type: "BPE",
        dropout: null,
        unk_token: null,
        continuing_subword_prefix: null,
        end_of_word_suffix: null,
        fuse_unk: false,
        byte_fallback: false,
        vocab,
        merges: [],
      },
    }),
  );
  writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify({ tokenizer_class: "PreTrainedTokenizer" }));
}
const text = (tokens: number[]): string => tokens.map((t) => String.fromCharCode(33 + t)).join("");

before(() => {
  root = tempDir("sampling-test-");
  modelDir = join(root.dir, "tiny");
  writeTinyModel(modelDir, { seed: 11 });
  writeTinyTokenizer(modelDir);
  const base = loadModelDir(modelDir);
  oracle = EngineModel.create(base.config, base.weights, { mode: "full", seed: 0 }, referenceKernels);
  svc = createEmbeddedServiceClient({
    storeDir: join(root.dir, "store"),
    kernels: "reference",
    resolve: { env: { HF_HUB_OFFLINE: "1", HF_HOME: join(root.dir, "hf"), COOKBOOK_HOME: root.dir }, fixturesDir: join(root.dir, "fixtures") },
  });
});

after(async () => {
  await svc.close();
  root.cleanup();
});

const mi = (tokens: number[]): ModelInput => ({ chunks: [{ type: "encoded_text", tokens }] });
const PROMPT = randomTokens(6, 21);

/** Raw log-softmax of the next token after `prefix`, for every vocabulary entry, from the training forward. */
function nextLogprobs(prefix: number[]): number[] {
  const batch: SequenceInput[] = Array.from({ length: TINY_VOCAB }, (_, v) => ({
    inputTokens: Int32Array.from(prefix),
    lossInputs: { target_tokens: Int32Array.from([...prefix.slice(1), v]), weights: new Float32Array(prefix.length).fill(1) },
  }));
  return oracle.forwardBackward(batch, "cross_entropy", undefined, false).logprobs.map((lp) => lp[prefix.length - 1]);
}

const tokensOf = (r: SampleResponse): number[][] => r.sequences.map((s) => s.tokens);

test("greedy sampling picks the argmax of the training forward at every step, logprobs included", async () => {
  const sc = await svc.createSamplingClient({ baseModel: modelDir });
  const r = await sc.sample(mi(PROMPT), 2, { max_tokens: 6, temperature: 0 });
  assert.equal(r.sequences.length, 2);
  assert.deepEqual(r.sequences[0], r.sequences[1]);
  const seq = r.sequences[0];
  assert.equal(seq.stop_reason, "length");
  assert.equal(seq.tokens.length, 6);
  const prefix = [...PROMPT];
  seq.tokens.forEach((tok, i) => {
    const lp = nextLogprobs(prefix);
    const best = lp.indexOf(Math.max(...lp));
    assert.equal(tok, best, `step ${i}`);
    assert.ok(Math.abs(seq.logprobs![i] - lp[tok]) < 1e-4, `step ${i} logprob ${seq.logprobs![i]} vs ${lp[tok]}`);
    prefix.push(tok);
  });
});

test("sampled logprobs are log_softmax(z / T) of the training forward's logits", async () => {
  const sc = await svc.createSamplingClient({ baseModel: modelDir });
  const T = 0.6;
  const r = await sc.sample(mi(PROMPT), 1, { max_tokens: 5, temperature: T, seed: 3 });
  const prefix = [...PROMPT];
  r.sequences[0].tokens.forEach((tok, i) => {
    const raw = nextLogprobs(prefix);
    const scaled = raw.map((x) => x / T);
    const m = Math.max(...scaled);
    const lse = m + Math.log(scaled.reduce((a, x) => a + Math.exp(x - m), 0));
    assert.ok(Math.abs(r.sequences[0].logprobs![i] - (scaled[tok] - lse)) < 1e-4, `step ${i}`);
    prefix.push(tok);
  });
});

test("computeLogprobs and prompt logprobs equal the training forward's logprobs; top-k prompt logprobs are sorted", async () => {
  const sc = await svc.createSamplingClient({ baseModel: modelDir });
  const tokens = randomTokens(10, 5);
  const expected = oracle.forwardBackward(
    [
      {
        inputTokens: Int32Array.from(tokens.slice(0, -1)),
        lossInputs: { target_tokens: Int32Array.from(tokens.slice(1)), weights: new Float32Array(9).fill(1) },
      },
    ],
    "cross_entropy",
    undefined,
    false,
  ).logprobs[0];
  const lp = await sc.computeLogprobs(mi(tokens));
  assert.equal(lp.length, 10);
  assert.equal(lp[0], null);
  lp.slice(1).forEach((x, i) => assert.ok(Math.abs((x as number) - expected[i]) < 1e-4, `${i}: ${x} vs ${expected[i]}`));
  const r = await sc.sample(mi(tokens), 1, { max_tokens: 1 }, { includePromptLogprobs: true, topkPromptLogprobs: 3 });
  assert.deepEqual(r.prompt_logprobs, lp);
  const topk = r.topk_prompt_logprobs!;
  assert.equal(topk.length, 10);
  assert.equal(topk[0], null);
  for (let t = 1; t < 10; t++) {
    const all = nextLogprobs(tokens.slice(0, t));
    const order = all
      .map((x, i) => [i, x] as const)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3);
    assert.deepEqual(
      topk[t]!.map(([id]) => id),
      order.map(([id]) => id),
    );
    topk[t]!.forEach(([, x], j) => assert.ok(Math.abs(x - order[j][1]) < 1e-4));
  }
});

test("top_k and top_p restrict the support", async () => {
  const sc = await svc.createSamplingClient({ baseModel: modelDir });
  const lp = nextLogprobs(PROMPT);
  const order = lp
    .map((x, i) => [i, x] as const)
    .sort((a, b) => b[1] - a[1])
    .map(([i]) => i);
  const firsts = async (params: Parameters<SamplingClient["sample"]>[2]): Promise<Set<number>> =>
    new Set(tokensOf(await sc.sample(mi(PROMPT), 48, { ...params, max_tokens: 1 })).map((t) => t[0]));
  const k3 = await firsts({ temperature: 5, top_k: 3, seed: 1 });
  assert.ok(
    [...k3].every((t) => order.slice(0, 3).includes(t)),
    `top_k=3 sampled ${[...k3]}`,
  );
  assert.equal(k3.size, 3);
  assert.deepEqual([...(await firsts({ temperature: 5, top_p: 1e-6, seed: 2 }))], [order[0]]);
  const free = await firsts({ temperature: 5, seed: 3 });
  assert.ok(free.size > 5, "without limits a hot temperature spreads over many tokens");
});

test("stop token ids end a sample with the stop token kept; stop strings end it once the text contains them", async () => {
  const sc = await svc.createSamplingClient({ baseModel: modelDir });
  const greedy = (await sc.sample(mi(PROMPT), 1, { max_tokens: 10, temperature: 0 })).sequences[0].tokens;
  const stopTok = greedy[3];
  const cut = greedy.indexOf(stopTok);
  const r = await sc.sample(mi(PROMPT), 1, { max_tokens: 10, temperature: 0, stop: [stopTok, 63] });
  assert.equal(r.sequences[0].stop_reason, "stop");
  assert.deepEqual(r.sequences[0].tokens, greedy.slice(0, cut + 1));
  assert.equal(r.sequences[0].logprobs!.length, cut + 1);
  // A string spanning tokens 2 and 3 of the greedy text.
  const s = text(greedy.slice(2, 4));
  const firstEnd = greedy.findIndex((_, i) => text(greedy.slice(0, i + 1)).includes(s));
  const rs = await sc.sample(mi(PROMPT), 1, { max_tokens: 10, temperature: 0, stop: [s] });
  assert.equal(rs.sequences[0].stop_reason, "stop");
  assert.deepEqual(rs.sequences[0].tokens, greedy.slice(0, firstEnd + 1));
  const single = await sc.sample(mi(PROMPT), 1, { max_tokens: 10, temperature: 0, stop: s });
  assert.deepEqual(single.sequences[0].tokens, rs.sequences[0].tokens);
  const none = await sc.sample(mi(PROMPT), 1, { max_tokens: 10, temperature: 0, stop: ["\u00ff never"] });
  assert.equal(none.sequences[0].stop_reason, "length");
  assert.deepEqual(none.sequences[0].tokens, greedy);
});

test("seeding: sample i of a request uses seed + i, whatever the batch around it", async () => {
  const sc = await svc.createSamplingClient({ baseModel: modelDir });
  const params = { max_tokens: 8, temperature: 1.2, seed: 100 };
  const four = tokensOf(await sc.sample(mi(PROMPT), 4, params));
  assert.deepEqual(tokensOf(await sc.sample(mi(PROMPT), 4, params)), four, "same seed, same samples");
  assert.ok(new Set(four.map((t) => t.join())).size > 1, "the samples of one request differ");
  // Four concurrent requests of one sample (batched together by the scheduler) with seeds 100..103.
  const concurrent = await Promise.all([0, 1, 2, 3].map((i) => sc.sample(mi(PROMPT), 1, { ...params, seed: 100 + i })));
  assert.deepEqual(
    concurrent.map((r) => r.sequences[0].tokens),
    four,
  );
  // One at a time, and mixed with an unrelated request of another prompt.
  for (let i = 0; i < 4; i++) {
    const [alone] = await Promise.all([sc.sample(mi(PROMPT), 1, { ...params, seed: 100 + i }), sc.sample(mi(randomTokens(3, 9)), 3, { max_tokens: 12 })]);
    assert.deepEqual(alone.sequences[0].tokens, four[i]);
  }
  assert.notDeepEqual(tokensOf(await sc.sample(mi(PROMPT), 4, { ...params, seed: 7 })), four);
});

test("a batched decode of 16 samples gives the tokens of 16 separate decodes", async () => {
  const sc = await svc.createSamplingClient({ baseModel: modelDir });
  const params = { max_tokens: 12, temperature: 0.9, seed: 5000 };
  const batched = await sc.sample(mi(PROMPT), 16, params);
  for (let i = 0; i < 16; i++) {
    const alone = await sc.sample(mi(PROMPT), 1, { ...params, seed: 5000 + i });
    assert.deepEqual(alone.sequences[0].tokens, batched.sequences[i].tokens, `sample ${i}`);
    alone.sequences[0].logprobs!.forEach((x, j) => assert.ok(Math.abs(x - batched.sequences[i].logprobs![j]) < 1e-5));
  }
});

test("saveWeightsAndGetSamplingClient pins a snapshot; checkpoints reload to identical samples", async () => {
  const tc = await svc.createLoraTrainingClient(modelDir, { rank: 4, seed: 3 });
  const baseSc = await svc.createSamplingClient({ baseModel: modelDir });
  const data = [ceDatum(randomTokens(12, 31)), ceDatum(randomTokens(12, 32))];
  const params = { max_tokens: 8, temperature: 1, seed: 77 };
  const train = async (): Promise<void> => {
    const fb = await tc.forwardBackward(data, "cross_entropy");
    const op = await tc.optimStep({ learning_rate: 0.05 });
    await fb.result();
    await op.result();
  };
  const untrained = await tc.saveWeightsAndGetSamplingClient();
  assert.deepEqual(await untrained.computeLogprobs(mi(PROMPT)), await baseSc.computeLogprobs(mi(PROMPT)), "B = 0: the snapshot is the base model");
  await train();
  await train();
  // Submitted right after the steps (not awaited in between): the snapshot sees both.
  const snap = await tc.saveWeightsAndGetSamplingClient();
  const lpSnap = await snap.computeLogprobs(mi(PROMPT));
  const fwd = await (await tc.forward([ceDatum(PROMPT)], "cross_entropy")).result();
  lpSnap.slice(1).forEach((x, i) => assert.ok(Math.abs((x as number) - fwd.loss_fn_outputs[0].logprobs!.data[i]) < 1e-4));
  assert.notDeepEqual(lpSnap, await baseSc.computeLogprobs(mi(PROMPT)), "trained snapshot differs from the base");
  const before0 = await snap.sample(mi(PROMPT), 4, params);
  const sampler = await (await tc.saveWeightsForSampler("s1")).result();
  const state = await (await tc.saveState("w1")).result();
  await train();
  assert.deepEqual(await snap.sample(mi(PROMPT), 4, params), before0, "training after the snapshot does not reach it");
  assert.deepEqual(await snap.computeLogprobs(mi(PROMPT)), lpSnap);
  for (const path of [sampler.path, state.path]) {
    const reloaded = await svc.createSamplingClient({ modelPath: path });
    assert.equal(reloaded.modelPath, path);
    assert.equal(reloaded.baseModel, modelDir);
    assert.deepEqual(tokensOf(await reloaded.sample(mi(PROMPT), 4, params)), tokensOf(before0), path);
  }
  const viaTraining = await tc.createSamplingClient(sampler.path);
  assert.deepEqual(tokensOf(await viaTraining.sample(mi(PROMPT), 4, params)), tokensOf(before0));
  await tc.unload();
});

test("full-weight training: the snapshot copies the weights", async () => {
  const tc = await svc.createFullTrainingClient(modelDir);
  const snap = await tc.saveWeightsAndGetSamplingClient();
  const lp0 = await snap.computeLogprobs(mi(PROMPT));
  const fb = await tc.forwardBackward([ceDatum(randomTokens(12, 41))], "cross_entropy");
  await (await tc.optimStep({ learning_rate: 0.05 })).result();
  await fb.result();
  assert.deepEqual(await snap.computeLogprobs(mi(PROMPT)), lp0);
  const after1 = await (await tc.saveWeightsAndGetSamplingClient()).computeLogprobs(mi(PROMPT));
  assert.notDeepEqual(after1, lp0);
  const ckpt = await (await tc.saveWeightsForSampler("full1")).result();
  assert.deepEqual(await (await svc.createSamplingClient({ modelPath: ckpt.path })).computeLogprobs(mi(PROMPT)), after1);
  await tc.unload();
});

test("bad requests fail with clear errors and the engine keeps working", async () => {
  const sc = await svc.createSamplingClient({ baseModel: modelDir });
  const cases: [() => Promise<unknown>, RegExp][] = [
    [() => sc.sample(mi([]), 1, { max_tokens: 4 }), /prompt is empty/],
    [() => sc.computeLogprobs(mi([])), /prompt is empty/],
    [() => sc.sample(mi(PROMPT), 1, { max_tokens: 0 }), /max_tokens must be a positive integer, got 0/],
    [() => sc.sample(mi(PROMPT), 1, { max_tokens: 123 }), /Prompt length plus max_tokens exceeds the model's context window: 6 \+ 123 > 128/],
    [() => sc.sample(mi(PROMPT), 1, { max_tokens: 4, stop: ["ab", 3] as unknown as string[] }), /mixes strings and token ids/],
    [() => sc.sample(mi(PROMPT), 0, { max_tokens: 4 }), /num_samples must be a positive integer, got 0/],
    [() => sc.sample(mi([1, 64, 2]), 1, { max_tokens: 4 }), /prompt token 1 is 64, outside the model's vocabulary \(ids 0\.\.63\)/],
    [() => sc.sample(mi(PROMPT), 1, { max_tokens: 4, stop: [99] }), /token id 99 is outside/],
    [() => sc.sample(mi(PROMPT), 1, { max_tokens: 4, temperature: -1 }), /temperature must be a finite number >= 0/],
    [() => sc.sample(mi(PROMPT), 1, { max_tokens: 4, top_p: 0 }), /top_p must be in \(0, 1\]/],
    [() => sc.sample(mi(PROMPT), 1, { max_tokens: 4, top_k: -2 }), /top_k must be -1/],
    [() => svc.createSamplingClient({}), /needs modelPath/],
    [() => svc.createSamplingClient({ modelPath: "tinker://nope/sampler_weights/x" }), /not found/],
  ];
  for (const [call, message] of cases)
    await assert.rejects(call, (err: Error) =>
      err instanceof InvalidArgumentError || message.test(err.message) ? assert.match(err.message, message) === undefined : false,
    );
  const ok = await sc.sample(mi(PROMPT), 2, { max_tokens: 3, temperature: 0 });
  assert.equal(ok.sequences.length, 2);
  // A model without a tokenizer cannot use stop strings, and says so.
  const bare = join(root.dir, "bare");
  writeTinyModel(bare, { seed: 2 });
  const bareSc = await svc.createSamplingClient({ baseModel: bare });
  await assert.rejects(bareSc.sample(mi(PROMPT), 1, { max_tokens: 3, stop: ["x"] }), /has no tokenizer\.json; pass stop token ids instead/);
  assert.equal((await bareSc.sample(mi(PROMPT), 1, { max_tokens: 3, stop: [1] })).sequences.length, 1);
});
