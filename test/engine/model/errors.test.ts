// Bad input gives errors that say what was wrong, and the model stays usable afterwards.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { referenceKernels } from "../../../src/engine/kernels/reference.ts";
import { EngineModel, type SequenceInput } from "../../../src/engine/model/model.ts";
import type { LossFnName } from "../../../src/tinker/types.ts";
import { LORA_ALL, inputsFor, makeModel64, randomizeTrainable, tinyBatch, tinyConfig, tinyWeights } from "./helpers.ts";

const config = tinyConfig("llama");

function withInput(batch: SequenceInput[], datum: number, key: string, value: Float32Array | Int32Array | undefined): SequenceInput[] {
  return batch.map((d, s) => {
    if (s !== datum) return d;
    const lossInputs = { ...d.lossInputs };
    if (value === undefined) delete lossInputs[key];
    else lossInputs[key] = value;
    return { inputTokens: d.inputTokens, lossInputs };
  });
}

describe("forwardBackward input errors leave the model usable", () => {
  const good = inputsFor(tinyBatch(config), "cross_entropy");
  const rl = inputsFor(tinyBatch(config), "ppo");
  const cases: Array<[string, () => [SequenceInput[], string], RegExp]> = [
    [
      "input token outside the vocabulary",
      () => {
        const b = good.map((d) => ({ ...d, inputTokens: Int32Array.from(d.inputTokens) }));
        b[1].inputTokens[2] = 23;
        return [b, "cross_entropy"];
      },
      /datum 1: model_input token\[2\] = 23 is outside the vocabulary \(ids 0\.\.22, vocab_size 23\)/,
    ],
    [
      "negative target token",
      () => [withInput(good, 0, "target_tokens", Int32Array.from([1, 2, -1, 3, 4])), "cross_entropy"],
      /datum 0: target_tokens\[2\] = -1 is outside the vocabulary/,
    ],
    ["unknown loss", () => [good, "mse"], /unknown loss function "mse"; known: cross_entropy, importance_sampling, ppo, cispo, dro/],
    [
      "missing weights for cross_entropy",
      () => [withInput(good, 1, "weights", undefined), "cross_entropy"],
      /datum 1: loss cross_entropy needs loss input "weights" \(given: target_tokens\)/,
    ],
    ["missing advantages for ppo", () => [withInput(rl, 0, "advantages", undefined), "ppo"], /datum 0: loss ppo needs loss input "advantages"/],
    [
      "length mismatch",
      () => [withInput(good, 0, "weights", new Float32Array(4)), "cross_entropy"],
      /datum 0: loss input "weights" has length 4 but model_input has 5 tokens/,
    ],
    [
      "a key the loss does not use",
      () => [withInput(good, 0, "advantages", new Float32Array(5)), "cross_entropy"],
      /datum 0: loss input "advantages" is not used by cross_entropy; it accepts target_tokens, weights/,
    ],
    [
      "non-finite values",
      () => [withInput(rl, 1, "logprobs", Float32Array.from([0, Number.NaN, 0])), "ppo"],
      /datum 1: loss input "logprobs"\[1\] is NaN, expected a finite number/,
    ],
    [
      "sequence longer than max_position_embeddings",
      () => {
        const n = 65;
        return [[{ inputTokens: new Int32Array(n), lossInputs: { target_tokens: new Int32Array(n), weights: new Float32Array(n) } }], "cross_entropy"];
      },
      /datum 0: 65 tokens exceed the model's max_position_embeddings \(64\)/,
    ],
    [
      "empty datum",
      () => [[{ inputTokens: new Int32Array(0), lossInputs: { target_tokens: new Int32Array(0), weights: new Float32Array(0) } }], "cross_entropy"],
      /datum 0: model_input is empty/,
    ],
  ];
  for (const [name, make, pattern] of cases) {
    it(name, () => {
      const model = makeModel64(config, LORA_ALL);
      randomizeTrainable(model, 1);
      model.forwardBackward(good, "cross_entropy", undefined, true);
      const gradsBefore = model.parameters().map((p) => Float64Array.from(p.grad ?? []));
      const expected = model.forwardBackward(good, "cross_entropy", undefined, false);
      const [batch, loss] = make();
      assert.throws(() => model.forwardBackward(batch, loss as LossFnName, undefined, true), pattern);
      assert.deepEqual(
        model.parameters().map((p) => Float64Array.from(p.grad ?? [])),
        gradsBefore,
      );
      assert.deepEqual(model.forwardBackward(good, "cross_entropy", undefined, false), expected);
    });
  }

  it("an empty batch is fine and returns nothing", () => {
    const model = makeModel64(config, LORA_ALL);
    const out = model.forwardBackward([], "cross_entropy", undefined, true);
    assert.deepEqual(out.logprobs, []);
    assert.equal(out.metrics["loss:sum"], 0);
  });
});

