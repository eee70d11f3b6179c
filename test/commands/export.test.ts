// `cookbook export` on the engine side: what the adapter and merged folders hold, that the engine
// scores a merged folder like the checkpoint it came from, full fine-tunes, sharding, bf16, the
// archive reader, the path through a Tinker server, and the errors a user meets. (Loading the
// folders in Python transformers/peft is test-e2e/export.)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runExport, ExportOptionsSchema } from "../../src/commands/export.ts";
import { exportCheckpoint, parseByteSize, readTarFiles } from "../../src/export/index.ts";
import { CheckpointStore, createEmbeddedServiceClient } from "../../src/engine/index.ts";
import { defaultFixturesDir } from "../../src/engine/resolve.ts";
import { float32ToBf16, readSafetensors, readSafetensorsHeader } from "../../src/engine/safetensors/index.ts";
import { startServer } from "../../src/server/server.ts";
import { trainTinyChat, type TrainedTinyChat } from "./trainedTinyChat.ts";

const root = mkdtempSync(join(tmpdir(), "export-test-"));
const store = join(root, "store");
let trained: TrainedTinyChat;
const TINY = join(defaultFixturesDir(), "tiny-chat");

before(async () => {
  trained = await trainTinyChat(store, { steps: 3 });
});
after(async () => {
  await trained?.service.close();
  rmSync(root, { recursive: true, force: true });
});

const base = { dtype: "fp32" as const, maxShardBytes: 5e9, storeDir: store, env: { ...process.env, TINKER_BASE_URL: "", TINKER_API_KEY: "" } };
const out = (name: string): string => join(root, name);

async function logprobs(source: { modelPath?: string; baseModel?: string }): Promise<number[]> {
  const sampler = await trained.service.createSamplingClient(source);
  const all: number[] = [];
  for (const tokens of trained.probes) all.push(...((await sampler.computeLogprobs({ chunks: [{ type: "encoded_text", tokens }] })).slice(1) as number[]));
  return all;
}
const maxDiff = (a: number[], b: number[]): number => Math.max(...a.map((x, i) => Math.abs(x - b[i]!)));

test("--adapter: the stored LoRA tensors, a PEFT config naming the real base model folder, the tokenizer", async () => {
  const r = await exportCheckpoint(trained.samplerPath, { ...base, mode: "adapter", outDir: out("adapter") });
  assert.deepEqual(readdirSync(out("adapter")).sort(), [
    "adapter_config.json",
    "adapter_model.safetensors",
    "generation_config.json",
    "special_tokens_map.json",
    "tokenizer.json",
    "tokenizer_config.json",
  ]);
  const config = JSON.parse(readFileSync(join(out("adapter"), "adapter_config.json"), "utf8")) as Record<string, unknown>;
  assert.equal(config.base_model_name_or_path, TINY, "a fixture base is written as its folder, which transformers can load");
  assert.equal(r.baseModelNameOrPath, TINY);
  assert.equal(config.peft_type, "LORA");
  assert.equal(config.r, 4);
  assert.equal(config.lora_alpha, 32);
  assert.deepEqual(config.target_modules, ["down_proj", "gate_proj", "k_proj", "lm_head", "o_proj", "q_proj", "up_proj", "v_proj"]);
  const stored = readSafetensors(join(new CheckpointStore(store).locate(trained.samplerPath).dir, "adapter_model.safetensors"));
  const exported = readSafetensors(join(out("adapter"), "adapter_model.safetensors"));
  assert.deepEqual([...exported.keys()].sort(), [...stored.keys()].sort());
  for (const [name, t] of stored) assert.deepEqual(exported.get(name)!.data, t.data, name);
  assert.ok([...exported.keys()].every((n) => /^base_model\.model\..+\.lora_[AB]\.weight$/.test(n)));
});

test("--base-model-name overrides base_model_name_or_path (e.g. the hub id to publish under)", async () => {
  await exportCheckpoint(trained.samplerPath, { ...base, mode: "adapter", outDir: out("adapter-named"), baseModelName: "org/tiny-chat" });
  const config = JSON.parse(readFileSync(join(out("adapter-named"), "adapter_config.json"), "utf8")) as Record<string, unknown>;
  assert.equal(config.base_model_name_or_path, "org/tiny-chat");
});

