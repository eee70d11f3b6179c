// The model on the native (float32, C++) kernels against the same model on the reference kernels
// in float64. More than 128 tokens, so the head works on sub-array chunks with non-zero offsets.
// Fails (not skips) when the addon is missing, like the kernel tests.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { loadNativeKernels, type NativeKernels } from "../../../src/engine/kernels/native.ts";
import { referenceKernels } from "../../../src/engine/kernels/reference.ts";
import { EngineModel } from "../../../src/engine/model/model.ts";
import { LORA_ALL, FULL, inputsFor, tinyBatch, tinyConfig, tinyWeights } from "./helpers.ts";

function native(): NativeKernels {
  try {
    return loadNativeKernels();
  } catch (err) {
    assert.fail(`native kernel addon did not build or load: ${err instanceof Error ? err.message : String(err)}`);
  }
}

const config = tinyConfig("qwen3", { hiddenSize: 48, intermediateSize: 80, headDim: 16, vocabSize: 97, maxPositionEmbeddings: 256, tieWordEmbeddings: true });

describe("model on native kernels vs reference float64", () => {
  for (const setup of [LORA_ALL, FULL]) {
    it(`${setup.mode}: logprobs, gradients and one AdamW step agree`, () => {
      const weights = tinyWeights(config);
      const fast = EngineModel.create(config, weights, setup, native());
      const exact = EngineModel.create(config, weights, setup, referenceKernels, { dtype: "float64" });
      const t = fast.trainableTensors();
      let k = 0;
      for (const [name, data] of t) if (name.includes("lora_B")) for (let i = 0; i < data.length; i++) data[i] = Math.sin(++k) * 0.03;
      fast.loadTrainableTensors(t);
      exact.loadTrainableTensors(t);
      const batch = inputsFor(tinyBatch(config, 21, [100, 45, 17]), "cross_entropy");
      const a = fast.forwardBackward(batch, "cross_entropy", undefined, true);
      const b = exact.forwardBackward(batch, "cross_entropy", undefined, true);
      for (let s = 0; s < batch.length; s++) {
        for (let i = 0; i < a.logprobs[s].length; i++) assert.ok(Math.abs(a.logprobs[s][i] - b.logprobs[s][i]) < 2e-4, `datum ${s} token ${i}`);
      }
      assert.ok(Math.abs(a.lossSum - b.lossSum) < 1e-4 * Math.abs(b.lossSum));
      const pa = fast.parameters();
      const pb = exact.parameters();
      for (let j = 0; j < pa.length; j++) {
        const ga = pa[j].grad ?? new Float32Array(0);
        const gb = pb[j].grad ?? new Float64Array(0);
        let maxAbs = 0;
        for (let i = 0; i < gb.length; i++) maxAbs = Math.max(maxAbs, Math.abs(gb[i]));
        assert.ok(maxAbs > 0, `${pa[j].name}: zero gradient`);
        for (let i = 0; i < gb.length; i++) {
          assert.ok(Math.abs(ga[i] - gb[i]) <= 2e-3 * maxAbs, `${pa[j].name}[${i}]: ${ga[i]} vs ${gb[i]} (max ${maxAbs})`);
        }
      }
      const adam = { learning_rate: 1e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weight_decay: 0.01, grad_clip_norm: 0 };
      const ma = fast.optimStep(adam);
      const mb = exact.optimStep(adam);
      assert.ok(Math.abs(ma["grad_norm:mean"] - mb["grad_norm:mean"]) < 1e-3 * mb["grad_norm:mean"]);
      const after = fast.forwardBackward(batch, "cross_entropy", undefined, false).lossSum;
      const afterExact = exact.forwardBackward(batch, "cross_entropy", undefined, false).lossSum;
      assert.ok(after < a.lossSum, "one step lowered the loss");
      assert.ok(Math.abs(after - afterExact) < 1e-3 * Math.abs(afterExact), `${after} vs ${afterExact}`);
    });
  }
});
