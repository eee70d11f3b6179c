// The decode scheduler and sampler registry in-process (no worker): batching across requests,
// slot reuse, cache growth, and eviction of merged weights.
import { test } from "node:test";
import assert from "node:assert/strict";
import { referenceKernels } from "../../../src/engine/kernels/index.ts";
import { parseModelConfig } from "../../../src/engine/model/config.ts";
import { EngineModel } from "../../../src/engine/model/model.ts";
import { resolveSampleRequest, type SampleRequestSpec } from "../../../src/engine/sampling/request.ts";
import { SamplerRegistry } from "../../../src/engine/sampling/samplers.ts";
import { DecodeScheduler, computePromptLogprobs } from "../../../src/engine/sampling/scheduler.ts";
import { randomTokens, tinyConfigJson } from "../helpers.ts";

const config = parseModelConfig(tinyConfigJson(), "tiny");
const weights = EngineModel.randomWeights(config, 13);

function spec(prompt: number[], numSamples: number, seed: number, maxTokens = 6): SampleRequestSpec {
  return { prompt: Int32Array.from(prompt), numSamples, params: { max_tokens: maxTokens, temperature: 1, seed }, promptLogprobs: false, topkPromptLogprobs: 0, fallbackSeed: 0 };
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

test("merged weights over the budget are evicted and rebuilt identically", () => {
  const reg = new SamplerRegistry(referenceKernels, 0);
  const model = EngineModel.create(config, weights, { mode: "lora", rank: 2, seed: 1, trainAttn: true, trainMlp: true, trainUnembed: true }, referenceKernels);
  // A nonzero B so the merge changes the weights.
  for (const t of model.parameters()) if (t.name.includes("lora_B")) t.data.fill(0.01);
  const a = reg.add("a", { config, weights, adapter: { rank: 2, tensors: model.trainableTensors() } });
  const b = reg.add("b", { config, weights, adapter: { rank: 2, tensors: model.trainableTensors() } });
  const prompt = Int32Array.from(randomTokens(7, 3));
  const first = computePromptLogprobs(a.model(), prompt);
  assert.ok(a.residentBytes > 0);
  b.model();
  assert.equal(a.residentBytes, 0, "building b evicted a");
  assert.deepEqual(computePromptLogprobs(a.model(), prompt), first);
  const base = reg.add("base", { config, weights, adapter: null });
  base.model();
  assert.equal(base.residentBytes, 0, "a base sampler shares the base weights");
  assert.notDeepEqual(computePromptLogprobs(base.model(), prompt), first);
});
