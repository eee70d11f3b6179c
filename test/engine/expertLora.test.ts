// The experts' adapter of GPT-OSS and Qwen3-MoE (Tinker's shared-outer w1/w3/w2 factors,
// docs/numerics.md#expert-lora): through the engine session saved with Tinker's 3-D shapes, loaded
// back with the optimizer state into the same forward, and sampled from a saved checkpoint with the
// training forward's logprobs; merged into the base's expert weights and rewritten for PEFT.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { mkdirSync } from "node:fs";
import { getKernels } from "../../src/engine/kernels/index.ts";
import { EngineModel } from "../../src/engine/model/model.ts";
import { readSafetensorsHeader } from "../../src/engine/safetensors/index.ts";
import { loadBaseModelDir, loadModelDir } from "../../src/engine/storage/loadModel.ts";
import { mergeExpertFactors, peftExpertTensors, peftPerExpertTensors } from "../../src/export/expertLora.ts";
import { pairLoraTensors, type LoraAdapter } from "../../src/export/lora.ts";
import { writeMergedModel } from "../../src/export/merged.ts";
import { EngineSession } from "../../src/engine/worker/session.ts";
import type { ForwardBackwardResultMessage } from "../../src/engine/worker/protocol.ts";
import { tempDir } from "./helpers.ts";

const FIXTURES = join(import.meta.dirname, "..", "..", "fixtures", "families");
const FIXTURE = join(FIXTURES, "gpt_oss");
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

/** Logprobs of the fixture's reference tokens under `model` (forward only). */
function logprobsOf(model: EngineModel, tokens: number[]): Float32Array {
  return model.forwardBackward([datum(tokens)], "cross_entropy", undefined, false).logprobs[0]!;
}

function trainedAdapter(dir: string): { model: EngineModel; adapter: LoraAdapter } {
  const { config, weights } = loadBaseModelDir(dir, getKernels().name === "native" ? "resident" : "fp32");
  const model = EngineModel.create(config, weights, { mode: "lora", rank: 2, seed: 4, trainAttn: true, trainMlp: true, trainUnembed: false }, getKernels());
  const trained = model.trainableTensors();
  let k = 0;
  for (const [name, t] of trained) if (name.includes("lora_B")) for (let i = 0; i < t.length; i++) t[i] = Math.sin(++k) * 0.2;
  model.loadTrainableTensors(trained);
  const shaped = new Map([...model.parameters()].map((t) => [t.name, { shape: [...t.shape], data: Float32Array.from(t.data) }]));
  return { model, adapter: pairLoraTensors(shaped, 2, 32, "test") };
}

