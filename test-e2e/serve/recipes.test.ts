// End to end: recipes run unchanged against `cookbook serve` started in another process, and an
// SL run's metrics equal the embedded run's with the same seed. Spawns the CLI several times, so
// it lives here rather than in test/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { serveEnv, startServe, type ServeProcess } from "./server.ts";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { tinyConfigJson, writeTinyModel } from "../../test/engine/helpers.ts";

const CLI = join(import.meta.dirname, "..", "..", "bin", "cookbook.js");
const TOKENIZER_DIR = join(import.meta.dirname, "..", "..", "fixtures", "models", "tiny-chat");
const TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"];

let root: string;
let modelDir: string;
let env: NodeJS.ProcessEnv;
let serve: ServeProcess;
let url: string;

before(async () => {
  for (const f of TOKENIZER_FILES) {
    if (!existsSync(join(TOKENIZER_DIR, f)))
      throw new Error(`missing ${join(TOKENIZER_DIR, f)}: the tiny-chat tokenizer fixture is needed to build the test model`);
  }
  root = mkdtempSync(join(tmpdir(), "serve-e2e-"));
  // A small random model with the tiny-chat tokenizer: fast, and independent of trained fixtures.
  modelDir = join(root, "model");
  const vocab = Object.keys((JSON.parse(readFileSync(join(TOKENIZER_DIR, "tokenizer.json"), "utf8")) as { model: { vocab: object } }).model.vocab).length;
  writeTinyModel(modelDir, { seed: 5, configJson: tinyConfigJson({ vocab_size: vocab, max_position_embeddings: 512 }) });
  for (const f of TOKENIZER_FILES) copyFileSync(join(TOKENIZER_DIR, f), join(modelDir, f));
  env = serveEnv({ COOKBOOK_HOME: join(root, "home"), HF_HUB_OFFLINE: "1", COOKBOOK_LOG_ROOT: join(root, "logs") });
  serve = await startServe(join(root, "served-store"), env);
  url = serve.url;
});

after(async () => {
  await serve.stop();
  rmSync(root, { recursive: true, force: true });
});

type Row = Record<string, number | string>;

function readMetrics(logPath: string): Row[] {
  return readFileSync(join(logPath, "metrics.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim().length > 0)
    .map((l) => JSON.parse(l) as Row);
}

async function runRecipe(recipe: string, logName: string, args: string[]): Promise<Row[]> {
  const logPath = join(root, logName);
  try {
    await execa(process.execPath, [CLI, "run", recipe, ...args, `log_path=${logPath}`, "behavior_if_log_dir_exists=delete"], {
      env,
      extendEnv: false,
      timeout: 240_000,
    });
  } catch (err) {
    // execa's message already carries the command, exit code and the child's stderr.
    throw new Error(`cookbook run ${recipe} (${logName}) failed: ${(err as Error).message}\nserver stderr: ${serve.stderr()}`);
  }
  return readMetrics(logPath);
}

const isTiming = (k: string): boolean => k.startsWith("time/");

test("sl_basic against cookbook serve has the embedded run's metrics, step for step", async () => {
  const args = [`model_name=${modelDir}`, "max_steps=3", "batch_size=4", "test_size=8", "eval_every=2", "save_every=2", "lora_rank=4", "seed=1"];
  const served = await runRecipe("sl_basic", "sl-served", [...args, `base_url=${url}`]);
  const local = await runRecipe("sl_basic", "sl-embedded", args);
  assert.ok(served.length >= 3, `expected at least 3 metric rows, got ${served.length}`);
  assert.equal(served.length, local.length);
  served.forEach((row, i) => {
    const other = local[i]!;
    const keys = Object.keys(row)
      .filter((k) => !isTiming(k))
      .sort();
    assert.deepEqual(
      keys,
      Object.keys(other)
        .filter((k) => !isTiming(k))
        .sort(),
      `row ${i} keys`,
    );
    for (const k of keys) {
      const a = row[k]!;
      const b = other[k]!;
      if (typeof a === "number" && typeof b === "number") {
        assert.ok(Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a), Math.abs(b)), `row ${i} ${k}: served ${a} vs embedded ${b}`);
      } else assert.equal(a, b, `row ${i} ${k}`);
    }
  });
  assert.ok(
    served.some((r) => typeof r["test/nll"] === "number"),
    "the served run evaluated test/nll",
  );
});

test("rl_basic runs against cookbook serve: sampling, training and checkpoints over HTTP", async () => {
  // The recipe's sampling is not seeded, so two runs (embedded or served) sample different tokens;
  // what must hold is that the sampler's logprobs agree with the trainer's (KL ≈ 0) through the server.
  const rows = await runRecipe("rl_basic", "rl-served", [
    `model_name=${modelDir}`,
    "max_steps=2",
    "group_size=4",
    "groups_per_batch=2",
    "lora_rank=4",
    "seed=1",
    "save_every=1",
    `base_url=${url}`,
  ]);
  assert.equal(rows.length, 2);
  for (const row of rows) {
    for (const k of ["optim/entropy", "optim/kl_sample_train_v1", "env/all/reward/total"])
      assert.equal(typeof row[k], "number", `${k} in ${JSON.stringify(row)}`);
    assert.ok(Math.abs(row["optim/kl_sample_train_v1"] as number) < 1e-4, `sampler and trainer disagree: KL ${row["optim/kl_sample_train_v1"]}`);
  }
  const checkpoints = readFileSync(join(root, "rl-served", "checkpoints.jsonl"), "utf8")
    .trim()
    .split("\n");
  assert.ok(checkpoints.length >= 1);
  assert.match(checkpoints[0]!, /tinker:\/\/local-[0-9a-f]+\//);
});

test("cookbook serve refuses a non-loopback address without an API key (usage error, exit 2)", async () => {
  const r = await execa(process.execPath, [CLI, "serve", "--host", "0.0.0.0", "--port", "0"], { env, extendEnv: false, reject: false });
  assert.equal(r.exitCode, 2);
  assert.match(r.stderr, /--api-key/);
});
