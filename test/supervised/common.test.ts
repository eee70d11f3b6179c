// Datum helpers: truncation, the next-token shift, weight reduction, NLL and bits per byte.
import { test } from "node:test";
import assert from "node:assert/strict";
import { computeBpb, computeMeanNll, conversationToDatum, datumFromModelInputWeights } from "../../src/supervised/common.ts";
import { tensorDataFromFloat32, tensorDataFromInt64 } from "../../src/tinker/tensorData.ts";
import type { ModelInput } from "../../src/tinker/types.ts";
import { getRenderer } from "../../src/renderers/index.ts";
import { syntheticByteTokenizer } from "../renderers/helpers.ts";

const mi = (...chunks: number[][]): ModelInput => ({ chunks: chunks.map((tokens) => ({ type: "encoded_text" as const, tokens })) });
const tokens = (m: ModelInput): number[] => m.chunks.flatMap((c) => (c.type === "encoded_text" ? c.tokens : []));

test("shift: input drops the last token, targets and weights drop the first", () => {
  const d = datumFromModelInputWeights(mi([1, 2], [3, 4, 5]), [0, 0, 1, 1, 1]);
  assert.deepEqual(tokens(d.model_input), [1, 2, 3, 4]);
  assert.deepEqual(d.loss_fn_inputs["target_tokens"]!.data, [2, 3, 4, 5]);
  assert.equal(d.loss_fn_inputs["target_tokens"]!.dtype, "int64");
  assert.deepEqual(d.loss_fn_inputs["weights"]!.data, [0, 1, 1, 1]);
  assert.equal(d.loss_fn_inputs["weights"]!.dtype, "float32");
});

test("maxLength right-truncates, across chunk boundaries", () => {
  const d = datumFromModelInputWeights(mi([1, 2, 3], [4, 5, 6]), [0, 1, 1, 1, 1, 1], 4);
  assert.deepEqual(tokens(d.model_input), [1, 2, 3]);
  assert.deepEqual(d.loss_fn_inputs["target_tokens"]!.data, [2, 3, 4]);
  assert.deepEqual(d.loss_fn_inputs["weights"]!.data, [1, 1, 1]);
  const whole = datumFromModelInputWeights(mi([1, 2, 3], [4, 5, 6]), [0, 1, 1, 1, 1, 1], 3);
  assert.deepEqual(d.model_input.chunks.length, 1);
  assert.deepEqual(whole.loss_fn_inputs["target_tokens"]!.data, [2, 3]);
});

test("trailing images are dropped; image positions have target 0", () => {
  const input: ModelInput = {
    chunks: [
      { type: "encoded_text", tokens: [1] },
      { type: "image", data: "AA==", format: "png", expected_tokens: 2 },
      { type: "encoded_text", tokens: [7, 8] },
      { type: "image", data: "AA==", format: "png", expected_tokens: 3 },
    ],
  };
  const d = datumFromModelInputWeights(input, [0, 0, 0, 1, 1, 0, 0, 0], null);
  assert.deepEqual(d.loss_fn_inputs["target_tokens"]!.data, [0, 0, 7, 8]);
  assert.deepEqual(d.loss_fn_inputs["weights"]!.data, [0, 0, 1, 1]);
  assert.equal(d.model_input.chunks.length, 3);
});

test("reduction mean makes each example's weights sum to 1; none keeps them", () => {
  const mean = datumFromModelInputWeights(mi([1, 2, 3, 4, 5]), [0, 0, 1, 1, 1], undefined, "mean");
  const w = mean.loss_fn_inputs["weights"]!.data;
  assert.ok(Math.abs(w.reduce((a, b) => a + b, 0) - 1) < 1e-6);
  assert.ok(Math.abs(w[1]! - 1 / 3) < 1e-6);
  const zero = datumFromModelInputWeights(mi([1, 2, 3]), [0, 0, 0], undefined, "mean");
  assert.deepEqual(zero.loss_fn_inputs["weights"]!.data, [0, 0], "all-zero weights stay zero");
  assert.throws(() => datumFromModelInputWeights(mi([1, 2]), [0, 1], undefined, "sum" as "mean"), /unknown weight reduction/);
  assert.throws(() => datumFromModelInputWeights(mi([1, 2]), [0]), /weights has 1 entries but the model input has 2 tokens/);
  assert.throws(() => datumFromModelInputWeights(mi([1]), [1]), /at least 2 tokens/);
});

test("conversationToDatum trains all assistant messages with token-mean weights by default", () => {
  const { tokenizer } = syntheticByteTokenizer("byte", ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]);
  const r = getRenderer("llama3", tokenizer);
  const messages = [
    { role: "user", content: "Hi" },
    { role: "assistant", content: "Yo" },
    { role: "user", content: "Bye" },
    { role: "assistant", content: "Ciao" },
  ];
  const d = conversationToDatum(messages, r, null);
  const w = d.loss_fn_inputs["weights"]!.data;
  const targets = d.loss_fn_inputs["target_tokens"]!.data;
  const trained = targets.filter((_, i) => w[i]! > 0);
  assert.equal(tokenizer.decode(trained), "Yo<|eot_id|>Ciao<|eot_id|>");
  assert.ok(Math.abs(w.reduce((a, b) => a + b, 0) - 1) < 1e-6);
  const last = conversationToDatum(messages, r, 10, "last_assistant_message", "none");
  assert.equal(last.loss_fn_inputs["target_tokens"]!.data.length, 9);
});

test("computeMeanNll is the weighted mean of -logprob over the batch", () => {
  const lp = [tensorDataFromFloat32([-1, -2, -3]), tensorDataFromFloat32([-4])];
  const w = [tensorDataFromFloat32([0, 1, 1]), tensorDataFromFloat32([2])];
  assert.ok(Math.abs(computeMeanNll(lp, w) - (2 + 3 + 8) / 4) < 1e-9);
  assert.ok(Number.isNaN(computeMeanNll([tensorDataFromFloat32([-1])], [tensorDataFromFloat32([0])])));
});

test("computeBpb: nats of trained, non-special tokens over their UTF-8 bytes", () => {
  const { tokenizer } = syntheticByteTokenizer("byte", ["<|end|>"]);
  const ids = tokenizer.encode("hé<|end|>", { addSpecialTokens: false }); // h, 2 bytes of é, <|end|>
  assert.equal(ids.length, 4);
  const lp = tensorDataFromFloat32([-1, -1, -1, -5]);
  // Weights are a mask only: normalized weights give the same result.
  for (const w of [
    [1, 1, 1, 1],
    [0.25, 0.25, 0.25, 0.25],
  ]) {
    const bpb = computeBpb([lp], [tensorDataFromFloat32(w)], [tensorDataFromInt64(ids)], tokenizer);
    assert.ok(Math.abs(bpb - 3 / (Math.LN2 * 3)) < 1e-9, String(bpb));
  }
  const untrained = computeBpb([lp], [tensorDataFromFloat32([0, 0, 0, 1])], [tensorDataFromInt64(ids)], tokenizer);
  assert.ok(Number.isNaN(untrained), "only a special token is trained: no bytes");
});
