// DPO's reference and SDFT's teacher are the weights a run starts from, pinned so that training
// cannot move them even on a server that samples a saved sampler of a training model with its
// current weights (SkyRL tx): the base model for a fresh run, a never-trained copy of
// load_checkpoint_path otherwise, and whatever the checkpoint records say on resume.
import { test } from "node:test";
import assert from "node:assert/strict";
import type { CheckpointRecord } from "../../src/runs/checkpoints.ts";
import type { SamplingClient } from "../../src/tinker/clients.ts";
import { frozenStartingWeights } from "../../src/training/startingWeights.ts";
import { FakeServiceClient, FakeStore } from "../supervised/fakes.ts";

class RecordingService extends FakeServiceClient {
  readonly samplers: Array<{ baseModel?: string; modelPath?: string }> = [];
  override async createSamplingClient(args?: { baseModel?: string; modelPath?: string }): Promise<never> {
    if (args === undefined) throw new Error("createSamplingClient without arguments");
    this.samplers.push(args);
    return {} as never;
  }
}

function setup() {
  const store = new FakeStore();
  store.states.set("tinker://sft/weights/final", { trained: [1, 2, 3], steps: 3 });
  const service = new RecordingService(store);
  return { service, run: { serviceClient: service, recipeName: "dpo" } };
}

const config = (load: string | null) => ({ model_name: "tiny-chat", load_checkpoint_path: load });

test("a fresh run from the base model compares against the base model itself (no snapshot to move)", async () => {
  const { service, run } = setup();
  const pinned = await frozenStartingWeights(run, config(null), "reference", undefined);
  assert.deepEqual(service.samplers, [{ baseModel: "tiny-chat" }]);
  assert.deepEqual(pinned.record, { reference_base_model: "tiny-chat" });
  assert.deepEqual(service.calls, [], "no model is created for it");
});

test("a run from load_checkpoint_path pins a copy of those weights that never trains", async () => {
  const { service, run } = setup();
  const pinned = await frozenStartingWeights(run, config("tinker://sft/weights/final"), "teacher", undefined);
  assert.deepEqual(service.calls, ["state:tinker://sft/weights/final"]);
  const copy = service.last;
  assert.equal(copy.steps, 3, "the copy holds the loaded weights");
  assert.deepEqual(copy.adam, [], "and is never stepped");
  const path = pinned.record["teacher_sampler_path"];
  assert.equal(typeof path, "string");
  assert.deepEqual(service.samplers, [{ modelPath: path }]);
  void (pinned.sampler satisfies SamplingClient);
});

test("a resumed run reads the pinned weights back from its checkpoint record", async () => {
  for (const [record, expected] of [
    [{ name: "000004", reference_sampler_path: "tinker://old/sampler_weights/reference" }, { modelPath: "tinker://old/sampler_weights/reference" }],
    [{ name: "000004", reference_base_model: "tiny-chat" }, { baseModel: "tiny-chat" }],
  ] as Array<[CheckpointRecord, { baseModel?: string; modelPath?: string }]>) {
    const { service, run } = setup();
    // Even with load_checkpoint_path set, nothing is loaded again: the record decides.
    await frozenStartingWeights(run, config("tinker://sft/weights/final"), "reference", record);
    assert.deepEqual(service.samplers, [expected]);
    assert.deepEqual(service.calls, []);
  }
});
