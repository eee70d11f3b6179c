// The NLL evaluator (test/nll, test/bpb through forward) and the evaluator runner.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runEvaluators, type SamplingClientEvaluator, type TrainingClientEvaluator } from "../../src/eval/evaluators.ts";
import { NLLEvaluator } from "../../src/supervised/nllEvaluator.ts";
import { syntheticByteTokenizer } from "../renderers/helpers.ts";
import type { SupervisedDataset } from "../../src/supervised/types.ts";
import { FakeStore, FakeTrainingClient, IdDataset, idDatum, idOf } from "./fakes.ts";

test("test/nll is the weighted mean NLL over every test datum, in chunks queued before any is awaited", async () => {
  const tc = new FakeTrainingClient("m", new FakeStore());
  const data = Array.from({ length: 150 }, (_, i) => idDatum(i % 200));
  const evaluator = new NLLEvaluator(data);
  const m = await evaluator.evaluate(tc);
  assert.ok(Math.abs(m["test/nll"]! - 2) < 1e-6);
  assert.equal(Object.keys(m).length, 1, "no bpb without a tokenizer");
  const submits = tc.events.filter((e) => e.startsWith("submit:fwd")).length;
  assert.equal(submits, 3);
  assert.ok(
    tc.events.indexOf(
      "submit:fwd:" +
        data
          .slice(128)
          .map((_, i) => 128 + i)
          .join(","),
    ) < tc.events.findIndex((e) => e.startsWith("await:")),
  );
  // Training moves the fake's logprobs toward 0, and the evaluator sees it.
  await (await tc.optimStep({})).result();
  assert.ok((await evaluator.evaluate(tc))["test/nll"]! < m["test/nll"]!);
});

test("test/bpb with a tokenizer; fromDataset takes every batch; the name prefixes the keys", async () => {
  const tc = new FakeTrainingClient("m", new FakeStore());
  const { tokenizer } = syntheticByteTokenizer("bytes", []);
  const evaluator = NLLEvaluator.fromDataset(new IdDataset(4, 2), { name: "heldout", tokenizer });
  assert.equal(evaluator.data.length, 4);
  const m = await evaluator.evaluate(tc);
  // One trained target token per datum, each decoding to one byte: bpb = nll / ln 2.
  assert.ok(Math.abs(m["heldout/bpb"]! - m["heldout/nll"]! / Math.LN2) < 1e-6, JSON.stringify(m));
});

test("runEvaluators: one fresh sampler shared by the sampling evaluators, none when there are only training evaluators", async () => {
  const tc = new FakeTrainingClient("m", new FakeStore());
  const tcEval: TrainingClientEvaluator = { kind: "training_client", evaluate: async () => ({ "test/a": 1, "test/shared": 1 }) };
  const paths: string[] = [];
  const scEval: SamplingClientEvaluator = {
    evaluate: async (sc) => {
      paths.push(sc.modelPath!);
      return { "test/b": 2, "test/shared": 2 };
    },
  };
  assert.deepEqual(await runEvaluators([tcEval], tc), { "test/a": 1, "test/shared": 1 });
  assert.equal(tc.samplers, 0);
  const m = await runEvaluators([tcEval, scEval, scEval], tc);
  assert.deepEqual(m, { "test/a": 1, "test/b": 2, "test/shared": 2 });
  assert.equal(tc.samplers, 1);
  assert.equal(paths.length, 2);
});

test("a mixture's held-out rows: source/<name>/test_nll per source, token-weighted to the pooled test/nll", async () => {
  const tc = new FakeTrainingClient("m", new FakeStore());
  // Datum id i has NLL 2·(1 + i mod 3); sources a, b, c by i mod 3 → 2, 4, 6.
  tc.logprobScale = (id) => 1 + (id % 3);
  const names = ["a", "b", "c"];
  const dataset = new IdDataset(12, 4);
  const sourced: SupervisedDataset = {
    length: dataset.length,
    getBatch: (i) => dataset.getBatch(i),
    setEpoch: (seed) => dataset.setEpoch(seed),
    batchSources: (i) => dataset.getBatch(i).map((d) => names[idOf(d) % 3]!),
  };
  const evaluator = NLLEvaluator.fromDataset(sourced);
  const m = await evaluator.evaluate(tc);
  assert.ok(Math.abs(m["source/a/test_nll"]! - 2) < 1e-6, JSON.stringify(m));
  assert.ok(Math.abs(m["source/b/test_nll"]! - 4) < 1e-6);
  assert.ok(Math.abs(m["source/c/test_nll"]! - 6) < 1e-6);
  assert.ok(Math.abs(m["test/nll"]! - 4) < 1e-6, "four rows of each source: the pooled mean");
  // A dataset without sources (no batchSources) has no per-source keys.
  const plain = await NLLEvaluator.fromDataset(dataset).evaluate(tc);
  assert.deepEqual(Object.keys(plain), ["test/nll"]);
  assert.throws(() => new NLLEvaluator([idDatum(0)], "test", null, ["a", "b"]), /2 source names for 1 datums/);
});
