import { test } from "node:test";
import assert from "node:assert/strict";
import { appendCheckpoint, checkpointName, getLastCheckpoint, readCheckpoints } from "../../src/runs/checkpoints.ts";
import { tempDir } from "./helpers.ts";

test("checkpoint records round-trip and getLastCheckpoint picks the last with the key", () => {
  const dir = tempDir();
  assert.equal(getLastCheckpoint(dir), undefined);
  appendCheckpoint(dir, {
    name: checkpointName(20),
    batch: 20,
    epoch: 0,
    state_path: "tinker://m/weights/000020",
    sampler_path: "tinker://m/sampler_weights/000020",
    elapsed_tokens: 1234,
  });
  appendCheckpoint(dir, { name: checkpointName(30), batch: 30, sampler_path: "tinker://m/sampler_weights/000030" });
  assert.equal(readCheckpoints(dir).length, 2);
  assert.equal(getLastCheckpoint(dir)?.name, "000020");
  assert.equal(getLastCheckpoint(dir)?.elapsed_tokens, 1234);
  assert.equal(getLastCheckpoint(dir, "sampler_path")?.name, "000030");
  appendCheckpoint(dir, { name: "final", batch: 0, epoch: 1, final: true, state_path: "tinker://m/weights/final" });
  assert.equal(getLastCheckpoint(dir)?.final, true);
  assert.equal(checkpointName(7), "000007");
});
