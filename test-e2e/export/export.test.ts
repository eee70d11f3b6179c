// End to end: `cookbook export` folders load in Python transformers/peft and score tokens like the
// engine (within 1e-4) — a PEFT adapter through AutoPeftModelForCausalLM (so its base comes from
// base_model_name_or_path), a merged fp32 model sharded with an index, and a merged bf16 model
// compared with the engine running that same bf16 folder. The export also goes through
// `cookbook serve`. Needs the Python 3.11 venv (made on first use).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { readSafetensors } from "../../src/engine/safetensors/index.ts";
import { defaultFixturesDir } from "../../src/engine/resolve.ts";
import { trainTinyChat, type TrainedTinyChat } from "../../test/commands/trainedTinyChat.ts";
import { ensurePythonVenv, runPythonJson } from "../pythonVenv.ts";

const run = promisify(execFile);
const CLI = join(import.meta.dirname, "..", "..", "bin", "cookbook.js");
const SCRIPT = join(import.meta.dirname, "scoreExports.py");
const TOLERANCE = 1e-4;

let root: string;
let store: string;
let python: string;
let trained: TrainedTinyChat;
let env: NodeJS.ProcessEnv;

before(async () => {
  python = ensurePythonVenv();
  root = mkdtempSync(join(tmpdir(), "export-e2e-"));
  store = join(root, "store");
  env = { ...process.env, COOKBOOK_HOME: join(root, "home"), HF_HUB_OFFLINE: "1", TINKER_BASE_URL: "", TINKER_API_KEY: "" };
  trained = await trainTinyChat(store, { steps: 5 });
});

after(async () => {
  await trained?.service.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

async function cookbook(args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [CLI, ...args], { env, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

async function engineLogprobs(source: { modelPath?: string; baseModel?: string }): Promise<(number | null)[][]> {
  const sampler = await trained.service.createSamplingClient(source);
  const out: (number | null)[][] = [];
  for (const tokens of trained.probes) out.push(await sampler.computeLogprobs({ chunks: [{ type: "encoded_text", tokens }] }));
  return out;
}

function maxDiff(a: (number | null)[][], b: (number | null)[][]): number {
  assert.equal(a.length, b.length);
  let m = 0;
  a.forEach((row, i) => {
    assert.equal(row.length, b[i]!.length, `sequence ${i} length`);
    row.forEach((x, j) => {
      if (x === null || b[i]![j] === null) return assert.equal(x, b[i]![j]);
      m = Math.max(m, Math.abs(x - b[i]![j]!));
    });
  });
  return m;
}

interface PythonScores {
  adapter?: (number | null)[][];
  merged: Record<string, (number | null)[][]>;
  info: Record<string, unknown>;
}

test("adapter and merged exports load in transformers/peft and match the engine's logprobs within 1e-4", async () => {
  const adapterDir = join(root, "adapter");
  const merged32 = join(root, "merged-fp32");
  const merged16 = join(root, "merged-bf16");
  await cookbook(["export", trained.samplerPath, "--adapter", "--out", adapterDir, "--store", store]);
  await cookbook(["export", trained.samplerPath, "--merged", "--dtype", "fp32", "--max-shard-size", "300KB", "--out", merged32, "--store", store]);
  const printed = await cookbook(["export", trained.statePath, "--merged", "--out", merged16, "--store", store]);
  assert.match(printed, /lm_head untied/);

  const index = JSON.parse(readFileSync(join(merged32, "model.safetensors.index.json"), "utf8")) as { weight_map: Record<string, string> };
  assert.ok(new Set(Object.values(index.weight_map)).size > 1, "the fp32 export is sharded");
  assert.ok(existsSync(join(merged16, "model.safetensors")), "the bf16 export fits one file");
  assert.equal(readSafetensors(join(merged16, "model.safetensors")).get("lm_head.weight")?.dtype, "BF16");

  const engineCkpt = await engineLogprobs({ modelPath: trained.samplerPath });
  const engineBase = await engineLogprobs({ baseModel: "tiny-chat" });
  const engineBf16 = await engineLogprobs({ baseModel: merged16 });
  assert.ok(maxDiff(engineCkpt, engineBase) > 1e-2, "training moved the logprobs (else the comparison proves nothing)");

  const scores = runPythonJson<PythonScores>(python, SCRIPT, { sequences: trained.probes, adapter: adapterDir, merged: [merged32, merged16] });
  assert.equal(scores.info.adapter_base, join(defaultFixturesDir(), "tiny-chat"), "base_model_name_or_path is the real base model folder");
  const adapterDiff = maxDiff(scores.adapter!, engineCkpt);
  const merged32Diff = maxDiff(scores.merged[merged32]!, engineCkpt);
  const merged16Diff = maxDiff(scores.merged[merged16]!, engineBf16);
  process.stdout.write(
    `# max |logprob diff| vs engine: adapter ${adapterDiff.toExponential(2)}, merged fp32 ${merged32Diff.toExponential(2)}, merged bf16 ${merged16Diff.toExponential(2)}\n`,
  );
  assert.ok(adapterDiff <= TOLERANCE, `adapter: ${adapterDiff}`);
  assert.ok(merged32Diff <= TOLERANCE, `merged fp32: ${merged32Diff}`);
  assert.ok(merged16Diff <= TOLERANCE, `merged bf16: ${merged16Diff}`);
  const info32 = scores.info[merged32] as { tie_word_embeddings: boolean; stored_dtype: string; tokenizer_roundtrip: string };
  assert.equal(info32.tie_word_embeddings, false);
  assert.equal(info32.stored_dtype, "torch.float32");
  assert.equal((scores.info[merged16] as { stored_dtype: string }).stored_dtype, "torch.bfloat16");
  assert.match(info32.tokenizer_roundtrip, /What is 4\+4\?/, "the tokenizer files came along");
});

test("through cookbook serve: export --base-url gives the same adapter as the embedded store", async () => {
  const server: ChildProcess = spawn(process.execPath, [CLI, "serve", "--port", "0", "--store", store], { env, stdio: ["ignore", "pipe", "pipe"] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      let err = "";
      server.stdout!.on("data", (b: Buffer) => {
        out += b.toString();
        const m = /listening on (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      server.stderr!.on("data", (b: Buffer) => (err += b.toString()));
      server.on("exit", (code) => reject(new Error(`cookbook serve exited with ${code}: ${err}`)));
    });
    const viaServer = join(root, "adapter-via-serve");
    const local = join(root, "adapter-local");
    await cookbook(["export", trained.samplerPath, "--adapter", "--base-url", url, "--out", viaServer, "--store", store]);
    await cookbook(["export", trained.samplerPath, "--adapter", "--out", local, "--store", store]);
    assert.deepEqual(readFileSync(join(viaServer, "adapter_model.safetensors")), readFileSync(join(local, "adapter_model.safetensors")));
    const scores = runPythonJson<PythonScores>(python, SCRIPT, { sequences: trained.probes, adapter: viaServer, merged: [] });
    assert.ok(maxDiff(scores.adapter!, await engineLogprobs({ modelPath: trained.samplerPath })) <= TOLERANCE);
  } finally {
    server.kill("SIGTERM");
  }
});
