// Tinker training semantics of the model: summed losses, gradient accumulation, forward without
// gradients, AdamW against a hand computation, checkpoint round trips.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { referenceKernels } from "../../../src/engine/kernels/reference.ts";
import { EngineModel, type SequenceInput, type TrainableSetup } from "../../../src/engine/model/model.ts";
import type { ResolvedAdamParams } from "../../../src/tinker/types.ts";
import { FULL, LORA_ALL, inputsFor, makeModel64, randomizeTrainable, tinyBatch, tinyConfig, tinyWeights } from "./helpers.ts";

const config = tinyConfig("qwen2", { tieWordEmbeddings: true });

function grads(model: EngineModel): Float64Array[] {
  return model.parameters().map((p) => Float64Array.from(p.grad ?? []));
}

function assertArraysClose(a: Float64Array[], b: Float64Array[], rtol: number, what: string): void {
  assert.equal(a.length, b.length);
  let nonzero = false;
  for (let j = 0; j < a.length; j++) {
    for (let i = 0; i < a[j].length; i++) {
      if (a[j][i] !== 0) nonzero = true;
      assert.ok(Math.abs(a[j][i] - b[j][i]) <= rtol * (Math.abs(b[j][i]) + 1e-12), `${what}: tensor ${j}[${i}] ${a[j][i]} vs ${b[j][i]}`);
    }
  }
  assert.ok(nonzero, `${what}: all zero`);
}

describe("loss values and sum semantics", () => {
  it("cross_entropy loss:sum is -Σ w·lp over all tokens of all datums, with per-datum logprobs", () => {
    const model = makeModel64(config, LORA_ALL);
    const batch = inputsFor(tinyBatch(config), "cross_entropy");
    const out = model.forwardBackward(batch, "cross_entropy", undefined, false);
    assert.deepEqual(
      out.logprobs.map((l) => l.length),
      [5, 3],
    );
    let expected = 0;
    batch.forEach((d, s) => d.lossInputs.weights.forEach((w, i) => (expected += -w * out.logprobs[s][i])));
    assert.ok(Math.abs(out.lossSum - expected) < 1e-5, `${out.lossSum} vs ${expected}`);
    assert.equal(out.metrics["loss:sum"], out.lossSum);
    for (const lp of out.logprobs.flatMap((l) => Array.from(l))) assert.ok(lp < 0 && lp > -20);
    const elementwise = out.elementwiseLoss ?? [];
    assert.ok(Math.abs(elementwise.flatMap((e) => Array.from(e)).reduce((a, b) => a + b, 0) - out.lossSum) < 1e-5);
  });

  it("importance_sampling loss:sum is -Σ exp(lp - q)·A", () => {
    const model = makeModel64(config, LORA_ALL);
    const batch = inputsFor(tinyBatch(config), "importance_sampling");
    const out = model.forwardBackward(batch, "importance_sampling", undefined, false);
    let expected = 0;
    batch.forEach((d, s) => d.lossInputs.advantages.forEach((a, i) => (expected += -Math.exp(out.logprobs[s][i] - d.lossInputs.logprobs[i]) * a)));
    assert.ok(Math.abs(out.lossSum - expected) < 1e-5 * Math.abs(expected), `${out.lossSum} vs ${expected}`);
  });

  it("losses and gradients add up: a duplicated datum doubles them (no averaging)", () => {
    const model = makeModel64(config, LORA_ALL);
    randomizeTrainable(model, 3);
    const [d] = inputsFor(tinyBatch(config), "cross_entropy");
    const one = model.forwardBackward([d], "cross_entropy", undefined, true);
    const g1 = grads(model);
    model.zeroGrad();
    const two = model.forwardBackward([d, d], "cross_entropy", undefined, true);
    assert.ok(Math.abs(two.lossSum - 2 * one.lossSum) < 1e-12 * Math.abs(one.lossSum));
    assertArraysClose(
      grads(model),
      g1.map((g) => g.map((x) => 2 * x)),
      1e-10,
      "doubled gradients",
    );
  });

  it("two forward_backward calls accumulate the same gradients as one call on the union", () => {
    const model = makeModel64(config, FULL);
    const batch = inputsFor(tinyBatch(config, 5, [4, 6, 2]), "ppo");
    model.forwardBackward(batch.slice(0, 2), "ppo", undefined, true);
    model.forwardBackward(batch.slice(2), "ppo", undefined, true);
    const split = grads(model);
    model.zeroGrad();
    model.forwardBackward(batch, "ppo", undefined, true);
    assertArraysClose(split, grads(model), 1e-10, "accumulated gradients");
  });

  it("packing: each datum's logprobs are the same alone or in a batch", () => {
    const model = makeModel64(config, LORA_ALL);
    randomizeTrainable(model, 8);
    const batch = inputsFor(tinyBatch(config, 6, [3, 7, 1, 5]), "cross_entropy");
    const together = model.forwardBackward(batch, "cross_entropy", undefined, false).logprobs;
    batch.forEach((d, s) => assert.deepEqual(model.forwardBackward([d], "cross_entropy", undefined, false).logprobs[0], together[s]));
  });

  it("forward (backward = false) leaves accumulated gradients untouched", () => {
    const model = makeModel64(config, LORA_ALL);
    randomizeTrainable(model, 4);
    const batch = inputsFor(tinyBatch(config), "cross_entropy");
    model.forwardBackward(batch, "cross_entropy", undefined, true);
    const before = grads(model);
    model.forwardBackward(batch, "cross_entropy", undefined, false);
    assert.deepEqual(grads(model), before);
  });
});

