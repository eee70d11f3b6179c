import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createEmbeddedServiceClient, type EmbeddedServiceClient } from "../../src/engine/index.ts";
import { readSafetensors } from "../../src/engine/safetensors/index.ts";
import { APIStatusError, InvalidArgumentError } from "../../src/tinker/errors.ts";
import type { Datum, ForwardBackwardOutput } from "../../src/tinker/types.ts";
import { ceDatum, randomTokens, tempDir, tinyConfigJson, writeTinyModel } from "./helpers.ts";

let root: { dir: string; cleanup: () => void };
let svc: EmbeddedServiceClient;
let modelDir: string;
let storeDir: string;

before(() => {
  root = tempDir();
  modelDir = join(root.dir, "tiny");
  storeDir = join(root.dir, "store");
  writeTinyModel(modelDir, { seed: 7 });
  svc = createEmbeddedServiceClient({
    storeDir,
    kernels: "reference",
    resolve: { env: { HF_HUB_OFFLINE: "1", HF_HOME: join(root.dir, "hf"), COOKBOOK_HOME: root.dir }, fixturesDir: join(root.dir, "fixtures") },
  });
});

after(async () => {
  await svc.close();
  root.cleanup();
});

const DATA: Datum[] = [ceDatum(randomTokens(12, 1)), ceDatum(randomTokens(9, 2)), ceDatum(randomTokens(6, 3), [0, 0, 1, 1, 1])];

function logprobs(out: ForwardBackwardOutput): number[][] {
  return out.loss_fn_outputs.map((o) => o.logprobs!.data);
}

async function step(tc: Awaited<ReturnType<EmbeddedServiceClient["createLoraTrainingClient"]>>, data: Datum[] = DATA, lr = 1e-2): Promise<void> {
  const fb = await tc.forwardBackward(data, "cross_entropy");
  const opt = await tc.optimStep({ learning_rate: lr });
  await fb.result();
  await opt.result();
}

test("forward_backward returns float32 logprobs per datum and loss:sum; forward leaves gradients alone", async () => {
  const tc = await svc.createLoraTrainingClient(modelDir, { rank: 4, seed: 1 });
  const out = await (await tc.forward(DATA, "cross_entropy")).result();
  assert.equal(out.loss_fn_outputs.length, DATA.length);
  out.loss_fn_outputs.forEach((o, i) => {
    assert.equal(o.logprobs!.dtype, "float32");
    assert.deepEqual(o.logprobs!.shape, [
      DATA[i]!.model_input.chunks[0]!.type === "encoded_text" ? (DATA[i]!.model_input.chunks[0] as { tokens: number[] }).tokens.length : -1,
    ]);
    assert.ok(o.logprobs!.data.every((x) => x < 0 && Number.isFinite(x)));
  });
  let expected = 0;
  DATA.forEach((d, i) => d.loss_fn_inputs.weights!.data.forEach((w, t) => (expected -= w * out.loss_fn_outputs[i]!.logprobs!.data[t]!)));
  assert.ok(Math.abs(out.metrics["loss:sum"]! - expected) < 1e-3, `${out.metrics["loss:sum"]} vs ${expected}`);
  // forward() accumulated nothing: an optim step right after it changes no weight.
  await (await tc.optimStep({ learning_rate: 0.1 })).result();
  const again = await (await tc.forward(DATA, "cross_entropy")).result();
  assert.deepEqual(logprobs(again), logprobs(out));
  const info = await tc.getInfo();
  assert.equal(info.model_id, tc.modelId);
  assert.equal(info.is_lora, true);
  assert.equal(info.lora_rank, 4);
  assert.equal(info.model_data.arch, "llama");
  await tc.unload();
});

test("forwardBackward and optimStep submitted back to back run in order", async () => {
  const tc = await svc.createLoraTrainingClient(modelDir, { rank: 4, seed: 2 });
  const before0 = await (await tc.forward(DATA, "cross_entropy")).result();
  // Submit everything before awaiting any result.
  const f1 = await tc.forwardBackward(DATA, "cross_entropy");
  const o1 = await tc.optimStep({ learning_rate: 1e-2 });
  const f2 = await tc.forward(DATA, "cross_entropy");
  const [r1, ro, r2] = await Promise.all([f1.result(), o1.result(), f2.result()]);
  assert.deepEqual(logprobs(r1), logprobs(before0), "the forward_backward saw the weights before the step");
  assert.ok(ro.metrics!["optimizer_step:max"] === 1);
  assert.notDeepEqual(logprobs(r2), logprobs(before0), "the forward after the step saw new weights");
  assert.ok(r2.metrics["loss:sum"]! < r1.metrics["loss:sum"]!, "one step on the batch lowers its loss");
  await tc.unload();
});