test("--adapter when the base weights are not here: only the tokenizer is needed, and the user is told", async () => {
  const tokenizerOnly = join(root, "tokenizer-only");
  mkdirSync(tokenizerOnly);
  for (const f of ["tokenizer.json", "tokenizer_config.json"]) copyFileSync(join(TINY, f), join(tokenizerOnly, f));
  const from = new CheckpointStore(store).locate(trained.samplerPath).dir;
  const dir = join(store, "copied-run", "sampler_weights", "tok-only");
  cpSync(from, dir, { recursive: true });
  const meta = JSON.parse(readFileSync(join(dir, "checkpoint.json"), "utf8")) as Record<string, unknown>;
  writeFileSync(
    join(dir, "checkpoint.json"),
    JSON.stringify({ ...meta, base_model: tokenizerOnly, base_model_dir: undefined, tinker_path: "tinker://copied-run/sampler_weights/tok-only" }),
  );
  const notes: string[] = [];
  const r = await exportCheckpoint("tinker://copied-run/sampler_weights/tok-only", {
    ...base,
    mode: "adapter",
    outDir: out("adapter-tok-only"),
    log: (l) => notes.push(l),
  });
  assert.equal(r.baseModelNameOrPath, tokenizerOnly);
  assert.match(notes.join("\n"), /weights of .*tokenizer-only are not on this machine, so the adapter was not checked/);
  assert.ok(readdirSync(out("adapter-tok-only")).includes("tokenizer.json"));
  await assert.rejects(
    exportCheckpoint("tinker://copied-run/sampler_weights/tok-only", { ...base, mode: "merged", outDir: out("merged-tok-only") }),
    /not found|has no config\.json/,
  );
});

test("--merged fp32: sharded with an index, head untied, and the engine scores it like the checkpoint", async () => {
  const r = await exportCheckpoint(trained.samplerPath, { ...base, mode: "merged", outDir: out("merged32"), maxShardBytes: parseByteSize("300KB") });
  assert.equal(r.untiedHead, true);
  const index = JSON.parse(readFileSync(join(out("merged32"), "model.safetensors.index.json"), "utf8")) as {
    metadata: { total_size: number };
    weight_map: Record<string, string>;
  };
  const shards = [...new Set(Object.values(index.weight_map))].sort();
  assert.ok(shards.length >= 3, `${shards.length} shards`);
  assert.equal(shards[0], `model-00001-of-${String(shards.length).padStart(5, "0")}.safetensors`);
  for (const s of shards)
    assert.ok(
      readSafetensorsHeader(join(out("merged32"), s)).fileSize <= 300_000 + 40_000 || readSafetensorsHeader(join(out("merged32"), s)).entries.size === 1,
      s,
    );
  assert.ok("lm_head.weight" in index.weight_map);
  const config = JSON.parse(readFileSync(join(out("merged32"), "config.json"), "utf8")) as Record<string, unknown>;
  assert.equal(config.tie_word_embeddings, false);
  assert.equal(config.torch_dtype, "float32");
  const fromCheckpoint = await logprobs({ modelPath: trained.samplerPath });
  const fromMerged = await logprobs({ baseModel: out("merged32") });
  const fromBase = await logprobs({ baseModel: "tiny-chat" });
  assert.ok(maxDiff(fromCheckpoint, fromBase) > 1e-2, "the adapter changed the model");
  // The sampler applies the adapter unmerged (x·Wᵀ + s·(x·Aᵀ)·Bᵀ), the export merges it: fp32 rounding apart.
  assert.ok(maxDiff(fromCheckpoint, fromMerged) < 1e-4, `merged vs checkpoint: ${maxDiff(fromCheckpoint, fromMerged)}`);
  // The embedding stays the base model's.
  const embed = readSafetensors(join(out("merged32"), index.weight_map["model.embed_tokens.weight"]!)).get("model.embed_tokens.weight")!.data;
  assert.deepEqual(embed, readSafetensors(join(TINY, "model.safetensors")).get("model.embed_tokens.weight")!.data);
});

test("--merged bf16 (the default for merged): one file of BF16 tensors, the bf16 rounding of the fp32 merge", async () => {
  await runExport(trained.samplerPath, ExportOptionsSchema.parse({ mode: "merged", out: out("merged16"), store }), () => undefined);
  const config = JSON.parse(readFileSync(join(out("merged16"), "config.json"), "utf8")) as Record<string, unknown>;
  assert.equal(config.torch_dtype, "bfloat16");
  const header = readSafetensorsHeader(join(out("merged16"), "model.safetensors"));
  assert.ok([...header.entries.values()].every((e) => e.dtype === "BF16"));
  await exportCheckpoint(trained.samplerPath, { ...base, mode: "merged", outDir: out("merged32-single") });
  const q16 = readSafetensors(join(out("merged16"), "model.safetensors")).get("model.layers.0.self_attn.q_proj.weight")!.data as Float32Array;
  const q32 = readSafetensors(join(out("merged32-single"), "model.safetensors")).get("model.layers.0.self_attn.q_proj.weight")!.data as Float32Array;
  assert.deepEqual(Array.from(float32ToBf16(q32)), Array.from(float32ToBf16(q16)));
});