function handAdam(p: number, g: number, m: number, v: number, t: number, a: ResolvedAdamParams, scale: number): [number, number, number] {
  const gs = g * scale;
  const m1 = a.beta1 * m + (1 - a.beta1) * gs;
  const v1 = a.beta2 * v + (1 - a.beta2) * gs * gs;
  const mhat = m1 / (1 - a.beta1 ** t);
  const vhat = v1 / (1 - a.beta2 ** t);
  return [p * (1 - a.learning_rate * a.weight_decay) - (a.learning_rate * mhat) / (Math.sqrt(vhat) + a.eps), m1, v1];
}

describe("optimStep", () => {
  it("matches AdamW by hand over two steps: bias correction, decoupled weight decay, global-norm clipping", () => {
    const model = makeModel64(config, LORA_ALL);
    randomizeTrainable(model, 6);
    const batch = inputsFor(tinyBatch(config), "cross_entropy");
    const adam: ResolvedAdamParams = { learning_rate: 0.01, beta1: 0.8, beta2: 0.9, eps: 1e-8, weight_decay: 0.1, grad_clip_norm: 0 };
    const n = model.parameters().length;
    const m = Array.from({ length: n }, (_, j) => new Float64Array(model.parameters()[j].data.length));
    const v = m.map((x) => new Float64Array(x.length));
    for (let t = 1; t <= 2; t++) {
      model.forwardBackward(batch, "cross_entropy", undefined, true);
      const g = grads(model);
      const p = model.parameters().map((x) => Float64Array.from(x.data));
      let ss = 0;
      for (const gj of g) for (const x of gj) ss += x * x;
      const norm = Math.sqrt(ss);
      // Clip on the second step only, at half the norm.
      const a = { ...adam, grad_clip_norm: t === 2 ? norm / 2 : 0 };
      const scale = t === 2 ? norm / 2 / (norm + 1e-6) : 1;
      const metrics = model.optimStep(a);
      assert.ok(Math.abs(metrics["grad_norm:mean"] - norm) < 1e-12 * norm);
      assert.equal(metrics["learning_rate:mean"], 0.01);
      const after = model.parameters();
      for (let j = 0; j < n; j++) {
        for (let i = 0; i < p[j].length; i++) {
          const [pe, me, ve] = handAdam(p[j][i], g[j][i], m[j][i], v[j][i], t, a, scale);
          m[j][i] = me;
          v[j][i] = ve;
          assert.ok(Math.abs(after[j].data[i] - pe) <= 1e-12 * (1 + Math.abs(pe)), `step ${t} ${after[j].name}[${i}]: ${after[j].data[i]} vs ${pe}`);
        }
        assert.ok(
          (after[j].grad ?? []).every((x) => x === 0),
          "gradients are zeroed after the step",
        );
      }
    }
    const state = model.optimizerState();
    assert.equal(state.step, 2);
  });

  it("a zero gradient moves nothing without weight decay (B of LoRA starts at zero and stays there)", () => {
    const model = makeModel64(config, LORA_ALL);
    const before = model.trainableTensors();
    model.optimStep({ learning_rate: 0.1, beta1: 0.9, beta2: 0.95, eps: 1e-12, weight_decay: 0, grad_clip_norm: 0 });
    assert.deepEqual(model.trainableTensors(), before);
  });

  it("rejects bad Adam parameters without changing anything", () => {
    const model = makeModel64(config, LORA_ALL);
    assert.throws(
      () => model.optimStep({ learning_rate: -1, beta1: 0.9, beta2: 0.95, eps: 1e-12, weight_decay: 0, grad_clip_norm: 0 }),
      /adam_params.learning_rate must be a finite number >= 0, got -1/,
    );
    assert.throws(
      () => model.optimStep({ learning_rate: 1e-3, beta1: 1, beta2: 0.95, eps: 1e-12, weight_decay: 0, grad_clip_norm: 0 }),
      /adam_params.beta1 must be in \[0, 1\)/,
    );
    assert.equal(model.optimizerState().step, 0);
  });
});

