// `cookbook eval`, `chat`, `download` and `export` on a checkpoint that sl_basic trained on a live
// SkyRL tx (SKYRL_TX_URL), each checked for what it produced: scores in the eval store, a reply,
// the unpacked archive, a PEFT adapter whose tensors have the trained rank.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readSafetensorsHeader } from "../src/engine/safetensors/index.ts";
import { tempDir } from "../test-e2e/faults/helpers.ts";
import { checkpointsOf, cookbook, ok, servedModel, skipWithoutSkyrl, skyrlUrl, SKYRL_URL, type Row } from "./skyrl.ts";

const root = tempDir("skyrl-commands-");
const env = { COOKBOOK_HOME: join(root, "home"), HF_HUB_OFFLINE: "1" };
const RANK = 8;
let final: Row;

before(async () => {
  if (SKYRL_URL === undefined) return;
  const logDir = join(root, "sl");
  const model = await servedModel();
  ok(
    await cookbook(
      [
        "run",
        "sl_basic",
        `base_url=${skyrlUrl()}`,
        `model_name=${model}`,
        `log_path=${logDir}`,
        "max_steps=4",
        "batch_size=4",
        "save_every=0",
        "eval_every=0",
        "test_size=0",
        `lora_rank=${RANK}`,
        "max_length=128",
      ],
      env,
    ),
    "cookbook run sl_basic",
  );
  final = checkpointsOf(logDir).find((c) => c["final"] === true)!;
  assert.ok(final !== undefined, "sl_basic recorded no final checkpoint");
});

/** Every file under `dir`, relative. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

test("cookbook eval scores the SkyRL checkpoint on arithmetic and stores the result", skipWithoutSkyrl, async () => {
  const store = join(root, "evals");
  const res = ok(
    await cookbook(["eval", String(final["sampler_path"]), "arithmetic", "max_examples=8", `base_url=${skyrlUrl()}`, `store=${store}`], env),
    "cookbook eval",
  );
  assert.match(res.stdout, /arithmetic\s+\S+\s+accuracy\s+\d+(\.\d+)?%\s+8\s+0/);
  const runs = readdirSync(join(store, "runs"));
  assert.equal(runs.length, 1);
  const result = JSON.parse(readFileSync(join(store, "runs", runs[0]!, "arithmetic", "result.json"), "utf8")) as {
    metrics: Record<string, number>;
    model_path: string | null;
  };
  assert.equal(result.metrics["num_examples"], 8);
  assert.equal(result.metrics["errors"], 0);
  assert.ok(result.metrics["accuracy"]! >= 0 && result.metrics["accuracy"]! <= 1);
  assert.equal(result.model_path, final["sampler_path"]);
});

test("cookbook chat answers from the SkyRL checkpoint with piped input", skipWithoutSkyrl, async () => {
  const res = ok(
    await cookbook(
      ["chat", String(final["sampler_path"]), "--base-url", skyrlUrl(), "--temperature", "0", "--max-tokens", "24", "--model-name", await servedModel()],
      env,
      {
        stdin: "Who are you?\n",
      },
    ),
    "cookbook chat",
  );
  const reply = res.stdout.trim();
  assert.ok(reply.length > 0, `no reply; stderr: ${res.stderr}`);
});

test(
  "cookbook download unpacks the SkyRL sampler archive; the training checkpoint, which SkyRL does not archive, is refused saying so",
  skipWithoutSkyrl,
  async () => {
    const out = join(root, "download-sampler");
    ok(await cookbook(["download", String(final["sampler_path"]), "--base-url", skyrlUrl(), "-o", out], env), "cookbook download");
    assert.deepEqual(files(out), ["adapter_config.json", "adapter_model.safetensors"]);
    const config = JSON.parse(readFileSync(join(out, "adapter_config.json"), "utf8")) as { r: number };
    assert.equal(config.r, RANK);
    const state = await cookbook(["download", String(final["state_path"]), "--base-url", skyrlUrl(), "-o", join(root, "download-state")], env);
    assert.equal(state.code, 1);
    assert.match(state.stderr, /archives sampler checkpoints only/);
  },
);

test("cookbook export writes a PEFT adapter of the trained rank from the SkyRL checkpoint", skipWithoutSkyrl, async () => {
  const out = join(root, "adapter");
  ok(await cookbook(["export", String(final["sampler_path"]), "--adapter", "--base-url", skyrlUrl(), "-o", out], env), "cookbook export --adapter");
  const config = JSON.parse(readFileSync(join(out, "adapter_config.json"), "utf8")) as { r: number; peft_type: string };
  assert.equal(config.peft_type, "LORA");
  assert.equal(config.r, RANK);
  assert.ok(existsSync(join(out, "adapter_model.safetensors")));
  const header = readSafetensorsHeader(join(out, "adapter_model.safetensors"));
  const loraA = [...header.entries].filter(([name]) => name.includes("lora_A"));
  assert.ok(loraA.length > 0, "no lora_A tensors");
  for (const [name, t] of loraA) assert.equal(t.shape[0], RANK, name);
});