test("a full fine-tune exports with --merged only", async () => {
  const svc = createEmbeddedServiceClient({ storeDir: store });
  try {
    const tc = await svc.createFullTrainingClient("tiny-chat");
    const path = (await (await tc.saveWeightsForSampler("full")).result()).path;
    await assert.rejects(exportCheckpoint(path, { ...base, mode: "adapter", outDir: out("full-adapter") }), /is a full fine-tune .* export it with --merged/);
    await exportCheckpoint(path, { ...base, mode: "merged", outDir: out("full-merged") });
    const weights = readSafetensors(join(out("full-merged"), "model.safetensors"));
    assert.deepEqual(weights.get("model.norm.weight")!.data, readSafetensors(join(TINY, "model.safetensors")).get("model.norm.weight")!.data);
    assert.ok(readdirSync(out("full-merged")).includes("tokenizer.json"));
  } finally {
    await svc.close();
  }
});

test("errors: a non-empty output folder is left alone, unknown checkpoints and bad sizes are named", async () => {
  mkdirSync(out("busy"));
  writeFileSync(join(out("busy"), "keep.txt"), "mine");
  await assert.rejects(exportCheckpoint(trained.samplerPath, { ...base, mode: "adapter", outDir: out("busy") }), /busy exists and is not empty/);
  assert.deepEqual(readdirSync(out("busy")), ["keep.txt"]);
  assert.ok(!readdirSync(root).some((f) => f.includes(".partial-")), "no partial folder left behind");
  const missing = trained.samplerPath.replace("export-test", "nope");
  await assert.rejects(exportCheckpoint(missing, { ...base, mode: "adapter", outDir: out("x") }), /checkpoint tinker:\/\/.*nope not found/);
  await assert.rejects(exportCheckpoint("tinker://run/other/x", { ...base, mode: "adapter", outDir: out("x") }), /bad tinker path/);
  assert.throws(() => parseByteSize("5 parsecs"), /shard size "5 parsecs" is not a size/);
  assert.equal(parseByteSize("5GB"), 5e9);
  assert.equal(parseByteSize("2GiB"), 2 * 2 ** 30);
});

test("tar archives: ustar and pax long names read, nested or escaping entries refused", () => {
  const dir = join(root, "tar");
  mkdirSync(join(dir, "files"), { recursive: true });
  const long = `${"n".repeat(120)}.json`;
  writeFileSync(join(dir, "files", "adapter_config.json"), '{"r": 4}');
  writeFileSync(join(dir, "files", long), "x".repeat(1000));
  execFileSync("tar", ["--format=pax", "-cf", join(dir, "a.tar"), "-C", join(dir, "files"), "adapter_config.json", long]);
  const files = readTarFiles(readFileSync(join(dir, "a.tar")));
  assert.equal(files.get("adapter_config.json")!.toString(), '{"r": 4}');
  assert.equal(files.get(long)!.length, 1000);
  execFileSync("tar", ["-czf", join(dir, "b.tgz"), "-C", dir, "files"]);
  assert.throws(() => readTarFiles(readFileSync(join(dir, "b.tgz"))), /entry "files\/.*" is not a file at the archive's root/);
  const truncated = readFileSync(join(dir, "a.tar")).subarray(0, 2048);
  assert.throws(() => readTarFiles(truncated), /claims 1000 bytes but the archive ends first|truncated/);
});

test("through a Tinker server (cookbook serve): the same adapter as from the store", async () => {
  const lines: string[] = [];
  const server = await startServer({ port: 0, storeDir: store }, { log: () => undefined });
  try {
    await exportCheckpoint(trained.samplerPath, { ...base, mode: "adapter", outDir: out("remote"), baseUrl: server.url, log: (l) => lines.push(l) });
    assert.deepEqual(readFileSync(join(out("remote"), "adapter_model.safetensors")), readFileSync(join(out("adapter"), "adapter_model.safetensors")));
    const missing = trained.samplerPath.replace("export-test", "nope");
    await assert.rejects(exportCheckpoint(missing, { ...base, mode: "adapter", outDir: out("y"), baseUrl: server.url }), /nope/);
  } finally {
    await server.close();
  }
});

test("the cookbook command: usage errors exit 2 before anything is read, a result lists what was written", () => {
  const bin = join(import.meta.dirname, "..", "..", "bin", "cookbook.js");
  const env = { ...process.env, TINKER_BASE_URL: "", TINKER_API_KEY: "" };
  const cli = (args: string[]) => spawnSync(process.execPath, [bin, "export", ...args], { encoding: "utf8", env });
  const neither = cli([trained.samplerPath, "--store", store]);
  assert.equal(neither.status, 2);
  assert.match(neither.stderr, /pass exactly one of --adapter and --merged/);
  const badSize = cli([trained.samplerPath, "--merged", "--max-shard-size", "5XB", "--store", store]);
  assert.equal(badSize.status, 2);
  assert.match(badSize.stderr, /--max-shard-size "5XB": not a size/);
  const ok = cli([trained.samplerPath, "--adapter", "--out", out("cli-adapter"), "--store", store]);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(
    ok.stdout,
    /exported tinker:\/\/.* as a PEFT adapter to .*cli-adapter\n {2}base model: .*tiny-chat\n {2}files: adapter_model\.safetensors, adapter_config\.json, tokenizer\.json/,
  );
});
