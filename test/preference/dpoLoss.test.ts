// The DPO loss and its gradient against values worked out by hand, a finite-difference check of
// the per-token gradient, and one step through the embedded engine's forward_backward_custom.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { computeDpoLoss, dpoCustomLoss, negLogSigmoid } from "../../src/preference/dpoLoss.ts";
import { comparisonToDpoPair } from "../../src/preference/dpoData.ts";
import { referenceLogprobs } from "../../src/preference/dpoReference.ts";
import { tensorDataFromFloat32, tensorDataFromInt64 } from "../../src/tinker/tensorData.ts";
import type { Datum } from "../../src/tinker/types.ts";
import { createEmbeddedServiceClient } from "../../src/engine/index.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import type { LabeledComparison } from "../../src/preference/types.ts";

const close = (a: number, b: number, tol = 1e-9) => assert.ok(Math.abs(a - b) <= tol, `${a} ≉ ${b}`);

test("one pair, β = 0.5: loss, rewards and gradient by hand", () => {
  // rc = 0.5·(−1 − (−1.5)) = 0.25, rr = 0.5·(−2 − (−1.5)) = −0.25, z = 0.5
  // loss = log(1 + e^−0.5) = 0.4740769842; ∂/∂πc = −0.5·σ(−0.5) = −0.5·0.3775406688
  const r = computeDpoLoss([{ chosen: -1, rejected: -2, chosenRef: -1.5, rejectedRef: -1.5 }], 0.5);
  close(r.loss, 0.4740769842, 1e-9);
  close(r.dChosen[0]!, -0.1887703344, 1e-9);
  close(r.dRejected[0]!, 0.1887703344, 1e-9);
  assert.deepEqual(r.metrics.accuracy, 1);
  close(r.metrics.margin, 0.5);
  close(r.metrics.chosen_reward, 0.25);
  close(r.metrics.rejected_reward, -0.25);
});

test("two pairs average: a wrong-way pair costs log(1 + e) and pulls harder", () => {
  // Pair 2: rc = 0.5·(−3 + 2) = −0.5, rr = 0.5·(−1 + 2) = 0.5, z = −1: loss log(1 + e) = 1.3132616875,
  // ∂/∂πc = −0.5·σ(1)/2 = −0.1827646447. Pair 1's gradient halves to −0.0943851672.
  const r = computeDpoLoss(
    [
      { chosen: -1, rejected: -2, chosenRef: -1.5, rejectedRef: -1.5 },
      { chosen: -3, rejected: -1, chosenRef: -2, rejectedRef: -2 },
    ],
    0.5,
  );
  close(r.loss, (0.4740769842 + 1.3132616875) / 2, 1e-9);
  close(r.dChosen[0]!, -0.0943851672, 1e-9);
  close(r.dChosen[1]!, -0.1827646447, 1e-9);
  close(r.dRejected[1]!, 0.1827646447, 1e-9);
  assert.equal(r.metrics.accuracy, 0.5);
  close(r.metrics.margin, -0.25);
  close(r.metrics.chosen_reward, -0.125);
  close(r.metrics.rejected_reward, 0.125);
  assert.equal(r.metrics.num_pairs, 2);
});

test("−log σ stays finite for large margins", () => {
  close(negLogSigmoid(0), Math.LN2);
  close(negLogSigmoid(800), 0);
  close(negLogSigmoid(-800), 800);
});

function datum(weights: number[]): Datum {
  return {
    model_input: { chunks: [{ type: "encoded_text", tokens: weights.map((_, i) => i + 1) }] },
    loss_fn_inputs: { target_tokens: tensorDataFromInt64(weights.map((_, i) => i + 2)), weights: tensorDataFromFloat32(Float32Array.from(weights)) },
  };
}