describe("create and load errors", () => {
  const weights = tinyWeights(config);
  it("rank must be a power of two, and something must be trained", () => {
    assert.throws(() => EngineModel.create(config, weights, { ...LORA_ALL, rank: 6 }, referenceKernels), /LoRA rank must be a positive power of two .* got 6/);
    assert.throws(() => EngineModel.create(config, weights, { ...LORA_ALL, rank: 0 }, referenceKernels), /got 0/);
    assert.throws(
      () => EngineModel.create(config, weights, { ...LORA_ALL, trainAttn: false, trainMlp: false, trainUnembed: false }, referenceKernels),
      /at least one of train_attn, train_mlp, train_unembed must be true/,
    );
  });

  it("weights: missing, wrongly sized and unexpected tensors are named", () => {
    const missing = new Map(weights);
    missing.delete("model.layers.1.mlp.up_proj.weight");
    assert.throws(() => EngineModel.create(config, missing, LORA_ALL, referenceKernels), /1 tensor\(s\) missing .*model\.layers\.1\.mlp\.up_proj\.weight/);
    const wrong = new Map(weights);
    wrong.set("model.layers.0.self_attn.k_proj.weight", new Float32Array(10));
    assert.throws(
      () => EngineModel.create(config, wrong, LORA_ALL, referenceKernels),
      /"model\.layers\.0\.self_attn\.k_proj\.weight" has 10 elements, expected shape \[8, 12\] \(96 elements\)/,
    );
    const extra = new Map(weights);
    extra.set("model.layers.0.self_attn.q_proj.bias", new Float32Array(16));
    assert.throws(
      () => EngineModel.create(config, extra, LORA_ALL, referenceKernels),
      /unexpected tensor\(s\) for a llama model: model\.layers\.0\.self_attn\.q_proj\.bias/,
    );
  });

  it("a tied checkpoint may still carry lm_head.weight, and rotary buffers are ignored", () => {
    const tied = tinyConfig("llama", { tieWordEmbeddings: true });
    const w = tinyWeights(tied);
    w.set("lm_head.weight", w.get("model.embed_tokens.weight") ?? new Float32Array(0));
    w.set("model.layers.0.self_attn.rotary_emb.inv_freq", new Float32Array(2));
    assert.ok(EngineModel.create(tied, w, LORA_ALL, referenceKernels));
  });

  it("float64 needs the reference kernels", () => {
    const fake = { ...referenceKernels, name: "native" as const };
    assert.throws(() => EngineModel.create(config, weights, LORA_ALL, fake, { dtype: "float64" }), /dtype float64 needs the reference kernels/);
  });

  it("loadTrainableTensors checks names and sizes before changing anything", () => {
    const model = EngineModel.create(config, weights, LORA_ALL, referenceKernels);
    const good = model.trainableTensors();
    const renamed = new Map(good);
    const aName = "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight";
    const bName = "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight";
    renamed.set(bName, new Float32Array(good.get(bName)?.length ?? 0).fill(1));
    renamed.delete(aName);
    assert.throws(() => model.loadTrainableTensors(renamed), new RegExp(`tensor "${aName.replace(/\./g, "\\.")}" is missing`));
    const resized = new Map(good);
    resized.set(aName, new Float32Array(5));
    assert.throws(() => model.loadTrainableTensors(resized), /has 5 elements, expected shape \[2, 12\] \(24 elements\)/);
    const extra = new Map(good);
    extra.set("lm_head.weight", new Float32Array(1));
    assert.throws(() => model.loadTrainableTensors(extra), /unexpected tensor\(s\) for this lora model: lm_head\.weight/);
    assert.deepEqual(model.trainableTensors(), good);
  });
});
