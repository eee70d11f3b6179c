import { test } from "node:test";
import assert from "node:assert/strict";
import { appendChunk, appendTokens, emptyModelInput, modelInputFromInts, modelInputLength, modelInputToInts } from "../../src/tinker/modelInput.ts";
import { InvalidArgumentError } from "../../src/tinker/errors.ts";

test("fromInts/toInts round trip and length", () => {
  const mi = modelInputFromInts([5, 6, 7]);
  assert.deepEqual(modelInputToInts(mi), [5, 6, 7]);
  assert.equal(modelInputLength(mi), 3);
  assert.equal(modelInputLength(emptyModelInput()), 0);
});

test("appendTokens extends a trailing text chunk and leaves the original untouched", () => {
  const a = modelInputFromInts([1]);
  const b = appendTokens(a, [2, 3]);
  assert.equal(b.chunks.length, 1);
  assert.deepEqual(modelInputToInts(b), [1, 2, 3]);
  assert.deepEqual(modelInputToInts(a), [1]);
});

test("image chunks count expected_tokens and block toInts", () => {
  const img = appendChunk(modelInputFromInts([1, 2]), { type: "image", data: "AA==", format: "png", expected_tokens: 4 });
  const mi = appendTokens(img, [9]);
  assert.equal(mi.chunks.length, 3);
  assert.equal(modelInputLength(mi), 7);
  assert.throws(() => modelInputToInts(mi), /chunk 1 is of type "image"/);
});

test("image chunk without expected_tokens has no length", () => {
  const mi = appendChunk(emptyModelInput(), { type: "image_asset_pointer", location: "x.png", format: "png" });
  assert.throws(
    () => modelInputLength(mi),
    (e: unknown) => e instanceof InvalidArgumentError && /expected_tokens/.test(e.message),
  );
});

test("bad tokens are rejected with their index", () => {
  assert.throws(() => modelInputFromInts([1, 2.5]), /token 1 is 2.5/);
  assert.throws(() => appendTokens(emptyModelInput(), [-1]), /token 0 is -1/);
});