test("gradients accumulate: two forwardBackward calls equal one call on the union", async () => {
  const a = await svc.createLoraTrainingClient(modelDir, { rank: 4, seed: 3 });
  const b = await svc.createLoraTrainingClient(modelDir, { rank: 4, seed: 3 });
  await (await a.forwardBackward(DATA.slice(0, 1), "cross_entropy")).result();
  await (await a.forwardBackward(DATA.slice(1), "cross_entropy")).result();
  await (await a.optimStep({ learning_rate: 1e-2 })).result();
  await (await b.forwardBackward(DATA, "cross_entropy")).result();
  await (await b.optimStep({ learning_rate: 1e-2 })).result();
  const sa = await a.optimizerState();
  const sb = await b.optimizerState();
  assert.equal(sa.step, 1);
  let maxDiff = 0;
  let maxAbs = 0;
  for (const [name, m] of sa.m) {
    const mb = sb.m.get(name)!;
    for (let i = 0; i < m.length; i++) {
      maxDiff = Math.max(maxDiff, Math.abs(m[i]! - mb[i]!));
      maxAbs = Math.max(maxAbs, Math.abs(mb[i]!));
    }
  }
  assert.ok(maxAbs > 0, "gradients are non-zero");
  assert.ok(maxDiff <= 1e-5 * Math.max(1, maxAbs), `first moments differ by ${maxDiff} (max ${maxAbs})`);
  await a.unload();
  await b.unload();
});

test("saveState → createTrainingClientFromState gives identical logprobs; optimizer restored exactly only with loadStateWithOptimizer", async () => {
  const tc = await svc.createLoraTrainingClient(modelDir, { rank: 8, seed: 4, trainUnembed: false });
  await step(tc);
  await step(tc);
  const saved = await (await tc.saveState("two-steps")).result();
  assert.equal(saved.path, `tinker://${tc.modelId}/weights/two-steps`);
  const ref = await (await tc.forward(DATA, "cross_entropy")).result();
  const refState = await tc.optimizerState();

  const restored = await svc.createTrainingClientFromState(saved.path);
  assert.notEqual(restored.modelId, tc.modelId);
  assert.equal((await restored.getInfo()).lora_rank, 8);
  assert.deepEqual(logprobs(await (await restored.forward(DATA, "cross_entropy")).result()), logprobs(ref));
  assert.equal((await restored.optimizerState()).step, 0, "weights-only load resets the optimizer");

  const withOpt = await svc.createTrainingClientFromStateWithOptimizer(saved.path);
  const st = await withOpt.optimizerState();
  assert.equal(st.step, refState.step);
  for (const [name, m] of refState.m) {
    assert.deepEqual(st.m.get(name), m, `m ${name}`);
    assert.deepEqual(st.v.get(name), refState.v.get(name), `v ${name}`);
  }
  // The next step continues bit for bit; after a weights-only restore it does not.
  await step(tc);
  await step(withOpt);
  await step(restored);
  const next = logprobs(await (await tc.forward(DATA, "cross_entropy")).result());
  assert.deepEqual(logprobs(await (await withOpt.forward(DATA, "cross_entropy")).result()), next);
  assert.notDeepEqual(logprobs(await (await restored.forward(DATA, "cross_entropy")).result()), next);

  // loadState into a used client also works and resets the optimizer.
  await (await tc.loadState(saved.path)).result();
  assert.deepEqual(logprobs(await (await tc.forward(DATA, "cross_entropy")).result()), logprobs(ref));
  assert.equal((await tc.optimizerState()).step, 0);
  for (const c of [tc, restored, withOpt]) await c.unload();
});

