import { test } from "node:test";
import assert from "node:assert/strict";
import { combineForwardBackwardOutputs, hashUnordered, mergeChunkMetrics, parseMetricKey } from "../../src/tinker/metrics.ts";

test("parseMetricKey splits at the last colon", () => {
  assert.deepEqual(parseMetricKey("a:b:mean"), { name: "a:b", reduction: "mean" });
  assert.deepEqual(parseMetricKey("plain"), { name: "plain", reduction: undefined });
});

test("merge rules per reduction", () => {
  const merged = mergeChunkMetrics([
    { metrics: { "loss:sum": 1, "acc:mean": 1, "s:slack": 0, "lo:min": 3, "hi:max": 3, "id:unique": 7, "x:weird": 1, nokey: 2 }, numDatums: 3 },
    { metrics: { "loss:sum": 2, "acc:mean": 0, "s:slack": 4, "lo:min": 1, "hi:max": 5, "id:unique": 8 }, numDatums: 1 },
    { metrics: { "loss:sum": 4, "acc:mean": 0.5, "s:slack": 0, "lo:min": 2, "hi:max": 4, "id:unique": 9 }, numDatums: 4 },
  ]);
  assert.equal(merged["loss:sum"], 7);
  assert.equal(merged["acc:mean"], (1 * 3 + 0 * 1 + 0.5 * 4) / 8);
  assert.equal(merged["s:slack"], 4 / 8);
  assert.equal(merged["lo:min"], 1);
  assert.equal(merged["hi:max"], 5);
  assert.equal(merged["id:unique"], 7);
  assert.equal(merged["id:unique_2"], 8);
  assert.equal(merged["id:unique_3"], 9);
  assert.ok(!("x:weird" in merged));
  assert.ok(!("nokey" in merged));
});

test("hash_unordered ignores order but not values", () => {
  const a = mergeChunkMetrics([
    { metrics: { "h:hash_unordered": 1 }, numDatums: 1 },
    { metrics: { "h:hash_unordered": 2 }, numDatums: 1 },
  ]);
  const b = mergeChunkMetrics([
    { metrics: { "h:hash_unordered": 2 }, numDatums: 1 },
    { metrics: { "h:hash_unordered": 1 }, numDatums: 1 },
  ]);
  assert.equal(a["h:hash_unordered"], b["h:hash_unordered"]);
  assert.notEqual(hashUnordered([1, 2]), hashUnordered([1, 3]));
});

test("combineForwardBackwardOutputs concatenates in order", () => {
  const td = (v: number) => ({ logprobs: { data: [v], dtype: "float32" as const } });
  const out = combineForwardBackwardOutputs([
    { loss_fn_output_type: "x", loss_fn_outputs: [td(1), td(2)], metrics: { "loss:sum": 1, "m:mean": 1 } },
    { loss_fn_output_type: "x", loss_fn_outputs: [td(3)], metrics: { "loss:sum": 2, "m:mean": 4 } },
  ]);
  assert.deepEqual(
    out.loss_fn_outputs.map((o) => o["logprobs"]!.data[0]),
    [1, 2, 3],
  );
  assert.deepEqual(out.metrics, { "loss:sum": 3, "m:mean": 2 });
  assert.throws(() => combineForwardBackwardOutputs([]), /at least one/);
});
