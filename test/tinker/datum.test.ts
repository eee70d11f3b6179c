import { test } from "node:test";
import assert from "node:assert/strict";
import { makeDatum, validateData } from "../../src/tinker/datum.ts";
import { modelInputFromInts } from "../../src/tinker/modelInput.ts";

test("makeDatum builds aligned tensors", () => {
  const d = makeDatum(modelInputFromInts([1, 2, 3]), { target_tokens: [2, 3, 4], weights: [0, 1, 1] });
  assert.equal(d.loss_fn_inputs["target_tokens"]!.dtype, "int64");
  assert.deepEqual(d.loss_fn_inputs["weights"]!.data, [0, 1, 1]);
});

test("misaligned tensors name datum, key and lengths", () => {
  assert.throws(
    () => makeDatum(modelInputFromInts([1, 2, 3]), { target_tokens: [2, 3] }),
    /datum 0: loss_fn_inputs.target_tokens has length 2 but model_input has 3 tokens/,
  );
  const good = makeDatum(modelInputFromInts([1]), { weights: [1] });
  const bad = { ...good, loss_fn_inputs: { weights: { data: [1, 1], dtype: "float32" as const } } };
  assert.throws(() => validateData([good, bad]), /datum 1: loss_fn_inputs.weights has length 2 but model_input has 1/);
});

test("2-D per-token tensors are checked on their first dimension; other keys are free", () => {
  const td = { data: [1, 2, 3, 4], dtype: "int64" as const, shape: [2, 2] };
  assert.doesNotThrow(() => makeDatum(modelInputFromInts([1, 2]), { target_tokens: td, custom: [1, 2, 3] }));
  assert.throws(() => makeDatum(modelInputFromInts([1, 2, 3]), { target_tokens: td }), /has length 2 but model_input has 3/);
});
