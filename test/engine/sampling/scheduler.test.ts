// The decode scheduler and sampler registry in-process (no worker): batching across requests,
// slot reuse, cache growth, and snapshots that decode with the adapter unmerged.
import { test } from "node:test";
import assert from "node:assert/strict";
import { denseWeight, toFloat32, type BaseArray } from "../../../src/engine/kernels/halfArray.ts";
import { referenceKernels } from "../../../src/engine/kernels/index.ts";
import { parseModelConfig } from "../../../src/engine/model/config.ts";
import { EngineModel } from "../../../src/engine/model/model.ts";
import { resolveSampleRequest, type SampleRequestSpec } from "../../../src/engine/sampling/request.ts";
import { LORA_ALPHA } from "../../../src/engine/model/params.ts";
import { SamplerRegistry } from "../../../src/engine/sampling/samplers.ts";
import { DecodeScheduler, computePromptLogprobs } from "../../../src/engine/sampling/scheduler.ts";
import { randomTokens, tinyConfigJson } from "../helpers.ts";

const config = parseModelConfig(tinyConfigJson(), "tiny");
const weights = EngineModel.randomWeights(config, 13);

function spec(prompt: number[], numSamples: number, seed: number, maxTokens = 6): SampleRequestSpec {
  return {
    prompt: Int32Array.from(prompt),
    numSamples,
    params: { max_tokens: maxTokens, temperature: 1, seed },
    promptLogprobs: false,
    topkPromptLogprobs: 0,
    fallbackSeed: 0,
  };
}

test("concurrent requests decode in one batch per step; results do not depend on the company", async () => {
  const reg = new SamplerRegistry(referenceKernels);
  const s = reg.add("a", { config, weights, adapter: null });
  const sched = new DecodeScheduler();
  const p1 = randomTokens(5, 1);
  const p2 = randomTokens(9, 2);
  const [r1, r2, r3] = await Promise.all([
    sched.submit(s, resolveSampleRequest(spec(p1, 3, 10), s.limits)),
    sched.submit(s, resolveSampleRequest(spec(p2, 2, 20, 10), s.limits)),
    sched.submit(s, resolveSampleRequest(spec(p1, 1, 12), s.limits)),
  ]);
  assert.equal(sched.stats.maxBatch, 6, "all six sequences of the three requests shared decode steps");
  assert.equal(sched.stats.steps, 9, "the longest request (10 tokens) needed 9 decode steps after its prefill");
  assert.deepEqual(r3.sequences[0].tokens, r1.sequences[2].tokens, "seed 12 = sample 2 of seed 10");
  // Samples 1.. of a request read the prompt from sample 0's slot (no copy of it in theirs), and
  // decode as if it were theirs: 2 samples × 5 steps of the first request, 1 × 9 of the second.
  assert.equal(sched.stats.sharedPromptRows, 2 * 5 + 9);
  assert.ok(!sched.busy);
  // Alone, with the cache already released: the same tokens.
  const alone = await sched.submit(s, resolveSampleRequest(spec(p2, 2, 20, 10), s.limits));
  assert.deepEqual(alone.sequences, r2.sequences);
  // More sequences than one batch holds: the rest wait for free slots and still finish.
  const many = await Promise.all(Array.from({ length: 5 }, (_, i) => sched.submit(s, resolveSampleRequest(spec(p1, 20, 100 + 20 * i, 3), s.limits))));
  assert.equal(many.flatMap((r) => r.sequences).length, 100);
  assert.ok(many.every((r) => r.sequences.every((x) => x.tokens.length === 3)));
  const again = await sched.submit(s, resolveSampleRequest(spec(p1, 1, 120, 3), s.limits));
  assert.deepEqual(again.sequences[0].tokens, many[1].sequences[0].tokens, "seed 120 = sample 0 of the second big request");
});

/** The weights the sampler used to decode with: base + (alpha/r)·B·A for every adapted matrix. */
function mergedCopy(base: Map<string, BaseArray>, adapter: Map<string, Float32Array>, rank: number): Map<string, BaseArray> {
  const out = new Map(base);
  for (const [name, a] of adapter) {
    if (!name.endsWith(".lora_A.weight")) continue;
    const module = name.slice("base_model.model.".length, -".lora_A.weight".length);
    const b = adapter.get(name.replace("lora_A", "lora_B"));
    const w = base.get(`${module}.weight`);
    assert.ok(b !== undefined && w !== undefined, module);
    const inDim = a.length / rank;
    const outDim = b.length / rank;
    const m = Float32Array.from(toFloat32(denseWeight(w, module)));
    for (let o = 0; o < outDim; o++) {
      for (let i = 0; i < inDim; i++) {
        let acc = 0;
        for (let r = 0; r < rank; r++) acc += b[o * rank + r] * a[r * inDim + i];
        m[o * inDim + i] += (LORA_ALPHA / rank) * acc;
      }
    }
    out.set(`${module}.weight`, m);
  }
  return out;
}

