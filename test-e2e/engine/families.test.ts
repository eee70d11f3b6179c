// The decoder families beyond llama/qwen against transformers + PEFT, end to end. For each family a
// random model in a tiny config saved by transformers (scripts/makeFamilyFixtures.py, with
// tiny-chat's tokenizer so recipes can train it):
// - LoRA on every projection and the head: the gradients of one step and the weights after three
//   AdamW steps equal PEFT's (same initial LoRA weights on both sides, fp32);
// - `cookbook run sl_basic model_name=<folder>` trains it, and `cookbook export --merged` (and
//   --adapter) of the result loads in transformers/PEFT with the engine's logprobs.
// Needs the Python 3.11 venv (made on first use).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { getKernels } from "../../src/engine/kernels/index.ts";
import { loadModelDir } from "../../src/engine/storage/loadModel.ts";
import { EngineModel, type SequenceInput } from "../../src/engine/model/model.ts";
import { LORA_ALPHA } from "../../src/engine/model/params.ts";
import { readSafetensors } from "../../src/engine/safetensors/index.ts";
import { inferenceModel } from "../../src/engine/sampling/forward.ts";
import { computePromptLogprobs } from "../../src/engine/sampling/scheduler.ts";
import { buildInferenceWeights } from "../../src/engine/sampling/weights.ts";
import { defaultFixturesDir } from "../../src/engine/resolve.ts";
import { locateCheckpoint } from "../../src/export/source.ts";
import { ensurePythonVenv, runPythonJson } from "../pythonVenv.ts";

const run = promisify(execFile);
const ROOT_DIR = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT_DIR, "bin", "cookbook.js");
const MAKE = join(ROOT_DIR, "scripts", "makeFamilyFixtures.py");
const PEFT_STEPS = join(import.meta.dirname, "peftSteps.py");
const SCORE = join(ROOT_DIR, "test-e2e", "export", "scoreExports.py");
// FAMILIES=a,b (environment) runs a subset while working on one family.
const FAMILIES = process.env.FAMILIES?.split(",") ?? ["olmo2", "gemma3_text", "smollm3", "phi3", "qwen3_moe", "qwen3_5_text", "gpt_oss"];
const RANK = 4;
/**
 * How far the engine's logprobs may be from transformers' on the fp32 merged export. Qwen3.5: the
 * merge rounds every adapted weight (W + s·B·A) to fp32, and its L2-normed delta rule carries that
 * further than attention does: measured 1.1e-5 merged against 2.8e-6 for the unmerged adapter in
 * PEFT, while transformers' own fp32 output is up to 8.5e-6 from its float64 one
 * (docs/numerics.md#gated-deltanet).
 */
const MERGED_TOLERANCE: Record<string, number> = { qwen3_5_text: 2e-5 };
const ADAM = { learning_rate: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weight_decay: 0.01, grad_clip_norm: 0 };

let root: string;
let python: string;
let env: NodeJS.ProcessEnv;

before(() => {
  python = ensurePythonVenv();
  root = mkdtempSync(join(tmpdir(), "families-e2e-"));
  env = { ...process.env, COOKBOOK_HOME: join(root, "home"), HF_HUB_OFFLINE: "1", TINKER_BASE_URL: "", TINKER_API_KEY: "" };
  const tinyChat = join(defaultFixturesDir(), "tiny-chat");
  execFileSync(python, [MAKE, "--out", join(root, "models"), "--vocab", "1024", "--tokenizer-from", tinyChat, ...FAMILIES.flatMap((f) => ["--family", f])], {
    env: { ...process.env, HF_HUB_OFFLINE: "1", TRANSFORMERS_OFFLINE: "1" },
    stdio: ["ignore", "ignore", "pipe"],
  });
});

