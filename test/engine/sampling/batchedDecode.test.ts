// Decoding with the native kernels: a sample decoded in a batch equals the same sample decoded
// alone (same seed → same tokens; logprobs within float rounding), prompts prefilled together and
// split across forward calls give the logprobs of one whole-prompt forward, and every sample
// stops at its own stop token. Also for Qwen3.5, whose linear-attention layers carry a recurrent
// state per slot instead of K/V: the same seed gives the same tokens alone, in a batch, with the
// prompt copied to several samples and split across prefill calls.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadNativeKernels } from "../../../src/engine/kernels/native.ts";
import { referenceKernels } from "../../../src/engine/kernels/reference.ts";
import type { Kernels } from "../../../src/engine/kernels/types.ts";
import { parseModelConfig } from "../../../src/engine/model/config.ts";
import { EngineModel } from "../../../src/engine/model/model.ts";
import { resolveSampleRequest, type SampleRequestSpec } from "../../../src/engine/sampling/request.ts";
import { SamplerRegistry } from "../../../src/engine/sampling/samplers.ts";
import { DecodeScheduler, computePromptLogprobs, type SampleResult } from "../../../src/engine/sampling/scheduler.ts";
import { randomTokens, tinyConfigJson } from "../helpers.ts";

// Wide enough that products take the kernels' real paths (vectors, several blocks, tails).
const WIDE = { vocab_size: 300, hidden_size: 72, intermediate_size: 136, num_hidden_layers: 2, max_position_embeddings: 256 };
const MODELS = [
  ["llama", parseModelConfig(tinyConfigJson(WIDE), "tiny")],
  [
    "qwen3_5_text",
    parseModelConfig(
      tinyConfigJson({
        ...WIDE,
        model_type: "qwen3_5_text",
        num_hidden_layers: 3,
        layer_types: ["linear_attention", "full_attention", "linear_attention"],
        linear_num_key_heads: 2,
        linear_num_value_heads: 4,
        linear_key_head_dim: 8,
        linear_value_head_dim: 8,
      }),
      "tiny",
    ),
  ],
] as const;

function spec(prompt: number[], numSamples: number, seed: number, maxTokens: number, extra: Partial<SampleRequestSpec> = {}): SampleRequestSpec {
  return {
    prompt: Int32Array.from(prompt),
    numSamples,
    params: { max_tokens: maxTokens, temperature: 1, seed },
    promptLogprobs: false,
    topkPromptLogprobs: 0,
    fallbackSeed: 0,
    ...extra,
  };
}

function sameSamples(batched: SampleResult["sequences"], alone: SampleResult["sequences"], what: string): void {
  assert.equal(batched.length, alone.length);
  batched.forEach((s, i) => {
    assert.deepEqual(s.tokens, alone[i].tokens, `${what}: sample ${i} tokens`);
    assert.equal(s.stop_reason, alone[i].stop_reason);
    // Not bit for bit: the products are (gemmRowsNT gives a row the same bits at every batch
    // size), but at this tiny width other parts of the step round differently in a batch, and
    // Qwen3.5's recurrent state carries that from token to token (up to 1.5e-4 over 24 tokens).
    s.logprobs.forEach((lp, t) => assert.ok(Math.abs(lp - alone[i].logprobs[t]) < 3e-4, `${what}: sample ${i} token ${t}: ${lp} vs ${alone[i].logprobs[t]}`));
  });
}