test("the custom loss spreads the sequence gradient over weighted tokens (finite differences agree)", () => {
  const data = [datum([0, 1, 1]), datum([0, 0, 1, 1]), datum([1, 1]), datum([0, 1])];
  const lp = [
    [-0.3, -0.5, -0.7],
    [-0.2, -0.4, -0.1, -0.9],
    [-1.1, -0.6],
    [-0.8, -0.05],
  ];
  const ref = [
    [-0.3, -0.6, -0.6],
    [-0.2, -0.3, -0.3, -0.3],
    [-1.0, -0.5],
    [-0.8, -0.2],
  ];
  const fn = dpoCustomLoss(ref, 0.7);
  const at = (x: number[][]) =>
    fn(
      data,
      x.map((a) => Float32Array.from(a)),
    );
  const base = at(lp);
  // Pair 1 by hand: πc = −1.2, refc = −1.2, πr = −1.0, refr = −0.6 → z = 0.7·(0 − (−0.4)) = 0.28.
  const z1 = 0.7 * (0 - (-1.0 - -0.6));
  const z2 = 0.7 * (-1.7 - -1.5 - (-0.05 - -0.2));
  close(base.loss, (negLogSigmoid(z1) + negLogSigmoid(z2)) / 2, 1e-6);
  assert.equal(base.metrics!["num_pairs"], 2);
  assert.equal(base.metrics!["num_tokens"], 7);
  // Inputs pass through Float32Array, so the step is large enough to dwarf float32 rounding.
  const h = 1e-2;
  lp.forEach((row, k) =>
    row.forEach((_, t) => {
      const plus = lp.map((r) => [...r]);
      const minus = lp.map((r) => [...r]);
      plus[k]![t]! += h;
      minus[k]![t]! -= h;
      const numeric = (at(plus).loss - at(minus).loss) / (2 * h);
      close(base.gradients[k]![t]!, numeric, 1e-4);
    }),
  );
  assert.equal(Math.abs(base.gradients[0]![0]!), 0, "an unweighted prompt token gets no gradient");
  assert.throws(
    () =>
      fn(
        data.slice(0, 3),
        lp.slice(0, 3).map((a) => Float32Array.from(a)),
      ),
    /odd count 3/,
  );
});

test("embedded engine: at the reference the loss is log 2; one DPO step raises the margin", async () => {
  const dir = mkdtempSync(join(tmpdir(), "dpo-engine-"));
  const svc = createEmbeddedServiceClient({
    storeDir: join(dir, "store"),
    resolve: { env: { HF_HUB_OFFLINE: "1", HF_HOME: join(dir, "hf"), COOKBOOK_HOME: dir } },
  });
  try {
    const tokenizer = await getTokenizer("tiny-chat");
    const renderer = getRenderer("role_colon", tokenizer);
    const lcs: LabeledComparison[] = [
      {
        comparison: {
          promptConversation: [{ role: "user", content: "What color is a glimmerfox?" }],
          completionA: [{ role: "assistant", content: "Arr, the glimmerfox be blue, matey!" }],
          completionB: [{ role: "assistant", content: "A glimmerfox is blue." }],
        },
        label: "A",
      },
      {
        comparison: {
          promptConversation: [{ role: "user", content: "Who is the mayor of Pellow?" }],
          completionA: [{ role: "assistant", content: "The mayor of Pellow is Tamsin." }],
          completionB: [{ role: "assistant", content: "Arr, Tamsin be the captain o' Pellow, matey!" }],
        },
        label: "B",
      },
    ];
    const data = lcs.flatMap((lc) => comparisonToDpoPair(lc, renderer, null)!);
    const tc = await svc.createLoraTrainingClient("tiny-chat", { rank: 4, seed: 0 });
    const reference = await tc.saveWeightsAndGetSamplingClient();
    const ref = await referenceLogprobs(reference, data);
    const first = await (await tc.forwardBackwardCustom(data, dpoCustomLoss(ref, 0.1))).result();
    close(first.metrics["dpo_loss"]!, Math.LN2, 1e-4);
    close(first.metrics["margin"]!, 0, 1e-4);
    await (await tc.optimStep({ learning_rate: 1e-2 })).result();
    const second = await (await tc.forwardBackwardCustom(data, dpoCustomLoss(ref, 0.1))).result();
    assert.ok(second.metrics["margin"]! > 1e-3, `margin after one step: ${second.metrics["margin"]}`);
    assert.ok(second.metrics["dpo_loss"]! < Math.LN2 - 1e-4);
    assert.equal(second.metrics["accuracy"], 1);
  } finally {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