test("a merged export folds the expert factors into GPT-OSS's gate_up_proj (interleaved) and down_proj, or each Qwen3-MoE expert's gate/up/down_proj, and scores as the adapted model, from fp32 and bf16 bases", () => {
  const { dir, cleanup } = tempDir("experts-merge-");
  const tokens = [3, 17, 5, 29, 11, 2, 40, 8, 13, 21, 1];
  try {
    for (const base of ["gpt_oss", "gpt_oss-bf16", "qwen3_moe", "qwen3_moe-bf16"]) {
      const { model, adapter } = trainedAdapter(join(FIXTURES, base));
      const { config } = loadModelDir(join(FIXTURES, base));
      const moe = config.moe as NonNullable<typeof config.moe>;
      const sparse = moe.sparseLayers.filter(Boolean).length;
      assert.ok(sparse > 0);
      assert.equal(adapter.experts.size, sparse, "every sparse layer's experts carry factors");
      const out = join(dir, base);
      mkdirSync(out);
      const result = writeMergedModel(join(FIXTURES, base), adapter, out, { dtype: "fp32", maxShardBytes: 1 << 30 });
      // Two fused tensors per layer (GPT-OSS), or three projections of every expert (Qwen3-MoE).
      const perLayer = moe.gptOss !== undefined ? 2 : 3 * moe.numExperts;
      assert.equal(result.mergedModules, adapter.modules.size + perLayer * adapter.experts.size);
      const merged = loadModelDir(out);
      const ours = logprobsOf(model, tokens);
      const mergedLp = logprobsOf(EngineModel.create(merged.config, merged.weights, { mode: "full", seed: 0 }, getKernels()), tokens);
      let worst = 0;
      for (let i = 0; i < ours.length; i++) worst = Math.max(worst, Math.abs(ours[i]! - mergedLp[i]!));
      // A 16-bit base trains resident (its own GEMM kernels, another summation order) but merges in
      // fp32: measured 1.2e-5 for qwen3_moe-bf16, under 1e-5 elsewhere.
      assert.ok(worst < (base.endsWith("-bf16") ? 3e-5 : 1e-5), `${base}: merged vs adapted ${worst}`);
      // Without the expert factors the merged model scores differently: they are in the expert weights.
      const attnOnly: LoraAdapter = { ...adapter, experts: new Map() };
      const out2 = join(dir, `${base}-attn`);
      mkdirSync(out2);
      writeMergedModel(join(FIXTURES, base), attnOnly, out2, { dtype: "fp32", maxShardBytes: 1 << 30 });
      const m2 = loadModelDir(out2);
      const lp2 = logprobsOf(EngineModel.create(m2.config, m2.weights, { mode: "full", seed: 0 }, getKernels()), tokens);
      assert.ok(
        lp2.some((v, i) => Math.abs(v - ours[i]!) > 1e-3),
        `${base}: the expert factors changed nothing`,
      );
    }
  } finally {
    cleanup();
  }
});

test("qwen3_moe: the PEFT form of the expert factors (a LoRA pair per expert projection, the shared factor repeated) gives each expert the merged delta", () => {
  const { adapter } = trainedAdapter(join(FIXTURES, "qwen3_moe"));
  const [module, layer] = [...adapter.experts][0]!;
  const { experts: E, rank: r } = layer;
  const k = getKernels();
  const peft = peftPerExpertTensors(layer);
  assert.equal(peft.size, 6 * E);
  for (let e = 0; e < E; e++)
    for (const [proj, p] of [
      ["gate_proj", layer.gate],
      ["up_proj", layer.up],
      ["down_proj", layer.down],
    ] as const) {
      const name = `base_model.model.${module}.${e}.${proj}`;
      const a = peft.get(`${name}.lora_A.weight`)!;
      const b = peft.get(`${name}.lora_B.weight`)!;
      assert.deepEqual(a.shape, [r, p.inDim], `${name} A`);
      assert.deepEqual(b.shape, [p.outDim, r], `${name} B`);
      // PEFT's delta s·B·A against the merge of the engine's factors into a zero weight.
      const got = new Float32Array(p.outDim * p.inDim);
      for (let o = 0; o < p.outDim; o++)
        for (let i = 0; i < p.inDim; i++) {
          let s = 0;
          for (let q = 0; q < r; q++) s += b.data[o * r + q]! * a.data[q * p.inDim + i]!;
          got[o * p.inDim + i] = s * adapter.scale;
        }
      const want = new Float32Array(p.outDim * p.inDim);
      mergeExpertFactors(k, layer, proj, adapter.scale, want, e);
      let worst = 0;
      let size = 0;
      for (let i = 0; i < got.length; i++) {
        worst = Math.max(worst, Math.abs(got[i]! - want[i]!));
        size = Math.max(size, Math.abs(want[i]!));
      }
      assert.ok(size > 1e-4 && worst < 1e-6 * size, `${name}: PEFT form vs merged delta ${worst} (largest ${size})`);
    }
  // The shared factors are the same in every expert's pair: gate's A and down's B.
  const p = `base_model.model.${module}`;
  assert.deepEqual(peft.get(`${p}.0.gate_proj.lora_A.weight`)!.data, peft.get(`${p}.${E - 1}.gate_proj.lora_A.weight`)!.data);
  assert.deepEqual(peft.get(`${p}.0.down_proj.lora_B.weight`)!.data, peft.get(`${p}.${E - 1}.down_proj.lora_B.weight`)!.data);
  assert.notDeepEqual(peft.get(`${p}.0.gate_proj.lora_B.weight`)!.data, peft.get(`${p}.1.gate_proj.lora_B.weight`)!.data);
});