for (const [model, config] of MODELS) {
  const weights = EngineModel.randomWeights(config, 21, { std: 0.08 });
  for (const [kernelsName, kernels] of [
    ["native", loadNativeKernels()],
    ["reference", referenceKernels],
  ] as [string, Kernels][]) {
    const name = `${model}, ${kernelsName}`;
    test(`${name} kernels: 1, 4 and 16 samples of a request decode token for token like each sample alone`, async () => {
      const reg = new SamplerRegistry(kernels);
      const s = reg.add("a", { config, weights, adapter: null });
      const sched = new DecodeScheduler();
      const prompt = randomTokens(11, 5).map((t) => t % config.vocabSize);
      for (const n of [4, 16]) {
        const batched = await sched.submit(s, resolveSampleRequest(spec(prompt, n, 300, 24), s.limits));
        const alone = await Promise.all(
          Array.from({ length: n }, async (_, i) => {
            const r = await new DecodeScheduler().submit(s, resolveSampleRequest(spec(prompt, 1, 300 + i, 24), s.limits));
            return r.sequences[0];
          }),
        );
        sameSamples(batched.sequences, alone, `${n} samples`);
        // Each decoded token's logprob is the model's for the whole sequence so far (the cache, or
        // the recurrent state, followed it): to float rounding over a float32 cache, within the
        // f16 cache's 1e-2 over the default one (docs/embedded-engine.md#the-kv-cache).
        const tolerance = s.model().kvDtype === "f32" ? 1e-4 : 1e-2;
        for (const q of batched.sequences.slice(0, 2)) {
          const whole = computePromptLogprobs(s.model(), Int32Array.from([...prompt, ...q.tokens]));
          q.logprobs.forEach((lp, t) =>
            assert.ok(Math.abs(lp - (whole[prompt.length + t] as number)) < tolerance, `token ${t}: ${lp} vs ${whole[prompt.length + t]}`),
          );
        }
        assert.ok(new Set(batched.sequences.map((q) => q.tokens.join(","))).size > n / 2, "the samples differ from each other");
      }
      // More samples than one decode forward takes (64): decoded in two forwards per step.
      const many = await sched.submit(s, resolveSampleRequest(spec(prompt, 70, 500, 4), s.limits));
      assert.ok(many.sequences.every((q) => q.tokens.length === 4));
      const last = await new DecodeScheduler().submit(s, resolveSampleRequest(spec(prompt, 1, 569, 4), s.limits));
      sameSamples(many.sequences.slice(69), last.sequences, "sample 69 of 70");
    });

    test(`${name} kernels: concurrent prompts prefilled together, split across forward calls, equal one whole-prompt forward`, async () => {
      const reg = new SamplerRegistry(kernels);
      const s = reg.add("a", { config, weights, adapter: null });
      // 7 tokens per prefill call: the 20- and 9-token prompts are cut across calls and share some.
      const sched = new DecodeScheduler({ prefillTokens: 7 });
      const prompts = [randomTokens(20, 1), randomTokens(9, 2), randomTokens(3, 3)].map((p) => p.map((t) => t % config.vocabSize));
      const results = await Promise.all(
        prompts.map((p, i) => sched.submit(s, resolveSampleRequest(spec(p, 2, 40 + i, 6, { promptLogprobs: true }), s.limits))),
      );
      results.forEach((r, i) => {
        const want = computePromptLogprobs(s.model(), Int32Array.from(prompts[i]));
        assert.equal(r.prompt_logprobs?.length, prompts[i].length);
        assert.equal(r.prompt_logprobs?.[0], null);
        for (let t = 1; t < want.length; t++) assert.ok(Math.abs((r.prompt_logprobs?.[t] as number) - (want[t] as number)) < 1e-4, `prompt ${i} position ${t}`);
      });
      // And the samples equal each request decoded alone, prefilled in one call.
      for (let i = 0; i < prompts.length; i++) {
        const alone = await new DecodeScheduler().submit(s, resolveSampleRequest(spec(prompts[i], 2, 40 + i, 6), s.limits));
        sameSamples(results[i].sequences, alone.sequences, `prompt ${i}`);
      }
    });

    test(`${name} kernels: each sample ends at its own first stop token while the others go on`, async () => {
      const reg = new SamplerRegistry(kernels);
      const s = reg.add("a", { config, weights, adapter: null });
      const sched = new DecodeScheduler();
      const stop = Array.from({ length: Math.floor(config.vocabSize / 6) }, (_, i) => i * 6);
      const r = await sched.submit(
        s,
        resolveSampleRequest(spec(randomTokens(6, 3), 16, 41, 30, { params: { max_tokens: 30, temperature: 1, seed: 41, stop } }), s.limits),
      );
      const lengths = r.sequences.map((q) => q.tokens.length);
      assert.ok(new Set(lengths).size > 2, `samples stopped at different lengths: ${lengths}`);
      for (const q of r.sequences) {
        const stopAt = q.tokens.findIndex((t) => stop.includes(t));
        if (q.stop_reason === "stop") assert.equal(stopAt, q.tokens.length - 1, `a stopped sample ends at its first stop token: ${q.tokens}`);
        else assert.deepEqual([q.stop_reason, stopAt, q.tokens.length], ["length", -1, 30]);
      }
      assert.equal(
        sched.stats.tokens,
        lengths.reduce((a, n) => a + n - 1, 0),
        "no decode rows for samples that had stopped",
      );
    });
  }
}
