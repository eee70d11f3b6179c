import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createEmbeddedServiceClient } from "../../src/engine/index.ts";
import { EngineWorkerHost, deserializeError } from "../../src/engine/worker/host.ts";
import { datumsToBatch } from "../../src/engine/convert.ts";
import { APIStatusError, InvalidArgumentError } from "../../src/tinker/errors.ts";
import { ceDatum, randomTokens, tempDir, tinyConfigJson, writeTinyModel } from "./helpers.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

test("compute runs off the caller's thread: timers keep firing during a long forward_backward", async () => {
  const { dir, cleanup } = tempDir();
  const svc = createEmbeddedServiceClient({ storeDir: join(dir, "store"), kernels: "reference" });
  try {
    const tc = await svc.createFullTrainingClient({
      config: tinyConfigJson({ hidden_size: 64, intermediate_size: 128, num_attention_heads: 4, num_key_value_heads: 4, head_dim: 16, num_hidden_layers: 2 }),
      seed: 1,
    });
    const data = Array.from({ length: 2 }, (_, i) => ceDatum(randomTokens(64, i + 1)));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 2);
    const t0 = performance.now();
    const fut = await tc.forwardBackward(data, "cross_entropy");
    const submittedAfter = performance.now() - t0;
    await fut.result();
    const elapsed = performance.now() - t0;
    clearInterval(timer);
    console.log(`forward_backward took ${elapsed.toFixed(0)} ms, ${ticks} ticks`);
    assert.ok(elapsed > 40, `the pass should take a while to make this test meaningful (took ${elapsed.toFixed(0)} ms)`);
    assert.ok(submittedAfter < elapsed / 2, `submission returned after ${submittedAfter.toFixed(1)} ms of ${elapsed.toFixed(0)} ms`);
    assert.ok(ticks >= Math.min(10, elapsed / 8), `only ${ticks} timer ticks in ${elapsed.toFixed(0)} ms`);
  } finally {
    await svc.close();
    cleanup();
  }
});

test("request typed arrays are transferred to the worker, not copied", async () => {
  const { dir, cleanup } = tempDir();
  const host = new EngineWorkerHost({ storeDir: join(dir, "store"), kernels: "reference" });
  try {
    writeTinyModel(join(dir, "m"));
    await host.submit({
      op: "createModel",
      modelId: "t-1",
      baseModel: "m",
      source: { kind: "dir", dir: join(dir, "m") },
      setup: { mode: "lora", rank: 2, seed: 0, trainAttn: true, trainMlp: true, trainUnembed: true },
      record: false,
    });
    const batch = datumsToBatch([ceDatum([1, 2, 3, 4])]);
    const tokens = batch[0]!.inputTokens;
    const pending = host.submit({ op: "forwardBackward", modelId: "t-1", batch, lossFn: "cross_entropy", backward: false });
    assert.equal(tokens.byteLength, 0, "the input buffer was detached by the transfer");
    const r = await pending;
    assert.ok(r.logprobs[0] instanceof Float32Array);
    assert.equal(r.logprobs[0]!.length, 3);
  } finally {
    await host.close();
    cleanup();
  }
});

test("worker errors come back as Errors of the right class with the message", async () => {
  assert.ok(deserializeError({ name: "InvalidArgumentError", message: "bad" }) instanceof InvalidArgumentError);
  const conflict = deserializeError({ name: "APIStatusError", message: "exists", status: 409, body: { detail: "exists" } });
  assert.ok(conflict instanceof APIStatusError && conflict.status === 409);
  const plain = deserializeError({ name: "RangeError", message: "boom", stack: "RangeError: boom\n    at f (x.ts:1:1)" });
  assert.equal(plain.message, "boom");
  assert.equal(plain.name, "RangeError");
  assert.match(plain.stack ?? "", /in engine worker[\s\S]*x\.ts:1:1/);

  const { dir, cleanup } = tempDir();
  const host = new EngineWorkerHost({ storeDir: join(dir, "store"), kernels: "reference" });
  try {
    await assert.rejects(
      host.submit({ op: "optimStep", modelId: "nope", adam: { learning_rate: 1, beta1: 0.9, beta2: 0.95, eps: 1e-12, weight_decay: 0, grad_clip_norm: 0 } }),
      (err: unknown) => {
        assert.ok(err instanceof InvalidArgumentError);
        assert.match(err.message, /model "nope" is not loaded/);
        return true;
      },
    );
    // Still alive after an error.
    await assert.rejects(host.submit({ op: "unload", modelId: "nope" }), /not loaded/);
  } finally {
    await host.close();
    cleanup();
  }
  await assert.rejects(host.submit({ op: "unload", modelId: "x" }), /closed/);
});