test("checkpoints are PEFT folders; names are validated; existing names need overwrite", async () => {
  const tc = await svc.createLoraTrainingClient(modelDir, { rank: 4, seed: 5, trainMlp: false });
  await step(tc);
  const { path } = await (await tc.saveWeightsForSampler("for-vllm")).result();
  assert.equal(path, `tinker://${tc.modelId}/sampler_weights/for-vllm`);
  const dir = join(storeDir, tc.modelId, "sampler_weights", "for-vllm");
  assert.deepEqual(readdirSync(dir).sort(), ["adapter_config.json", "adapter_model.safetensors", "checkpoint.json"]);
  const cfg = JSON.parse(readFileSync(join(dir, "adapter_config.json"), "utf8")) as Record<string, unknown>;
  assert.equal(cfg.peft_type, "LORA");
  assert.equal(cfg.r, 4);
  assert.equal(cfg.lora_alpha, 32);
  assert.equal(cfg.base_model_name_or_path, modelDir);
  const targets = cfg.target_modules as string[];
  assert.ok(
    ["q_proj", "k_proj", "v_proj", "o_proj"].every((m) => targets.includes(m)),
    JSON.stringify(targets),
  );
  assert.ok(!targets.includes("gate_proj"), "train_mlp=false adapts no MLP projection");
  const tensors = readSafetensors(join(dir, "adapter_model.safetensors"));
  const a = tensors.get("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight")!;
  const b = tensors.get("base_model.model.model.layers.1.self_attn.o_proj.lora_B.weight")!;
  assert.deepEqual(a.shape, [4, 32]);
  assert.deepEqual(b.shape, [32, 4]);
  assert.equal(a.dtype, "F32");
  assert.ok(!existsSync(join(dir, "optimizer.safetensors")), "sampler weights carry no optimizer state");

  const saved = await (await tc.saveState("ckpt")).result();
  assert.ok(existsSync(join(storeDir, tc.modelId, "weights", "ckpt", "optimizer.safetensors")));
  await assert.rejects((await tc.saveState("ckpt")).result(), (err: unknown) => {
    assert.ok(err instanceof APIStatusError);
    assert.equal(err.status, 409);
    assert.match(err.message, /already exists.*overwrite/);
    return true;
  });
  await (await tc.saveState("ckpt", { overwrite: true })).result();
  for (const bad of ["../escape", "a/b", "", "sp ace"]) {
    await assert.rejects(tc.saveState(bad), InvalidArgumentError, bad);
  }
  await assert.rejects(
    tc.loadStateWithOptimizer(`tinker://${tc.modelId}/weights/nope`).then((f) => f.result()),
    /not found/,
  );
  await assert.rejects((await tc.loadStateWithOptimizer(path)).result(), /no optimizer state/);

  const rest = svc.createRestClient();
  const info = await rest.getWeightsInfoByTinkerPath(saved.path);
  assert.deepEqual(info, { base_model: modelDir, is_lora: true, lora_rank: 4, train_unembed: true, train_mlp: false, train_attn: true });
  const list = await rest.listCheckpoints(tc.modelId);
  assert.deepEqual(list.checkpoints.map((c) => c.checkpoint_id).sort(), ["sampler_weights/for-vllm", "weights/ckpt"]);
  assert.ok(list.checkpoints.every((c) => (c.size_bytes ?? 0) > 0));
  const run = await rest.getTrainingRunByTinkerPath(saved.path);
  assert.equal(run.training_run_id, tc.modelId);
  assert.equal(run.lora_rank, 4);
  assert.equal(run.last_checkpoint?.tinker_path, saved.path);
  const runs = await rest.listTrainingRuns({ limit: 100 });
  assert.ok(runs.training_runs.some((r) => r.training_run_id === tc.modelId));
  await rest.deleteCheckpointFromTinkerPath(path);
  assert.ok(!existsSync(dir));
  assert.deepEqual(
    (await rest.listCheckpoints(tc.modelId)).checkpoints.map((c) => c.checkpoint_id),
    ["weights/ckpt"],
  );
  await assert.rejects(rest.deleteCheckpointFromTinkerPath(path), (err: unknown) => err instanceof APIStatusError && err.status === 404);
  await tc.unload();
});

