// compute_logprobs through the decode scheduler: requests that arrive together are packed into
// shared prefill forwards (with each other and with sample prompts), each result equals the
// unbatched one-prompt forward (computePromptLogprobs, float32) to float rounding, and it is the
// same bit for bit whatever the sampling cache holds (prompts always run over float32).
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadNativeKernels } from "../../../src/engine/kernels/native.ts";
import type { Kernels } from "../../../src/engine/kernels/types.ts";
import { parseModelConfig } from "../../../src/engine/model/config.ts";
import { EngineModel } from "../../../src/engine/model/model.ts";
import { inferenceModel, type KvDtype } from "../../../src/engine/sampling/forward.ts";
import { resolveSampleRequest } from "../../../src/engine/sampling/request.ts";
import { computePromptLogprobs, DecodeScheduler, type SamplerHandle } from "../../../src/engine/sampling/scheduler.ts";
import { buildInferenceWeights } from "../../../src/engine/sampling/weights.ts";
import { randomTokens, tinyConfigJson } from "../helpers.ts";

const config = parseModelConfig(
  tinyConfigJson({ vocab_size: 300, hidden_size: 72, intermediate_size: 136, num_hidden_layers: 2, max_position_embeddings: 1024 }),
  "tiny",
);
const weights = EngineModel.randomWeights(config, 11, { std: 0.08 });

/** Native kernels that count forward calls (one embedding gather each). */
function counting(): { kernels: Kernels; forwards: () => number } {
  const k = loadNativeKernels();
  let n = 0;
  const kernels: Kernels = {
    ...k,
    embeddingForward: (...a) => {
      n++;
      k.embeddingForward(...a);
    },
  };
  return { kernels, forwards: () => n };
}

function handle(kernels: Kernels, kv: KvDtype): SamplerHandle {
  const inf = inferenceModel(buildInferenceWeights(config, weights, null), kernels, kv);
  return {
    id: `h-${kv}`,
    limits: { vocabSize: config.vocabSize, contextLength: config.maxPositionEmbeddings },
    model: () => inf,
    decoder: () => Promise.reject(new Error("no tokenizer")),
  };
}

const prompts = [1, 5, 70, 130, 300, 600].map((n, i) => Int32Array.from(randomTokens(n, 40 + i).map((t) => t % config.vocabSize)));

for (const kv of ["f32", "f16"] as const) {
  test(`compute_logprobs (${kv} cache): concurrent requests share prefill forwards and equal the one-prompt forward`, async () => {
    const { kernels, forwards } = counting();
    const h = handle(kernels, kv);
    const sched = new DecodeScheduler();
    const batched = await Promise.all(prompts.map((p) => sched.submitLogprobs(h, p)));
    // 1106 tokens in forwards of up to 512: 3 calls, where one request at a time takes 7.
    assert.equal(forwards(), 3);
    assert.equal(sched.busy, false);
    assert.equal(h.model().scratch, null, "an idle sampler keeps no buffers");
    prompts.forEach((p, i) => {
      const alone = computePromptLogprobs(h.model(), p);
      assert.equal(batched[i].length, p.length);
      assert.equal(batched[i][0], null);
      for (let t = 1; t < p.length; t++) {
        const d = Math.abs((batched[i][t] as number) - (alone[t] as number));
        assert.ok(d < 1e-4, `prompt ${i} token ${t}: ${batched[i][t]} vs ${alone[t]}`);
      }
    });
  });
}

test("compute_logprobs over the f16 sampling cache is bit-equal to the float32 one's, alone and prefilled beside sample requests", async () => {
  const [h16, h32] = [handle(loadNativeKernels(), "f16"), handle(loadNativeKernels(), "f32")];
  const sample = (h: SamplerHandle) =>
    resolveSampleRequest(
      { prompt: prompts[2], numSamples: 4, params: { max_tokens: 6, temperature: 1, seed: 3 }, promptLogprobs: true, topkPromptLogprobs: 2, fallbackSeed: 0 },
      h.limits,
    );
  const run = async (h: SamplerHandle) => {
    const sched = new DecodeScheduler();
    const alone = await Promise.all(prompts.map((p) => sched.submitLogprobs(h, p)));
    const [s, ...mixed] = await Promise.all([sched.submit(h, sample(h)), ...prompts.map((p) => sched.submitLogprobs(h, p))]);
    return { alone, mixed, prompt: s.prompt_logprobs, topk: s.topk_prompt_logprobs, first: s.sequences.map((q) => q.logprobs[0]) };
  };
  const [half, full] = [await run(h16), await run(h32)];
  assert.deepEqual(half.alone, full.alone);
  assert.deepEqual(half.mixed, full.mixed);
  assert.deepEqual(half.prompt, full.prompt);
  assert.deepEqual(half.topk, full.topk);
  assert.deepEqual(half.first, full.first, "each sample's first token is drawn from the float32 prompt's last row");
});

test("compute_logprobs requests prefilled with a sample request leave its samples as they are alone", async () => {
  const h = handle(loadNativeKernels(), "f16");
  const prompt = Int32Array.from(randomTokens(30, 9).map((t) => t % config.vocabSize));
  const req = () =>
    resolveSampleRequest(
      { prompt, numSamples: 3, params: { max_tokens: 20, temperature: 1, seed: 4 }, promptLogprobs: false, topkPromptLogprobs: 0, fallbackSeed: 0 },
      h.limits,
    );
  const alone = await new DecodeScheduler().submit(h, req());
  const sched = new DecodeScheduler();
  const [mixed, lp] = await Promise.all([sched.submit(h, req()), sched.submitLogprobs(h, prompts[3]), sched.submitLogprobs(h, prompts[2])]);
  assert.deepEqual(
    mixed.sequences.map((s) => s.tokens),
    alone.sequences.map((s) => s.tokens),
  );
  assert.equal(lp.length, prompts[3].length);
});