test("the worker bootstrap works from a plain node process that registers tsx itself (as bin/cookbook.js does)", () => {
  const { dir, cleanup } = tempDir();
  try {
    writeTinyModel(join(dir, "m"));
    const engine = pathToFileURL(join(REPO, "src", "engine", "index.ts")).href;
    const code = `
      import { register } from "tsx/esm/api";
      register();
      const { createEmbeddedServiceClient } = await import(${JSON.stringify(engine)});
      const svc = createEmbeddedServiceClient({ storeDir: ${JSON.stringify(join(dir, "store"))}, kernels: "reference" });
      const tc = await svc.createLoraTrainingClient(${JSON.stringify(join(dir, "m"))}, { rank: 2, seed: 0 });
      const datum = { model_input: { chunks: [{ type: "encoded_text", tokens: [1, 2, 3] }] },
        loss_fn_inputs: { target_tokens: { data: [2, 3, 4], dtype: "int64" }, weights: { data: [1, 1, 1], dtype: "float32" } } };
      const out = await (await tc.forward([datum], "cross_entropy")).result();
      console.log(JSON.stringify({ n: out.loss_fn_outputs[0].logprobs.data.length, loss: out.metrics["loss:sum"] }));
      await svc.close();
    `;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], {
      cwd: REPO,
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, NODE_OPTIONS: "" },
    });
    assert.equal(r.status, 0, r.stderr);
    const parsed = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { n: number; loss: number };
    assert.equal(parsed.n, 3);
    assert.ok(parsed.loss > 0);
  } finally {
    cleanup();
  }
});

test("an unclosed engine does not keep the process alive", () => {
  const { dir, cleanup } = tempDir();
  try {
    writeTinyModel(join(dir, "m"));
    const engine = pathToFileURL(join(REPO, "src", "engine", "index.ts")).href;
    const code = `
      import { register } from "tsx/esm/api";
      register();
      const { createEmbeddedServiceClient } = await import(${JSON.stringify(engine)});
      const svc = createEmbeddedServiceClient({ storeDir: ${JSON.stringify(join(dir, "store"))}, kernels: "reference" });
      const tc = await svc.createLoraTrainingClient(${JSON.stringify(join(dir, "m"))}, { rank: 2, seed: 0 });
      console.log(tc.modelId);
    `;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], { cwd: REPO, encoding: "utf8", timeout: 30_000 });
    assert.equal(r.signal, null, "the process exited on its own");
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /local-[0-9a-f]{8}/);
  } finally {
    cleanup();
  }
});

test("native kernels load inside the worker and agree with the reference kernels", async () => {
  const { dir, cleanup } = tempDir();
  writeTinyModel(join(dir, "m"), { seed: 4 });
  const data = [ceDatum(randomTokens(20, 1)), ceDatum(randomTokens(9, 2))];
  const losses: number[] = [];
  try {
    for (const kernels of ["native", "reference"] as const) {
      const svc = createEmbeddedServiceClient({ storeDir: join(dir, `store-${kernels}`), kernels });
      try {
        const tc = await svc.createLoraTrainingClient(join(dir, "m"), { rank: 4, seed: 1 });
        const fb = await tc.forwardBackward(data, "cross_entropy");
        const opt = await tc.optimStep({ learning_rate: 1e-2 });
        await fb.result();
        await opt.result();
        losses.push((await (await tc.forward(data, "cross_entropy")).result()).metrics["loss:sum"]!);
      } finally {
        await svc.close();
      }
    }
    assert.ok(Math.abs(losses[0]! - losses[1]!) < 1e-3 * Math.abs(losses[1]!), `native ${losses[0]} vs reference ${losses[1]}`);
  } finally {
    cleanup();
  }
});