describe("checkpoint round trips (float32)", () => {
  const adam: ResolvedAdamParams = { learning_rate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weight_decay: 0.01, grad_clip_norm: 1 };
  function trained(setup: TrainableSetup = LORA_ALL): { model: EngineModel; batch: SequenceInput[] } {
    const model = EngineModel.create(config, tinyWeights(config), setup, referenceKernels);
    const batch = inputsFor(tinyBatch(config), "cross_entropy");
    for (let i = 0; i < 2; i++) {
      model.forwardBackward(batch, "cross_entropy", undefined, true);
      model.optimStep(adam);
    }
    return { model, batch };
  }

  it("trainableTensors → loadTrainableTensors reproduces the logprobs exactly", () => {
    for (const setup of [LORA_ALL, FULL]) {
      const { model, batch } = trained(setup);
      const fresh = EngineModel.create(config, tinyWeights(config), setup, referenceKernels);
      const before = fresh.forwardBackward(batch, "cross_entropy", undefined, false).logprobs;
      const expected = model.forwardBackward(batch, "cross_entropy", undefined, false).logprobs;
      assert.notDeepEqual(before, expected, "training changed nothing");
      fresh.loadTrainableTensors(model.trainableTensors());
      assert.deepEqual(fresh.forwardBackward(batch, "cross_entropy", undefined, false).logprobs, expected);
    }
  });

  it("LoRA names follow PEFT; full mode uses HF names and baseWeights() shows the trained values", () => {
    const { model } = trained();
    const names = [...model.trainableTensors().keys()];
    assert.ok(names.includes("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"));
    assert.ok(names.includes("base_model.model.model.layers.1.mlp.down_proj.lora_B.weight"));
    assert.ok(names.includes("base_model.model.lm_head.lora_A.weight"));
    assert.deepEqual(model.trainableTensors().get("base_model.model.model.layers.0.mlp.up_proj.lora_A.weight")?.length, 2 * 12);
    assert.deepEqual(model.trainableTensors().get("base_model.model.model.layers.0.mlp.up_proj.lora_B.weight")?.length, 20 * 2);
    assert.deepEqual([...model.baseWeights().keys()].sort(), [...tinyWeights(config).keys()].sort());
    const full = trained(FULL).model;
    const trainedEmbed = full.trainableTensors().get("model.embed_tokens.weight");
    assert.deepEqual(full.baseWeights().get("model.embed_tokens.weight"), trainedEmbed);
    assert.notDeepEqual(trainedEmbed, tinyWeights(config).get("model.embed_tokens.weight"));
  });

  it("optimizer state save/restore is exact: the resumed model takes the same next step", () => {
    const { model, batch } = trained();
    const resumed = EngineModel.create(config, tinyWeights(config), LORA_ALL, referenceKernels);
    resumed.loadTrainableTensors(model.trainableTensors());
    resumed.loadOptimizerState(model.optimizerState());
    assert.equal(resumed.optimizerState().step, 2);
    for (const m of [model, resumed]) {
      m.forwardBackward(batch, "cross_entropy", undefined, true);
      m.optimStep(adam);
    }
    assert.deepEqual(resumed.trainableTensors(), model.trainableTensors());
    assert.deepEqual(resumed.optimizerState(), model.optimizerState());
  });

  it("resetOptimizerState starts the moments and step count over", () => {
    const { model } = trained();
    model.resetOptimizerState();
    const s = model.optimizerState();
    assert.equal(s.step, 0);
    for (const m of s.m.values()) assert.ok(m.every((x) => x === 0));
  });

  it("rejects a mismatched optimizer state without changing the current one", () => {
    const { model } = trained();
    const good = model.optimizerState();
    const bad = { step: 1, m: new Map(good.m), v: new Map(good.v) };
    bad.v.delete("base_model.model.lm_head.lora_B.weight");
    assert.throws(() => model.loadOptimizerState(bad), /v is missing tensor "base_model.model.lm_head.lora_B.weight"/);
    const wrongSize = { step: 1, m: new Map(good.m), v: good.v };
    wrongSize.m.set("base_model.model.lm_head.lora_A.weight", new Float32Array(3));
    assert.throws(() => model.loadOptimizerState(wrongSize), /m\["base_model.model.lm_head.lora_A.weight"\] has 3 elements, expected 24 \(shape \[2, 12\]\)/);
    assert.deepEqual(model.optimizerState(), good);
  });
});

