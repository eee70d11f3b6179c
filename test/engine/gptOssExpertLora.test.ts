// GPT-OSS's expert adapter (Tinker's shared-outer w1/w3/w2 factors, docs/numerics.md#gpt-oss)
// through the engine session: saved with Tinker's 3-D shapes, loaded back with the optimizer state
// into the same forward, and sampled from a saved checkpoint with the training forward's logprobs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { readSafetensorsHeader } from "../../src/engine/safetensors/index.ts";
import { loadModelDir } from "../../src/engine/storage/loadModel.ts";
import { EngineSession } from "../../src/engine/worker/session.ts";
import type { ForwardBackwardResultMessage } from "../../src/engine/worker/protocol.ts";
import { tempDir } from "./helpers.ts";

const FIXTURE = join(import.meta.dirname, "..", "..", "fixtures", "families", "gpt_oss");
const ADAM = { learning_rate: 0.05, beta1: 0.9, beta2: 0.95, eps: 1e-8, weight_decay: 0.01, grad_clip_norm: 0 };

function datum(tokens: number[]) {
  return {
    inputTokens: Int32Array.from(tokens.slice(0, -1)),
    lossInputs: { target_tokens: Int32Array.from(tokens.slice(1)), weights: new Float32Array(tokens.length - 1).fill(1) },
  };
}

test("gpt_oss: expert factors save with Tinker's shapes, load back with their AdamW moments, and a sampler of the checkpoint scores as the training forward", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const { config } = loadModelDir(FIXTURE);
    const moe = config.moe as NonNullable<typeof config.moe>;
    const [E, D, F, r] = [moe.numExperts, config.hiddenSize, moe.expertIntermediateSize, 2];
    const session = new EngineSession(join(dir, "store"));
    const setup = { mode: "lora" as const, rank: r, seed: 4, trainAttn: false, trainMlp: true, trainUnembed: false };
    const created = session.dispatch({ op: "createModel", modelId: "t-1", baseModel: "gpt_oss", source: { kind: "dir", dir: FIXTURE }, setup, record: true });
    // Per layer: w1 and w3 are r·D + E·F·r each, w2 is E·r·F + D·r.
    assert.equal((created as { trainableParameters: number }).trainableParameters, config.numLayers * (3 * r * D + 3 * E * F * r));
    const tokens = [3, 17, 5, 29, 11, 2, 40, 8, 13];
    const batch = [datum(tokens)];
    const fb = (modelId: string, backward: boolean) =>
      session.dispatch({ op: "forwardBackward", modelId, batch, lossFn: "cross_entropy", backward }) as ForwardBackwardResultMessage;
    const first = fb("t-1", true);
    session.dispatch({ op: "optimStep", modelId: "t-1", adam: ADAM });
    fb("t-1", true);
    session.dispatch({ op: "optimStep", modelId: "t-1", adam: ADAM });
    const trained = fb("t-1", false).logprobs[0]!;
    let moved = 0;
    for (let i = 0; i < trained.length; i++) moved = Math.max(moved, Math.abs(trained[i]! - first.logprobs[0]![i]!));
    assert.ok(moved > 1e-3, `two steps on the experts' factors moved the logprobs by only ${moved}`);

    const saved = session.dispatch({ op: "save", modelId: "t-1", kind: "weights", name: "w", overwrite: false }) as { path: string };
    const sampler = session.dispatch({ op: "save", modelId: "t-1", kind: "sampler_weights", name: "s", overwrite: false }) as { path: string };
    const ckptDir = session.store.locate(saved.path).dir;
    const header = readSafetensorsHeader(join(ckptDir, "adapter_model.safetensors")).entries;
    for (let l = 0; l < config.numLayers; l++) {
      const p = `base_model.model.model.layers.${l}.mlp.experts`;
      assert.deepEqual(header.get(`${p}.w1.lora_A.weight`)?.shape, [1, r, D]);
      assert.deepEqual(header.get(`${p}.w1.lora_B.weight`)?.shape, [E, F, r]);
      assert.deepEqual(header.get(`${p}.w3.lora_A.weight`)?.shape, [1, r, D]);
      assert.deepEqual(header.get(`${p}.w3.lora_B.weight`)?.shape, [E, F, r]);
      assert.deepEqual(header.get(`${p}.w2.lora_A.weight`)?.shape, [E, r, F]);
      assert.deepEqual(header.get(`${p}.w2.lora_B.weight`)?.shape, [1, D, r]);
    }
    assert.equal(header.size, 6 * config.numLayers, "only the experts' factors (train_mlp alone)");

    session.dispatch({
      op: "createModel",
      modelId: "t-2",
      baseModel: "gpt_oss",
      source: { kind: "dir", dir: FIXTURE },
      setup: { ...setup, seed: 99 },
      record: true,
    });
    session.dispatch({ op: "load", modelId: "t-2", path: saved.path, optimizer: true });
    assert.deepEqual(fb("t-2", false).logprobs[0], trained);
    const m1 = session.dispatch({ op: "optimizerState", modelId: "t-1" }) as { step: number; m: Map<string, Float32Array> };
    const m2 = session.dispatch({ op: "optimizerState", modelId: "t-2" }) as { step: number; m: Map<string, Float32Array> };
    assert.equal(m2.step, m1.step);
    assert.deepEqual(m2.m, m1.m);
    // The next step from the loaded state is the next step of the original.
    for (const id of ["t-1", "t-2"]) {
      fb(id, true);
      session.dispatch({ op: "optimStep", modelId: id, adam: ADAM });
    }
    assert.deepEqual(fb("t-2", false).logprobs[0], fb("t-1", false).logprobs[0]);

    session.dispatch({ op: "createSampler", samplerId: "s-1", source: { kind: "checkpoint", path: sampler.path, baseDir: FIXTURE } });
    const sampled = (await session.dispatch({ op: "computeLogprobs", samplerId: "s-1", prompt: Int32Array.from(tokens) })) as (number | null)[];
    assert.equal(sampled[0], null);
    let worst = 0;
    for (let i = 1; i < sampled.length; i++) worst = Math.max(worst, Math.abs((sampled[i] as number) - trained[i - 1]!));
    assert.ok(worst < 1e-3, `sampler of the saved adapter vs the training forward: ${worst}`);
  } finally {
    cleanup();
  }
});