test("bad inputs fail with clear errors and the engine stays usable", async () => {
  const tc = await svc.createLoraTrainingClient(modelDir, { rank: 2, seed: 6 });
  const good = await (await tc.forward(DATA, "cross_entropy")).result();
  const bad: [string, () => Promise<unknown>, RegExp][] = [
    [
      "wrong length",
      async () =>
        (
          await tc.forwardBackward(
            [{ ...DATA[0]!, loss_fn_inputs: { ...DATA[0]!.loss_fn_inputs, weights: { data: [1, 1], dtype: "float32" } } }],
            "cross_entropy",
          )
        ).result(),
      /length 2 but model_input has 11 tokens/,
    ],
    ["token outside vocab", async () => (await tc.forwardBackward([ceDatum([1, 2, 99, 4])], "cross_entropy")).result(), /outside the vocabulary/],
    [
      "target outside vocab",
      async () => (await tc.forwardBackward([ceDatum([1, 2, 3, 64])], "cross_entropy")).result(),
      /target_tokens\[2\] = 64 is outside the vocabulary/,
    ],
    ["negative token", async () => (await tc.forward([ceDatum([1, -2, 3])], "cross_entropy")).result(), /non-negative integer/],
    ["unknown loss", async () => (await tc.forwardBackward(DATA, "hinge" as "ppo")).result(), /unknown loss function "hinge"/],
    ["missing inputs", async () => (await tc.forwardBackward(DATA, "ppo")).result(), /needs loss input "logprobs"/],
    ["bad loss config", async () => (await tc.forwardBackward(DATA, "cross_entropy", { beta: 1 })).result(), /not used by cross_entropy/],
    [
      "image chunk",
      async () =>
        (
          await tc.forward([{ model_input: { chunks: [{ type: "image", data: "", format: "png", expected_tokens: 2 }] }, loss_fn_inputs: {} }], "cross_entropy")
        ).result(),
      /text-only/,
    ],
    ["bad adam", async () => (await tc.optimStep({ learning_rate: -1 })).result(), /learning_rate/],
  ];
  for (const [name, run, re] of bad) {
    await assert.rejects(
      run(),
      (err: unknown) => {
        assert.ok(err instanceof Error, name);
        assert.match(err.message, re, name);
        return true;
      },
      name,
    );
  }
  await assert.rejects(svc.createLoraTrainingClient(modelDir, { rank: 3 }), /lora_config\.rank must be a power of 2/);
  await assert.rejects(svc.createLoraTrainingClient(modelDir, { rank: 0 }), /lora_config\.rank must be positive/);
  await assert.rejects(
    svc.createLoraTrainingClient(modelDir, { trainAttn: false, trainMlp: false, trainUnembed: false }),
    /At least one of train_unembed, train_mlp, or train_attn must be True/,
  );
  await assert.rejects(svc.createLoraTrainingClient("./no-such-model"), /not found/);
  await assert.rejects(svc.createSamplingClient({}), /needs modelPath/);
  // Sampling is covered in test/engine/sampling/; taking a snapshot must not disturb the model.
  await (await tc.saveWeightsAndGetSamplingClient()).release();
  // Nothing above touched the model: same logprobs, and training still works.
  assert.deepEqual(logprobs(await (await tc.forward(DATA, "cross_entropy")).result()), logprobs(good));
  await step(tc);
  assert.equal((await tc.optimizerState()).step, 1);
  await tc.unload();
  await assert.rejects(
    tc.forward(DATA, "cross_entropy").then((f) => f.result()),
    /not loaded/,
  );
});

test("forwardBackwardCustom matches cross_entropy when the custom loss is −Σ lp", async () => {
  const a = await svc.createLoraTrainingClient(modelDir, { rank: 4, seed: 8 });
  const b = await svc.createLoraTrainingClient(modelDir, { rank: 4, seed: 8 });
  const plain = DATA.map((d) => ({ ...d, loss_fn_inputs: { target_tokens: d.loss_fn_inputs.target_tokens! } }));
  const custom = await (
    await a.forwardBackwardCustom(plain, (_data, lps) => ({
      loss: -lps.reduce((s, lp) => s + lp.reduce((x, y) => x + y, 0), 0),
      gradients: lps.map((lp) => new Float32Array(lp.length).fill(-1)),
      metrics: { "custom:sum": 1 },
    }))
  ).result();
  assert.equal(custom.metrics["custom:sum"], 1);
  const ones = DATA.map((d) => ({
    ...d,
    loss_fn_inputs: {
      target_tokens: d.loss_fn_inputs.target_tokens!,
      weights: { data: d.loss_fn_inputs.target_tokens!.data.map(() => 1), dtype: "float32" as const },
    },
  }));
  await (await b.forwardBackward(ones, "cross_entropy")).result();
  await (await a.optimStep({ learning_rate: 1e-2 })).result();
  await (await b.optimStep({ learning_rate: 1e-2 })).result();
  const la = logprobs(await (await a.forward(DATA, "cross_entropy")).result());
  const lb = logprobs(await (await b.forward(DATA, "cross_entropy")).result());
  la.forEach((row, i) => row.forEach((x, t) => assert.ok(Math.abs(x - lb[i]![t]!) < 1e-5)));
  await a.unload();
  await b.unload();
});

