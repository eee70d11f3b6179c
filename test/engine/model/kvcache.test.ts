// Incremental decoding with a KV cache against the naive full forward.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { FloatArray } from "../../../src/engine/kernels/types.ts";
import { EngineModel } from "../../../src/engine/model/model.ts";
import { referenceKernels } from "../../../src/engine/kernels/reference.ts";
import { FULL, LORA_ALL, tinyConfig, tinyWeights } from "./helpers.ts";
import { mergeLora, naiveLogits } from "./naive.ts";

const config = tinyConfig("qwen3", { tieWordEmbeddings: true });
const V = config.vocabSize;

function row(logits: FloatArray, r: number): number[] {
  return Array.from(logits.subarray(r * V, (r + 1) * V));
}

function assertRowClose(actual: number[], expected: number[], what: string): void {
  for (let j = 0; j < V; j++) assert.ok(Math.abs(actual[j] - expected[j]) < 1e-10, `${what}: logit ${j} ${actual[j]} vs ${expected[j]}`);
}

describe("KV-cache incremental forward (float64)", () => {
  const seqA = [3, 17, 5, 9, 22, 1, 0, 14];
  const seqB = [8, 8, 2, 19, 6];

  it("prefill then one-token decode steps equal the full forward, for two interleaved slots", () => {
    const weights = tinyWeights(config);
    const model = EngineModel.create(config, weights, FULL, referenceKernels, { dtype: "float64" });
    const cache = model.createKvCache(16, 2);
    const fullA = naiveLogits(config, weights, seqA);
    const fullB = naiveLogits(config, weights, seqB);
    // Prefill 4 tokens of A and 2 of B in one call, asking for the last row of each.
    const pre = model.forwardIncremental(
      cache,
      Int32Array.from([...seqA.slice(0, 4), ...seqB.slice(0, 2)]),
      Int32Array.from([0, 1, 2, 3, 0, 1]),
      Int32Array.from([0, 0, 0, 0, 1, 1]),
      Int32Array.from([3, 5]),
    );
    assertRowClose(row(pre, 0), fullA[3], "A prefill");
    assertRowClose(row(pre, 1), fullB[1], "B prefill");
    assert.deepEqual(Array.from(cache.lengths), [4, 2]);
    for (let step = 0; step < 3; step++) {
      const pa = 4 + step;
      const pb = 2 + step;
      const out = model.forwardIncremental(cache, Int32Array.from([seqA[pa], seqB[pb]]), Int32Array.from([pa, pb]), Int32Array.from([0, 1]));
      assertRowClose(row(out, 0), fullA[pa], `A step ${step}`);
      assertRowClose(row(out, 1), fullB[pb], `B step ${step}`);
    }
  });

  it("uses the LoRA adapters (tied head adapter included) like training does", () => {
    const weights = tinyWeights(config);
    const model = EngineModel.create(config, weights, LORA_ALL, referenceKernels, { dtype: "float64" });
    const t = model.trainableTensors();
    let k = 0;
    for (const [name, data] of t) if (name.includes("lora_B")) for (let i = 0; i < data.length; i++) data[i] = Math.cos(++k) * 0.05;
    model.loadTrainableTensors(t);
    const expected = naiveLogits({ ...config, tieWordEmbeddings: false }, mergeLora(weights, t, 2), seqA);
    const cache = model.createKvCache(8, 1);
    const slots = new Int32Array(seqA.length);
    const out = model.forwardIncremental(
      cache,
      Int32Array.from(seqA),
      Int32Array.from(seqA, (_, i) => i),
      slots,
    );
    for (let i = 0; i < seqA.length; i++) {
      for (let j = 0; j < V; j++) assert.ok(Math.abs(out[i * V + j] - expected[i][j]) < 1e-9, `row ${i} logit ${j}`);
    }
  });

  it("copyKvSlot shares a prompt between samples that then diverge", () => {
    const weights = tinyWeights(config);
    const model = EngineModel.create(config, weights, FULL, referenceKernels, { dtype: "float64" });
    const cache = model.createKvCache(8, 2);
    model.forwardIncremental(cache, Int32Array.from(seqA.slice(0, 3)), Int32Array.from([0, 1, 2]), new Int32Array(3));
    model.copyKvSlot(cache, 0, 1, 3);
    const out = model.forwardIncremental(cache, Int32Array.from([4, 11]), Int32Array.from([3, 3]), Int32Array.from([0, 1]));
    assertRowClose(row(out, 0), naiveLogits(config, weights, [...seqA.slice(0, 3), 4])[3], "sample 0");
    assertRowClose(row(out, 1), naiveLogits(config, weights, [...seqA.slice(0, 3), 11])[3], "sample 1");
  });

  it("rejects gaps, bad slots and out-of-cache positions", () => {
    const model = EngineModel.create(config, tinyWeights(config), FULL, referenceKernels, { dtype: "float64" });
    const cache = model.createKvCache(4, 1);
    assert.throws(
      () => model.forwardIncremental(cache, Int32Array.from([1]), Int32Array.from([1]), Int32Array.from([0])),
      /positions\[0\] = 1 for slot 0 leaves a gap/,
    );
    assert.throws(
      () => model.forwardIncremental(cache, Int32Array.from([1]), Int32Array.from([0]), Int32Array.from([1])),
      /cacheSlots\[0\] = 1 is outside 0\.\.0/,
    );
    assert.throws(
      () => model.forwardIncremental(cache, Int32Array.from([99]), Int32Array.from([0]), Int32Array.from([0])),
      /tokens\[0\] = 99 is outside the vocabulary/,
    );
    assert.throws(() => model.createKvCache(100, 1), /exceeds the model's max_position_embeddings \(64\)/);
    assert.equal(cache.lengths[0], 0);
  });
});
