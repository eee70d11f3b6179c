import { test } from "node:test";
import assert from "node:assert/strict";
import type { TrainingClient } from "../../src/tinker/clients.ts";
import { forwardBackwardCustom } from "../../src/tinker/customLoss.ts";
import { makeDatum } from "../../src/tinker/datum.ts";
import { resolvedFuture } from "../../src/tinker/futures.ts";
import { modelInputFromInts } from "../../src/tinker/modelInput.ts";
import type { Datum, ForwardBackwardOutput } from "../../src/tinker/types.ts";

function fakeClient(calls: { kind: string; data: Datum[]; loss: string }[]): Pick<TrainingClient, "forward" | "forwardBackward"> {
  const out = (data: Datum[]): ForwardBackwardOutput => ({
    loss_fn_output_type: "CrossEntropyLossReturn",
    // logprob of every position = -(position+1)
    loss_fn_outputs: data.map((d) => ({ logprobs: { data: d.loss_fn_inputs["target_tokens"]!.data.map((_, i) => -(i + 1)), dtype: "float32" } })),
    metrics: { "loss:sum": 123 },
  });
  return {
    forward: async (data, loss) => {
      calls.push({ kind: "forward", data, loss });
      return resolvedFuture(out(data));
    },
    forwardBackward: async (data, loss) => {
      calls.push({ kind: "fwdbwd", data, loss });
      return resolvedFuture(out(data));
    },
  };
}

test("weights sent are minus the user's gradient; metrics merged", async () => {
  const calls: { kind: string; data: Datum[]; loss: string }[] = [];
  const data = [makeDatum(modelInputFromInts([1, 2]), { target_tokens: [2, 3] })];
  const fut = await forwardBackwardCustom(fakeClient(calls), data, (_d, lps) => {
    assert.deepEqual(Array.from(lps[0]!), [-1, -2]);
    // loss = sum(lp^2) → gradient 2·lp
    return { loss: 5, gradients: lps.map((lp) => lp.map((x) => 2 * x)), metrics: { "custom:mean": 5 } };
  });
  const res = await fut.result();
  assert.deepEqual(
    calls.map((c) => `${c.kind}:${c.loss}`),
    ["forward:cross_entropy", "fwdbwd:cross_entropy"],
  );
  assert.deepEqual(calls[0]!.data[0]!.loss_fn_inputs["weights"]!.data, [0, 0]);
  assert.deepEqual(calls[1]!.data[0]!.loss_fn_inputs["weights"]!.data, [2, 4]);
  assert.deepEqual(res.metrics, { "loss:sum": 123, "custom:mean": 5 });
});

test("input and gradient errors", async () => {
  const calls: { kind: string; data: Datum[]; loss: string }[] = [];
  const client = fakeClient(calls);
  const noTargets = [makeDatum(modelInputFromInts([1]), { weights: [1] })];
  await assert.rejects(
    forwardBackwardCustom(client, noTargets, () => ({ loss: 0, gradients: [] })),
    /datum 0 has no target_tokens/,
  );
  const extra = [makeDatum(modelInputFromInts([1]), { target_tokens: [1], advantages: [1] })];
  await assert.rejects(
    forwardBackwardCustom(client, extra, () => ({ loss: 0, gradients: [] })),
    /key "advantages"/,
  );
  const ok = [makeDatum(modelInputFromInts([1]), { target_tokens: [1] })];
  await assert.rejects(
    forwardBackwardCustom(client, ok, () => ({ loss: 0, gradients: [] })),
    /0 gradients for 1 datums/,
  );
  await assert.rejects(
    forwardBackwardCustom(client, ok, () => ({ loss: 0, gradients: [new Float32Array(2)] })),
    /gradient 0 has length 2 but logprobs 0 has 1/,
  );
  await assert.rejects(
    forwardBackwardCustom(client, ok, () => ({ loss: 0, gradients: [new Float32Array([Number.NaN])] })),
    /gradient 0\[0\] is NaN/,
  );
});
