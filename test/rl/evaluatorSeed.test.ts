// RLTestSetEvaluator with a seed: every group samples from its own seed stream, so two evaluations
// of the same weights report the same metrics whatever order the groups finish in; without a seed
// no sampling request carries one.
import assert from "node:assert/strict";
import { test } from "node:test";
import { RLTestSetEvaluator } from "../../src/rl/evaluator.ts";
import type { SampleOptions, SamplingClient } from "../../src/tinker/clients.ts";
import type { ModelInput, SampleResponse, SamplingParams } from "../../src/tinker/types.ts";
import { FnGroupBuilder, ListDataset, OneTurnEnv } from "./fakes.ts";

/** Answers after a random delay (so groups finish in a random order) with a token fixed by the request's seed. */
class SeedEchoSampler implements SamplingClient {
  readonly baseModel = "fake-model";
  readonly seeds: (number | undefined)[] = [];

  async sample(_prompt: ModelInput, _n: number, params: SamplingParams, _options?: SampleOptions): Promise<SampleResponse> {
    this.seeds.push(params.seed);
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
    const token = params.seed === undefined ? 1 + Math.floor(Math.random() * 9) : 1 + (params.seed % 9);
    return { sequences: [{ tokens: [token], logprobs: [-1], stop_reason: "stop" }] };
  }

  async computeLogprobs(prompt: ModelInput): Promise<(number | null)[]> {
    return prompt.chunks.map(() => null);
  }
}

const dataset = () =>
  new ListDataset([Array.from({ length: 4 }, (_, g) => new FnGroupBuilder(() => new OneTurnEnv([g + 1], (a) => (a.length > 0 ? a[0]! : 0)), 3))]);

test("a seeded evaluation is reproducible, and every rollout draws its own seed", async () => {
  const evaluator = new RLTestSetEvaluator(dataset(), 4, { seed: 5 });
  const sampler = new SeedEchoSampler();
  const first = await evaluator.evaluate(sampler);
  const second = await evaluator.evaluate(sampler);
  assert.deepEqual(second, first);
  const seeds = sampler.seeds.slice(0, 12);
  assert.ok(seeds.every((s) => typeof s === "number"));
  assert.equal(new Set(seeds).size, 12, "4 groups × 3 rollouts, 12 seed streams");
  assert.deepEqual([...sampler.seeds.slice(12)].sort(), [...seeds].sort(), "the second evaluation draws the same seeds");
  const other = new SeedEchoSampler();
  await new RLTestSetEvaluator(dataset(), 4, { seed: 6 }).evaluate(other);
  assert.notDeepEqual([...other.seeds].sort(), [...seeds].sort(), "another seed, other draws");
});

test("without a seed no request is seeded", async () => {
  const sampler = new SeedEchoSampler();
  await new RLTestSetEvaluator(dataset(), 4).evaluate(sampler);
  assert.equal(sampler.seeds.length, 12);
  assert.ok(sampler.seeds.every((s) => s === undefined));
});