describe("LoRA initialisation", () => {
  it("A ~ U(-1/sqrt(in), 1/sqrt(in)) seeded, B = 0, scale 32/r", () => {
    const a = EngineModel.create(config, tinyWeights(config), LORA_ALL, referenceKernels).trainableTensors();
    const same = EngineModel.create(config, tinyWeights(config), LORA_ALL, referenceKernels).trainableTensors();
    const other = EngineModel.create(config, tinyWeights(config), { ...LORA_ALL, seed: 8 }, referenceKernels).trainableTensors();
    assert.deepEqual(a, same);
    const name = "base_model.model.model.layers.0.mlp.down_proj.lora_A.weight";
    assert.notDeepEqual(a.get(name), other.get(name));
    const A = a.get(name) ?? new Float32Array(0);
    const bound = 1 / Math.sqrt(20);
    assert.ok(A.every((x) => Math.abs(x) <= bound) && Math.max(...A.map(Math.abs)) > bound / 2);
    for (const [n, t] of a) if (n.includes("lora_B")) assert.ok(t.every((x) => x === 0));
  });
});

describe("learning", () => {
  it("full training from random weights and LoRA training both memorise a short sequence", () => {
    for (const setup of [FULL, { ...LORA_ALL, rank: 4 }] as TrainableSetup[]) {
      const model = EngineModel.create(config, EngineModel.randomWeights(config, 3, { std: 0.1 }), setup, referenceKernels);
      const seq = [1, 5, 9, 2, 7, 7, 3, 11, 4];
      const batch: SequenceInput[] = [
        {
          inputTokens: Int32Array.from(seq.slice(0, -1)),
          lossInputs: { target_tokens: Int32Array.from(seq.slice(1)), weights: new Float32Array(seq.length - 1).fill(1) },
        },
      ];
      const adam: ResolvedAdamParams = {
        learning_rate: setup.mode === "full" ? 1e-2 : 2e-2,
        beta1: 0.9,
        beta2: 0.95,
        eps: 1e-8,
        weight_decay: 0,
        grad_clip_norm: 1,
      };
      const first = model.forwardBackward(batch, "cross_entropy", undefined, true).lossSum;
      model.optimStep(adam);
      for (let i = 0; i < 40; i++) {
        model.forwardBackward(batch, "cross_entropy", undefined, true);
        model.optimStep(adam);
      }
      const last = model.forwardBackward(batch, "cross_entropy", undefined, false).lossSum;
      assert.ok(first > 8 * Math.log(23) * 0.9, `initial loss ${first} should be near uniform (${8 * Math.log(23)})`);
      assert.ok(last < 0.1 * first, `${setup.mode}: loss went from ${first} to ${last}`);
    }
  });
});