test("gpt_oss: a merged export of expert factors onto an MXFP4 base is refused with the reason", () => {
  const { dir, cleanup } = tempDir("gptoss-mxfp4-");
  try {
    const { adapter } = trainedAdapter(join(FIXTURES, "gpt_oss"));
    assert.throws(
      () => writeMergedModel(join(FIXTURES, "gpt_oss-mxfp4"), adapter, dir, { dtype: "bf16", maxShardBytes: 1 << 30 }),
      /stores GPT-OSS's experts in MXFP4 .*re-quantizes to MXFP4.*--adapter/,
    );
    // The attention's adapter alone still merges (the MXFP4 experts are copied as they are).
    const attnOnly: LoraAdapter = { ...adapter, experts: new Map() };
    const result = writeMergedModel(join(FIXTURES, "gpt_oss-mxfp4"), attnOnly, dir, { dtype: "bf16", maxShardBytes: 1 << 30 });
    assert.equal(result.mergedModules, adapter.modules.size);
  } finally {
    cleanup();
  }
});

test("gpt_oss: the PEFT form of the expert factors (target_parameters, ParamWrapper layout) gives each expert the merged delta", () => {
  const { adapter } = trainedAdapter(join(FIXTURES, "gpt_oss"));
  const layer = adapter.experts.get("model.layers.1.mlp.experts")!;
  const { experts: E, rank: r } = layer;
  const [D, F] = [layer.gate.inDim, layer.gate.outDim];
  const k = getKernels();
  const peft = peftExpertTensors(layer);
  // ParamWrapper: lora_A [E·R, in] is (E, R, in); lora_B [out, R·E] is (out, R, E); delta[e, i, o] = Σ_q B[o, q, e]·A[e, q, i].
  const delta = (a: Float32Array, b: Float32Array, R: number, inDim: number, outDim: number, scale: number): Float32Array => {
    const out = new Float32Array(E * inDim * outDim);
    for (let e = 0; e < E; e++)
      for (let i = 0; i < inDim; i++)
        for (let o = 0; o < outDim; o++) {
          let s = 0;
          for (let q = 0; q < R; q++) s += b[o * R * E + q * E + e]! * a[e * R * inDim + q * inDim + i]!;
          out[e * inDim * outDim + i * outDim + o] = s * scale;
        }
    return out;
  };
  const p = "base_model.model.model.layers.1.mlp.experts";
  const gu = delta(peft.get(`${p}.base_layer.lora_A.weight`)!.data, peft.get(`${p}.base_layer.lora_B.weight`)!.data, 2 * r, D, 2 * F, 64 / (2 * r));
  const dn = delta(peft.get(`${p}.lora_A.weight`)!.data, peft.get(`${p}.lora_B.weight`)!.data, r, F, D, 32 / r);
  const wantGu = new Float32Array(E * D * 2 * F);
  mergeExpertFactors(k, layer, "gate_up_proj", adapter.scale, wantGu);
  const wantDn = new Float32Array(E * F * D);
  mergeExpertFactors(k, layer, "down_proj", adapter.scale, wantDn);
  let worst = 0;
  let size = 0;
  for (const [got, want] of [
    [gu, wantGu],
    [dn, wantDn],
  ] as const)
    for (let i = 0; i < got.length; i++) {
      worst = Math.max(worst, Math.abs(got[i]! - want[i]!));
      size = Math.max(size, Math.abs(want[i]!));
    }
  assert.ok(size > 1e-3 && worst < 1e-6 * size, `PEFT form vs merged delta: ${worst} (largest ${size})`);
  assert.deepEqual(peft.get(`${p}.base_layer.lora_A.weight`)!.shape, [E * 2 * r, D]);
  assert.deepEqual(peft.get(`${p}.lora_B.weight`)!.shape, [D, r * E]);
});
