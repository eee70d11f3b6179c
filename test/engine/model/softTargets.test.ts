// cross_entropy with [N, K] target_tokens and weights (soft targets, as off-policy distillation
// sends a teacher's top-K tokens): loss Σ_k −w_k·lp(t_k) per position.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { datumToSequenceInput, toForwardBackwardOutput } from "../../../src/engine/convert.ts";
import { loadNativeKernels } from "../../../src/engine/kernels/native.ts";
import { referenceKernels } from "../../../src/engine/kernels/reference.ts";
import { EngineModel, type SequenceInput } from "../../../src/engine/model/model.ts";
import { tensorDataFromFloat32, tensorDataFromInt64, tensorShape } from "../../../src/tinker/tensorData.ts";
import { FULL, LORA_ALL, gradCheck, makeModel64, makeRng, randomizeTrainable, tinyConfig, tinyWeights } from "./helpers.ts";

const config = tinyConfig("llama", { tieWordEmbeddings: true });
const V = config.vocabSize;

/** Datums of the given lengths with K distinct targets per position and positive weights. */
function softBatch(lengths: number[], widths: number[], seed = 11): SequenceInput[] {
  const rng = makeRng(seed);
  return lengths.map((n, s) => {
    const K = widths[s];
    const targets = new Int32Array(n * K);
    const weights = new Float32Array(n * K);
    for (let i = 0; i < n; i++) {
      const start = Math.floor(rng() * V);
      for (let k = 0; k < K; k++) {
        targets[i * K + k] = (start + 3 * k) % V;
        weights[i * K + k] = 0.1 + rng();
      }
    }
    return {
      inputTokens: Int32Array.from({ length: n }, () => Math.floor(rng() * V)),
      lossInputs: { target_tokens: targets, weights },
      targetWidth: K,
    };
  });
}

/** Column k of a soft batch as an ordinary one-target batch (zero weight where a datum has no column k). */
function column(batch: SequenceInput[], k: number): SequenceInput[] {
  return batch.map((d) => {
    const K = d.targetWidth ?? 1;
    const n = d.inputTokens.length;
    const kk = Math.min(k, K - 1);
    return {
      inputTokens: d.inputTokens,
      lossInputs: {
        target_tokens: Int32Array.from({ length: n }, (_, i) => d.lossInputs.target_tokens[i * K + kk]),
        weights: Float32Array.from({ length: n }, (_, i) => (k < K ? d.lossInputs.weights[i * K + k] : 0)),
      },
    };
  });
}

function grads(model: EngineModel): Float64Array[] {
  return model.parameters().map((p) => Float64Array.from(p.grad ?? []));
}