after(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

function batchOf(vocab: number): SequenceInput[] {
  const rng = lcg(17);
  return [9, 6, 12].map((n) => ({
    inputTokens: Int32Array.from({ length: n }, () => Math.floor(rng() * vocab)),
    lossInputs: {
      target_tokens: Int32Array.from({ length: n }, () => Math.floor(rng() * vocab)),
      weights: Float32Array.from({ length: n }, () => 0.5 + rng()),
    },
  }));
}

/** max |a - b| over entries, relative to the largest |b| of the tensor. */
function relDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let d = 0;
  let s = 0;
  for (let i = 0; i < a.length; i++) {
    d = Math.max(d, Math.abs(a[i]! - b[i]!));
    s = Math.max(s, Math.abs(b[i]!));
  }
  return d / Math.max(s, 1e-30);
}

interface PeftSteps {
  losses: number[];
  grads: Record<string, number[]>;
  final: Record<string, number[]>;
}

for (const family of FAMILIES) {
  test(`${family}: LoRA gradients and three AdamW steps equal transformers + PEFT's`, (t) => {
    const dir = join(root, "models", family);
    const { config, weights } = loadModelDir(dir);
    const model = EngineModel.create(config, weights, { mode: "lora", rank: RANK, seed: 3, trainAttn: true, trainMlp: true, trainUnembed: true }, getKernels());
    // B = 0 would leave A without gradient: start both sides from the same nonzero B.
    const rng = lcg(5);
    const init = model.trainableTensors();
    for (const [name, t] of init) if (name.includes("lora_B")) for (let i = 0; i < t.length; i++) t[i] = (rng() * 2 - 1) * 0.05;
    model.loadTrainableTensors(init);
    const batch = batchOf(config.vocabSize);
    const losses: number[] = [];
    let grads = new Map<string, Float32Array>();
    for (let step = 0; step < 3; step++) {
      losses.push(model.forwardBackward(batch, "cross_entropy", undefined, true).lossSum);
      if (step === 0) grads = new Map(model.parameters().map((t) => [t.name, Float32Array.from(t.grad ?? [])]));
      model.optimStep(ADAM);
    }
    const targets = [...new Set([...init.keys()].map((n) => n.split(".").at(-3)!))];
    const peft = runPythonJson<PeftSteps>(python, PEFT_STEPS, {
      model_dir: dir,
      rank: RANK,
      alpha: LORA_ALPHA,
      targets,
      init: Object.fromEntries([...init].map(([n, t]) => [n, Array.from(t)])),
      batch: batch.map((d) => ({
        tokens: Array.from(d.inputTokens),
        targets: Array.from(d.lossInputs.target_tokens!),
        weights: Array.from(d.lossInputs.weights!),
      })),
      adam: { lr: ADAM.learning_rate, beta1: ADAM.beta1, beta2: ADAM.beta2, eps: ADAM.eps, weight_decay: ADAM.weight_decay },
      steps: 3,
    });
    assert.equal(Object.keys(peft.grads).length, init.size, "PEFT trains as many tensors as the engine");
    // Every projection kind and the head carry an adapter (Phi-3: its fused matrices, as PEFT names
    // them; Qwen3.5: also its linear attention's; the mixture-of-experts models: the attention's,
    // the head and their experts' shared-outer factors w1/w3/w2).
    const expected =
      config.fusedProjections === true
        ? ["qkv_proj", "o_proj", "gate_up_proj", "down_proj", "lm_head"]
        : config.moe !== undefined
          ? ["q_proj", "k_proj", "v_proj", "o_proj", "lm_head", "w1", "w2", "w3"]
          : ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"];
    if (config.linearAttention !== undefined) expected.push("in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a", "out_proj");
    assert.deepEqual([...targets].sort(), [...expected].sort());
    for (let s = 0; s < 3; s++)
      assert.ok(Math.abs(losses[s]! - peft.losses[s]!) <= 1e-5 * Math.abs(peft.losses[s]!), `step ${s} loss: ours ${losses[s]}, PEFT ${peft.losses[s]}`);
    assert.ok(losses[2]! < losses[0]!, `the loss did not go down: ${losses}`);
    let worstGrad = 0;
    let worstFinal = 0;
    let noisy = 0;
    let entries = 0;
    const finalOurs = model.trainableTensors();
    for (const [name, g] of grads) {
      // Adam divides by the gradient's own size, so an entry whose gradient is at float32 noise
      // (cancellation, ~1e-7 of the tensor's largest) moves by lr in an arbitrary direction on
      // both sides; every other entry must land where PEFT's does. An exact zero (the factors of an
      // expert no token chose) is reproduced: it takes only the decay step on both sides. The
      // per-expert factors (w1/w3 B, w2 A) hold every expert in one tensor: each expert's block is
      // its own sum over its own tokens, so the noise level and the relative error are the block's.
      const perExpert = config.moe !== undefined && /\.experts\.(w[13]\.lora_B|w2\.lora_A)\.weight$/.test(name);
      const block = perExpert ? g.length / config.moe!.numExperts : g.length;
      const pg = peft.grads[name]!;
      for (let i0 = 0; i0 < g.length; i0 += block) worstGrad = Math.max(worstGrad, relDiff(g.subarray(i0, i0 + block), pg.slice(i0, i0 + block)));
      const gmax = new Float32Array(g.length / block);
      for (let i = 0; i < g.length; i++) gmax[(i / block) | 0] = Math.max(gmax[(i / block) | 0]!, Math.abs(g[i]!));
      const a = finalOurs.get(name)!;
      const b = peft.final[name]!;
      for (let i = 0; i < a.length; i++) {
        entries++;
        // Small but reproduced (to 1e-3 of itself) is not noise: the clamped SwiGLU leaves GPT-OSS's
        // expert rows many such entries, and Adam moves them alike on both sides.
        const reproduced = Math.abs(g[i]! - pg[i]!) <= 1e-3 * Math.abs(pg[i]!);
        if (!reproduced && Math.abs(g[i]!) < 1e-5 * gmax[(i / block) | 0]!) noisy++;
        else worstFinal = Math.max(worstFinal, Math.abs(a[i]! - b[i]!));
      }
    }
    t.diagnostic(
      `gradients ${worstGrad}, weights after three steps ${worstFinal}, losses ${losses.map((l, i) => Math.abs(l - peft.losses[i]!) / Math.abs(peft.losses[i]!)).join(" ")}`,
    );
    assert.ok(worstGrad < 1e-4, `gradients differ from PEFT's by ${worstGrad} (relative to each tensor's, or expert block's, largest)`);
    assert.ok(noisy < 0.01 * entries, `${noisy} of ${entries} gradient entries at noise level`);
    assert.ok(
      worstFinal < 2e-3 * ADAM.learning_rate,
      `weights after three AdamW steps differ from PEFT's by ${worstFinal} (learning rate ${ADAM.learning_rate})`,
    );
  });

  test(`${family}: cookbook run sl_basic trains the folder, and its merged and adapter exports score like the engine in transformers`, async (t) => {
    const dir = join(root, "models", family);
    const logPath = join(root, "runs", family);
    await run(process.execPath, [CLI, "run", "sl_basic", `model_name=${dir}`, `log_path=${logPath}`, "max_steps=8", "eval_every=0", "save_every=0"], {
      env,
      maxBuffer: 64 * 1024 * 1024,
    });
    const metrics = readFileSync(join(logPath, "metrics.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, number>);
    const nll = metrics.filter((m) => m.train_mean_nll !== undefined).map((m) => m.train_mean_nll!);
    assert.ok(nll.length >= 8 && nll.at(-1)! < nll[0]! - 1, `train_mean_nll did not fall: ${nll.join(", ")}`);
    const moe = loadModelDir(dir).config.moe;
    if (moe !== undefined) {
      // The load-balancing metrics are logged every step: k when balanced, up to E when not.
      const aux = metrics.filter((m) => m.moe_aux_loss !== undefined).map((m) => m.moe_aux_loss!);
      assert.equal(aux.length, nll.length);
      assert.ok(
        aux.every((a) => a >= moe.topK - 1e-6 && a <= moe.numExperts),
        `moe_aux_loss out of range: ${aux.join(", ")}`,
      );
      assert.ok(metrics.some((m) => (m.moe_expert_load_max ?? 0) >= 1));
    }
    const records = readFileSync(join(logPath, "checkpoints.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { sampler_path?: string; final?: boolean });
    const samplerPath = records.find((r) => r.final === true && r.sampler_path !== undefined)?.sampler_path;
    assert.ok(samplerPath !== undefined, "no final sampler checkpoint");
    const merged = join(root, `${family}-merged`);
    const adapter = join(root, `${family}-adapter`);
    await run(process.execPath, [CLI, "export", samplerPath, "--merged", "--dtype", "fp32", "--out", merged], { env });
    await run(process.execPath, [CLI, "export", samplerPath, "--adapter", "--out", adapter], { env });

    // The engine's own logprobs: the base with the checkpoint's adapter unmerged (the sampler's
    // path; the expert factors are in Tinker's layout there, in PEFT's in the export).
    const { config, weights } = loadModelDir(dir);
    const files = await locateCheckpoint(samplerPath, { env });
    const rank = files.rank!;
    const tensors = new Map([...readSafetensors(join(files.dir, "adapter_model.safetensors"))].map(([n, t]) => [n, t.data as Float32Array]));
    files.dispose();
    if (config.moe !== undefined) {
      assert.ok(
        [...tensors.keys()].some((n) => n.endsWith("mlp.experts.w2.lora_B.weight")),
        "sl_basic trained the experts' factors",
      );
      const exported = JSON.parse(readFileSync(join(adapter, "adapter_config.json"), "utf8")) as { target_parameters?: string[]; target_modules?: string[] };
      // GPT-OSS: PEFT's LoRA of the fused expert tensors; Qwen3-MoE: a pair per expert projection.
      if (config.moe.gptOss !== undefined) assert.deepEqual(exported.target_parameters, ["mlp.experts.gate_up_proj", "mlp.experts.down_proj"]);
      else for (const m of ["gate_proj", "up_proj", "down_proj"]) assert.ok(exported.target_modules?.includes(m), `target_modules lacks ${m}`);
    }
    const inf = inferenceModel(buildInferenceWeights(config, weights, { rank, tensors }), getKernels());
    const rng = lcg(23);
    const sequences = [20, 33].map((n) => Array.from({ length: n }, () => Math.floor(rng() * config.vocabSize)));
    const ours = sequences.map((s) => computePromptLogprobs(inf, Int32Array.from(s)));
    const base = inferenceModel(buildInferenceWeights(config, weights, null), getKernels());
    const untrained = sequences.map((s) => computePromptLogprobs(base, Int32Array.from(s)));

    const py = runPythonJson<{ adapter: (number | null)[][]; merged: Record<string, (number | null)[][]> }>(python, SCORE, {
      sequences,
      adapter,
      merged: [merged],
    });
    const diff = (a: (number | null)[][], b: (number | null)[][]): number =>
      Math.max(...a.flatMap((row, i) => row.map((x, j) => (x === null ? 0 : Math.abs(x - b[i]![j]!)))));
    t.diagnostic(`merged export ${diff(ours, py.merged[merged]!)}, adapter export ${diff(ours, py.adapter)}`);
    assert.ok(diff(ours, py.merged[merged]!) < (MERGED_TOLERANCE[family] ?? 1e-5), `merged export: logprobs differ by ${diff(ours, py.merged[merged]!)}`);
    assert.ok(diff(ours, py.adapter) < 1e-5, `adapter export: logprobs differ by ${diff(ours, py.adapter)}`);
    // Training changed the model, so the comparison is not of the base with itself.
    assert.ok(diff(ours, untrained) > 1e-2, "the trained adapter left the logprobs unchanged");
  });
}