test("consecutive snapshots of a training model keep no merged copy and decode like the merged weights", async () => {
  const reg = new SamplerRegistry(referenceKernels);
  const setup = { mode: "lora", rank: 2, seed: 1, trainAttn: true, trainMlp: true, trainUnembed: true } as const;
  const model = EngineModel.create(config, weights, setup, referenceKernels);
  const train = [
    {
      inputTokens: Int32Array.from(randomTokens(10, 5)),
      lossInputs: { target_tokens: Int32Array.from(randomTokens(10, 6)), weights: new Float32Array(10).fill(1) },
    },
  ];
  const step = (): void => {
    model.forwardBackward(train, "cross_entropy", undefined, true);
    model.optimStep({ learning_rate: 0.05, beta1: 0.9, beta2: 0.95, eps: 1e-8, weight_decay: 0, grad_clip_norm: 0 });
  };
  const prompt = Int32Array.from(randomTokens(7, 3));
  const sched = new DecodeScheduler();
  const snapshots = [];
  for (const id of ["snap1", "snap2"]) {
    step();
    const adapter = model.trainableTensors();
    const s = reg.add(id, { config, weights: model.baseWeights(), adapter: { rank: 2, tensors: adapter } });
    const inf = s.model();
    let adapterBytes = 0;
    for (const t of adapter.values()) adapterBytes += t.byteLength;
    assert.equal(s.residentBytes, adapterBytes, `${id} holds its adapter factors and no merged matrix`);
    inf.weights.layers.forEach((l, i) => {
      assert.equal(l.down?.weight, weights.get(`model.layers.${i}.mlp.down_proj.weight`), "projections use the shared base arrays");
      assert.ok(l.down !== null && l.down.lora !== null, "and carry their adapter");
    });
    // Same numbers as decoding with a merged copy (what snapshots built before).
    const merged = reg.add(`${id}-merged`, { config, weights: mergedCopy(model.baseWeights(), adapter, 2), adapter: null });
    const got = computePromptLogprobs(inf, prompt);
    const want = computePromptLogprobs(merged.model(), prompt);
    for (let i = 1; i < got.length; i++) assert.ok(Math.abs((got[i] as number) - (want[i] as number)) < 1e-5, `${id} logprob ${i}: ${got[i]} vs ${want[i]}`);
    const a = await sched.submit(s, resolveSampleRequest(spec([...prompt], 2, 7, 8), s.limits));
    const b = await sched.submit(merged, resolveSampleRequest(spec([...prompt], 2, 7, 8), merged.limits));
    assert.deepEqual(
      a.sequences.map((x) => x.tokens),
      b.sequences.map((x) => x.tokens),
      `${id}: sampled tokens`,
    );
    for (let q = 0; q < a.sequences.length; q++) {
      a.sequences[q].logprobs.forEach((lp, i) =>
        assert.ok(Math.abs(lp - b.sequences[q].logprobs[i]) < 1e-4, `${id} sample ${q} token ${i}: ${lp} vs ${b.sequences[q].logprobs[i]}`),
      );
    }
    reg.remove(`${id}-merged`);
    snapshots.push({ s, logprobs: got });
  }
  // Training moved on between snapshots: each sampler stays pinned to its own adapter.
  assert.notDeepEqual(snapshots[0].logprobs, snapshots[1].logprobs);
  assert.deepEqual(computePromptLogprobs(snapshots[0].s.model(), prompt), snapshots[0].logprobs);
  // Two live snapshots together hold two adapters, not a merged model (base here is ~100x an adapter).
  let baseBytes = 0;
  for (const t of weights.values()) baseBytes += t.byteLength;
  assert.ok(snapshots[0].s.residentBytes + snapshots[1].s.residentBytes < baseBytes / 4);
  const base = reg.add("base", { config, weights, adapter: null });
  base.model();
  assert.equal(base.residentBytes, 0, "a base sampler shares the base weights");
});

test("a sample that stops is not decoded further while the request's other samples go on", async () => {
  const reg = new SamplerRegistry(referenceKernels);
  const s = reg.add("a", { config, weights, adapter: null });
  const sched = new DecodeScheduler();
  // A quarter of the vocabulary stops a sample, so samples stop at different lengths.
  const stop = Array.from({ length: Math.floor(config.vocabSize / 4) }, (_, i) => i * 4);
  const req = { ...spec(randomTokens(6, 3), 12, 41, 24), params: { max_tokens: 24, temperature: 1, seed: 41, stop } };
  const r = await sched.submit(s, resolveSampleRequest(req, s.limits));
  const lengths = r.sequences.map((q) => q.tokens.length);
  assert.ok(new Set(lengths).size > 1, `samples stopped at different lengths: ${lengths}`);
  for (const q of r.sequences) {
    const stopAt = q.tokens.findIndex((t) => stop.includes(t));
    if (q.stop_reason === "stop") assert.equal(stopAt, q.tokens.length - 1, `a stopped sample ends at its first stop token: ${q.tokens}`);
    else assert.deepEqual([q.stop_reason, stopAt, q.tokens.length], ["length", -1, 24]);
    assert.equal(q.logprobs.length, q.tokens.length);
  }
  // The first token of every sample comes from the prefill; each later token is one decode row.
  assert.equal(
    sched.stats.tokens,
    lengths.reduce((a, n) => a + n - 1, 0),
    "no decode rows for samples that had stopped",
  );
});