describe("soft-target cross_entropy ([N, K] targets)", () => {
  it("loss, logprobs and gradients equal the sum over the K one-target batches (mixed widths 3 and 1)", () => {
    const model = makeModel64(config, LORA_ALL);
    randomizeTrainable(model, 3);
    const batch = softBatch([5, 4], [3, 1]);
    model.zeroGrad();
    const soft = model.forwardBackward(batch, "cross_entropy", undefined, true);
    const softGrads = grads(model);
    assert.deepEqual(soft.logprobWidths, [3, 1]);
    assert.equal(soft.logprobs[0].length, 15);
    assert.equal(soft.logprobs[1].length, 4);

    model.zeroGrad();
    let lossSum = 0;
    for (let k = 0; k < 3; k++) {
      const r = model.forwardBackward(column(batch, k), "cross_entropy", undefined, true);
      lossSum += r.lossSum;
      for (let i = 0; i < 5; i++) assert.ok(Math.abs(r.logprobs[0][i] - soft.logprobs[0][i * 3 + k]) < 1e-6, `logprob [${i}, ${k}]`);
      if (k === 0) for (let i = 0; i < 4; i++) assert.ok(Math.abs(r.logprobs[1][i] - soft.logprobs[1][i]) < 1e-6);
    }
    assert.ok(Math.abs(lossSum - soft.lossSum) < 1e-9 * Math.abs(lossSum), `${lossSum} vs ${soft.lossSum}`);
    const sumGrads = grads(model);
    softGrads.forEach((g, j) => {
      let maxAbs = 0;
      for (let i = 0; i < g.length; i++) maxAbs = Math.max(maxAbs, Math.abs(g[i]));
      assert.ok(maxAbs > 1e-4, `${model.parameters()[j].name}: no gradient`);
      for (let i = 0; i < g.length; i++) assert.ok(Math.abs(g[i] - sumGrads[j][i]) <= 1e-9 * maxAbs);
    });
  });

  it("a position's loss is −Σ w_k·log softmax(logits)[t_k], by hand from the model's own full distribution", () => {
    const model = makeModel64(config, FULL);
    const batch = softBatch([3], [4], 5);
    const soft = model.forwardBackward(batch, "cross_entropy", undefined, false);
    // log-probs of every vocabulary entry at each position, from V one-target forwards
    const n = 3;
    const all = Array.from(
      { length: V },
      (_, v) =>
        model.forwardBackward(
          [
            {
              inputTokens: batch[0].inputTokens,
              lossInputs: { target_tokens: new Int32Array(n).fill(v), weights: new Float32Array(n).fill(1) },
            },
          ],
          "cross_entropy",
          undefined,
          false,
        ).logprobs[0],
    );
    let expected = 0;
    for (let i = 0; i < n; i++) {
      let z = 0;
      for (let v = 0; v < V; v++) z += Math.exp(all[v][i]);
      // logprobs come back as float32 (the wire type)
      assert.ok(Math.abs(z - 1) < 1e-5, "the one-target log-probs are a distribution");
      for (let k = 0; k < 4; k++) {
        const t = batch[0].lossInputs.target_tokens[i * 4 + k];
        expected += -batch[0].lossInputs.weights[i * 4 + k] * all[t][i];
      }
    }
    assert.ok(Math.abs(expected - soft.lossSum) < 1e-6 * Math.abs(expected), `${expected} vs ${soft.lossSum}`);
  });

  it("passes float64 finite-difference gradient checks (LoRA and full)", () => {
    for (const setup of [LORA_ALL, FULL]) {
      const model = makeModel64(config, setup);
      if (setup.mode === "lora") randomizeTrainable(model, 8);
      const checked = gradCheck(model, softBatch([4, 3], [2, 5], 21), { loss: "cross_entropy", entries: 1 });
      assert.equal(checked.length, model.parameters().length);
    }
  });

  it("native float32 kernels agree with the float64 reference", () => {
    const weights = tinyWeights(config, 2);
    const ref = EngineModel.create(config, weights, FULL, referenceKernels, { dtype: "float64" });
    const nat = EngineModel.create(config, weights, FULL, loadNativeKernels());
    const batch = softBatch([6, 2], [4, 2], 9);
    ref.zeroGrad();
    nat.zeroGrad();
    const a = ref.forwardBackward(batch, "cross_entropy", undefined, true);
    const b = nat.forwardBackward(batch, "cross_entropy", undefined, true);
    assert.ok(Math.abs(a.lossSum - b.lossSum) < 1e-4 * Math.abs(a.lossSum));
    const ga = grads(ref);
    const gb = grads(nat);
    ga.forEach((g, j) => {
      let maxAbs = 0;
      for (let i = 0; i < g.length; i++) maxAbs = Math.max(maxAbs, Math.abs(g[i]));
      for (let i = 0; i < g.length; i++) assert.ok(Math.abs(g[i] - gb[j][i]) <= 1e-3 * maxAbs, `${ref.parameters()[j].name}[${i}]`);
    });
  });

  it("rejects several targets for RL losses, missing weights and mismatched shapes", () => {
    const model = makeModel64(config, LORA_ALL);
    const [d] = softBatch([3], [2]);
    const withRl: SequenceInput = {
      ...d,
      lossInputs: { target_tokens: d.lossInputs.target_tokens, logprobs: new Float32Array(3), advantages: new Float32Array(3) },
    };
    assert.throws(() => model.forwardBackward([withRl], "importance_sampling", undefined, false), /shape \[3, 2\]; only cross_entropy takes several targets/);
    const noWeights: SequenceInput = { ...d, lossInputs: { target_tokens: d.lossInputs.target_tokens } };
    assert.throws(() => model.forwardBackward([noWeights], "cross_entropy", undefined, false), /needs loss input "weights"/);
    const shortWeights: SequenceInput = { ...d, lossInputs: { target_tokens: d.lossInputs.target_tokens, weights: new Float32Array(3) } };
    assert.throws(() => model.forwardBackward([shortWeights], "cross_entropy", undefined, false), /"weights" has length 3; expected \[3, 2\]/);
  });
});

describe("wire conversion of [N, K] loss inputs", () => {
  it("a [N, K] datum becomes a targetWidth-K input, and logprobs come back shaped [N, K]", () => {
    const datum = {
      model_input: { chunks: [{ type: "encoded_text" as const, tokens: [1, 2, 3] }] },
      loss_fn_inputs: {
        target_tokens: tensorDataFromInt64([4, 5, 6, 7, 8, 9], [3, 2]),
        weights: tensorDataFromFloat32([0.5, 0.5, 1, 0, 0.25, 0.75], [3, 2]),
      },
    };
    const input = datumToSequenceInput(datum, 0);
    assert.equal(input.targetWidth, 2);
    assert.deepEqual([...input.lossInputs.target_tokens], [4, 5, 6, 7, 8, 9]);
    const out = toForwardBackwardOutput({ logprobs: [new Float32Array(6)], logprobWidths: [2], lossSum: 0, metrics: {} });
    assert.deepEqual(tensorShape(out.loss_fn_outputs[0].logprobs), [3, 2]);
  });

  it("rejects weights whose column count differs from target_tokens', and [N, K] advantages", () => {
    const base = { model_input: { chunks: [{ type: "encoded_text" as const, tokens: [1, 2] }] } };
    assert.throws(
      () =>
        datumToSequenceInput(
          {
            ...base,
            loss_fn_inputs: {
              target_tokens: tensorDataFromInt64([4, 5, 6, 7], [2, 2]),
              weights: tensorDataFromFloat32([1, 1]),
            },
          },
          0,
        ),
      /weights has 1 column\(s\) but target_tokens has 2/,
    );
    assert.throws(
      () =>
        datumToSequenceInput(
          {
            ...base,
            loss_fn_inputs: {
              target_tokens: tensorDataFromInt64([4, 5]),
              advantages: tensorDataFromFloat32([1, 1, 1, 1], [2, 2]),
            },
          },
          0,
        ),
      /advantages has shape \[2, 2\]; the embedded engine takes advantages of shape \[N\]/,
    );
  });
});
