import { test } from "node:test";
import assert from "node:assert/strict";
import { formatTinkerPath, parseTinkerPath } from "../../src/tinker/paths.ts";

test("parse hosted and local paths", () => {
  assert.deepEqual(parseTinkerPath("tinker://98d9-ab:train:0/sampler_weights/final"), {
    modelId: "98d9-ab:train:0",
    kind: "sampler_weights",
    name: "final",
    checkpointId: "sampler_weights/final",
    form: "full",
  });
  const p = parseTinkerPath("tinker://model_1/weights/step_000010");
  assert.equal(p.checkpointId, "weights/step_000010");
  assert.equal(formatTinkerPath(p), "tinker://model_1/weights/step_000010");
});

test("errors name the bad path and what was expected", () => {
  assert.throws(() => parseTinkerPath("s3://x/weights/a"), /not a tinker path: "s3:\/\/x\/weights\/a"; expected tinker:\/\//);
  assert.throws(() => parseTinkerPath("tinker://m"), /has 1 segments/);
  assert.throws(() => parseTinkerPath("tinker://m/a/b/c"), /has 4 segments/);
  assert.throws(() => parseTinkerPath("tinker:///final"), /empty model id/);
  assert.throws(() => parseTinkerPath("tinker://m/a.b"), /checkpoint name "a.b" is invalid/);
  assert.throws(() => parseTinkerPath("tinker://m/ckpt/a"), /middle segment is "ckpt"/);
  assert.throws(() => parseTinkerPath("tinker://m/weights/a.b"), /checkpoint name "a.b" is invalid; expected 1–255 characters/);
  assert.throws(() => formatTinkerPath({ modelId: "m", kind: "weights", name: "x".repeat(256) }), /is invalid/);
  assert.throws(() => formatTinkerPath({ modelId: "a/b", kind: "weights", name: "x" }), /model id "a\/b" is invalid/);
});

test("SkyRL's short sampler path tinker://<id>/<name> is sampler weights; the string itself is never rewritten", () => {
  const p = parseTinkerPath("tinker://model_3f2a/ss0_seq4");
  assert.deepEqual(p, { modelId: "model_3f2a", kind: "sampler_weights", name: "ss0_seq4", checkpointId: "sampler_weights/ss0_seq4", form: "short" });
  // "weights" as a bare name is a checkpoint called weights, not a kind.
  assert.equal(parseTinkerPath("tinker://m/weights").kind, "sampler_weights");
  assert.equal(formatTinkerPath(p), "tinker://model_3f2a/sampler_weights/ss0_seq4");
});