test("full-parameter training from a config: trains, saves an HF model folder, resumes", async () => {
  const tc = await svc.createFullTrainingClient({ config: tinyConfigJson({ num_hidden_layers: 1 }), seed: 11, name: "scratch-tiny" });
  assert.equal((await tc.getInfo()).is_lora, false);
  const l0 = await (await tc.forward(DATA, "cross_entropy")).result();
  for (let i = 0; i < 3; i++) await step(tc, DATA, 1e-2);
  const l1 = await (await tc.forward(DATA, "cross_entropy")).result();
  assert.ok(l1.metrics["loss:sum"]! < l0.metrics["loss:sum"]!, "loss goes down");
  const saved = await (await tc.saveState("full")).result();
  const dir = join(storeDir, tc.modelId, "weights", "full");
  assert.ok(existsSync(join(dir, "model.safetensors")) && existsSync(join(dir, "config.json")));
  const cfg = JSON.parse(readFileSync(join(dir, "config.json"), "utf8")) as Record<string, unknown>;
  assert.equal(cfg.num_hidden_layers, 1);
  assert.ok(readSafetensors(join(dir, "model.safetensors")).has("model.layers.0.mlp.up_proj.weight"));
  const info = await svc.createRestClient().getWeightsInfoByTinkerPath(saved.path);
  assert.equal(info.is_lora, false);
  assert.equal(info.base_model, "scratch-tiny");
  const resumed = await svc.createTrainingClientFromStateWithOptimizer(saved.path);
  assert.deepEqual(logprobs(await (await resumed.forward(DATA, "cross_entropy")).result()), logprobs(l1));
  assert.equal((await resumed.optimizerState()).step, 3);
  // A LoRA model cannot load full weights.
  const lora = await svc.createLoraTrainingClient(modelDir, { rank: 2, seed: 1 });
  await assert.rejects((await lora.loadState(saved.path)).result(), /full.*LoRA/);
  for (const c of [tc, resumed, lora]) await c.unload();
});

test("getServerCapabilities lists local models", async () => {
  const { dir, cleanup } = tempDir();
  try {
    writeTinyModel(join(dir, "fixtures", "tiny-chat"));
    const local = createEmbeddedServiceClient({
      storeDir: join(dir, "store"),
      resolve: { env: { HF_HOME: join(dir, "hf"), HF_HUB_OFFLINE: "1", COOKBOOK_HOME: dir }, fixturesDir: join(dir, "fixtures") },
    });
    const caps = await local.getServerCapabilities();
    assert.deepEqual(caps.supported_models, [{ model_name: "tiny-chat", max_context_length: 128 }]);
    const tc = await local.createLoraTrainingClient("cookbook/tiny-chat", { rank: 2, seed: 0 });
    assert.equal(tc.baseModel, "cookbook/tiny-chat");
    assert.equal((await tc.getInfo()).model_data.tokenizer_id, "cookbook/tiny-chat");
    await local.close();
    await assert.rejects(local.createLoraTrainingClient("cookbook/tiny-chat"), /closed/);
  } finally {
    cleanup();
  }
});

test("a checkpoint whose base was a relative path resumes from another working directory", async () => {
  const env = { HF_HUB_OFFLINE: "1", HF_HOME: join(root.dir, "hf"), COOKBOOK_HOME: root.dir };
  const here = createEmbeddedServiceClient({ storeDir, kernels: "reference", resolve: { env, cwd: root.dir } });
  const elsewhere = createEmbeddedServiceClient({ storeDir, kernels: "reference", resolve: { env, cwd: join(root.dir, "store") } });
  try {
    const tc = await here.createLoraTrainingClient("./tiny", { rank: 2, seed: 9 });
    await step(tc);
    const { path } = await (await tc.saveState("rel")).result();
    const ref = logprobs(await (await tc.forward(DATA, "cross_entropy")).result());
    await assert.rejects(elsewhere.createLoraTrainingClient("./tiny"), /not found/);
    const resumed = await elsewhere.createTrainingClientFromState(path);
    assert.equal(resumed.baseModel, "./tiny");
    assert.deepEqual(logprobs(await (await resumed.forward(DATA, "cross_entropy")).result()), ref);
  } finally {
    await here.close();
    await elsewhere.close();
  }
});

test("engine options are validated", () => {
  assert.throws(() => createEmbeddedServiceClient({ kernels: "gpu" as "native" }), /kernels/);
  assert.throws(() => createEmbeddedServiceClient({ storDir: "/tmp/x" } as unknown as { storeDir: string }), /storDir|Unrecognized/);
});
