// THE resume test: sl_basic runs as a child process on the embedded engine, is SIGKILLed some
// steps after a checkpoint, and is resumed. Every batch must be trained exactly once (the killed
// run's steps after its checkpoint are discarded with it), metrics.jsonl must hold each step once,
// and the final weights must equal those of an uninterrupted run with the same seed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { readMetrics } from "../../src/log/metrics.ts";
import { readCheckpoints } from "../../src/runs/checkpoints.ts";
import { createServiceClient } from "../../src/service.ts";
import { tinyConfigJson, writeTinyModel } from "../engine/helpers.ts";
import { idDatum } from "../supervised/fakes.ts";

const REPO = resolve(import.meta.dirname, "../..");
const TOKENIZER_DIR = join(REPO, "fixtures", "models", "tiny-chat");
const STEPS = 24;

function run(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [join(REPO, "bin", "cookbook.js"), "run", "sl_basic", ...args], { cwd: REPO, env, stdio: ["ignore", "ignore", "pipe"] });
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise((r) => child.on("exit", (code, signal) => r({ code, signal, stderr })));
}

/** "submitted step=N" lines of logs.log, split by launch ("command:" starts each one). */
function submittedByLaunch(logDir: string): number[][] {
  const launches: number[][] = [];
  for (const line of readFileSync(join(logDir, "logs.log"), "utf8").split("\n")) {
    if (/\[INFO\] command: /.test(line)) launches.push([]);
    const m = /submitted step=(\d+) /.exec(line);
    if (m) launches[launches.length - 1]!.push(Number(m[1]));
  }
  return launches;
}

const range = (a: number, b: number): number[] => Array.from({ length: b - a }, (_, i) => a + i);

test("sl_basic killed between checkpoints resumes exactly after the last checkpointed batch", { timeout: 240_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), "sl-resume-"));
  try {
    const modelDir = join(root, "model");
    writeTinyModel(modelDir, {
      seed: 3,
      configJson: tinyConfigJson({
        vocab_size: 1024,
        hidden_size: 64,
        intermediate_size: 128,
        num_hidden_layers: 2,
        num_attention_heads: 4,
        num_key_value_heads: 2,
        head_dim: 16,
        max_position_embeddings: 512,
      }),
    });
    for (const f of ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]) copyFileSync(join(TOKENIZER_DIR, f), join(modelDir, f));
    const data = join(root, "chats.jsonl");
    const chats = readFileSync(join(REPO, "fixtures", "data", "chats_train.jsonl"), "utf8")
      .split("\n")
      .slice(0, 4 * STEPS + 10);
    writeFileSync(data, chats.join("\n") + "\n");
    const env = { ...process.env, COOKBOOK_HOME: join(root, "home"), HF_HUB_OFFLINE: "1", FORCE_COLOR: "0" };
    const args = (logDir: string) => [
      `model_name=${modelDir}`,
      `dataset=${data}`,
      `log_path=${logDir}`,
      "test_size=0",
      "batch_size=4",
      `max_steps=${STEPS}`,
      "save_every=5",
      "eval_every=0",
      "lora_rank=4",
      "learning_rate=0.01",
      "behavior_if_log_dir_exists=resume",
    ];

    // 1. Start, and kill -9 once a checkpoint exists and at least one step after it was logged.
    const logDir = join(root, "interrupted");
    const child = run(args(logDir), env);
    const done = exited(child);
    let sentKill = false;
    while (!sentKill) {
      await new Promise((r) => setTimeout(r, 5));
      if (child.exitCode !== null) break;
      const ckpts = existsSync(join(logDir, "checkpoints.jsonl")) ? readCheckpoints(logDir) : [];
      const last = ckpts.at(-1);
      if (last === undefined || last.final) continue;
      const rows = readMetrics(logDir);
      if (rows.some((r) => r.step >= (last.batch as number))) {
        child.kill("SIGKILL");
        sentKill = true;
      }
    }
    const first = await done;
    assert.equal(first.signal, "SIGKILL", `the run should still be going when killed: ${first.stderr}`);
    const resumeAt = readCheckpoints(logDir)
      .filter((r) => !r.final)
      .at(-1)!.batch as number;

    // 2. Resume to the end.
    const second = await exited(run(args(logDir), env));
    assert.equal(second.code, 0, second.stderr);

    // 3. The same run without interruption.
    const refDir = join(root, "uninterrupted");
    const ref = await exited(run(args(refDir), env));
    assert.equal(ref.code, 0, ref.stderr);

    const launches = submittedByLaunch(logDir);
    assert.equal(launches.length, 2);
    const [killed, resumed] = launches as [number[], number[]];
    assert.deepEqual(killed, range(0, killed.length), "the first launch trained from step 0 in order");
    assert.ok(killed.length > resumeAt, "the killed launch had gone past its checkpoint");
    assert.deepEqual(resumed, range(resumeAt, STEPS), "the resumed launch starts at the checkpointed batch");
    // The killed launch's steps after the checkpoint died with it; what remains is each batch once.
    assert.deepEqual([...killed.filter((s) => s < resumeAt), ...resumed], range(0, STEPS));

    const steps = readMetrics(logDir).map((r) => r.step);
    assert.deepEqual(steps, range(0, STEPS), "metrics.jsonl holds every step exactly once");
    assert.deepEqual(
      readMetrics(refDir).map((r) => r.step),
      range(0, STEPS),
    );

    // 4. Final weights: same logprobs as the uninterrupted run, within fp32 tolerance.
    const finalOf = (dir: string) => readCheckpoints(dir).find((r) => r.final)!.state_path!;
    const svc = await createServiceClient({ engine: { storeDir: join(root, "home", "checkpoints") } });
    try {
      const probe = [idDatum(5, 6), idDatum(77, 9), idDatum(400, 4)];
      const logprobs = async (path: string) => {
        const tc = await svc.createTrainingClientFromState(path);
        const out = await (await tc.forward(probe, "cross_entropy")).result();
        return out.loss_fn_outputs.flatMap((o) => o["logprobs"]!.data);
      };
      const a = await logprobs(finalOf(logDir));
      const b = await logprobs(finalOf(refDir));
      const base = await logprobs(readCheckpoints(refDir)[0]!.state_path!);
      const maxDiff = Math.max(...a.map((x, i) => Math.abs(x - b[i]!)));
      assert.ok(maxDiff < 1e-4, `resumed and uninterrupted final weights differ: max |Δlogprob| = ${maxDiff}`);
      // And training did move the weights, so the comparison means something.
      assert.ok(Math.max(...a.map((x, i) => Math.abs(x - base[i]!))) > 1e-3);
    } finally {
      await svc.close();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("real signals: SIGUSR1 checkpoints at the next step, SIGINT saves and stops, run.json says stopped", { timeout: 120_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), "sl-signals-"));
  try {
    const modelDir = join(root, "model");
    writeTinyModel(modelDir, {
      seed: 2,
      configJson: tinyConfigJson({ vocab_size: 1024, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 2, max_position_embeddings: 512 }),
    });
    for (const f of ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]) copyFileSync(join(TOKENIZER_DIR, f), join(modelDir, f));
    const logDir = join(root, "run");
    const env = { ...process.env, COOKBOOK_HOME: join(root, "home"), HF_HUB_OFFLINE: "1" };
    const child = run(
      [
        `model_name=${modelDir}`,
        `log_path=${logDir}`,
        "test_size=0",
        "batch_size=2",
        "max_steps=1000",
        "save_every=0",
        "eval_every=0",
        "lora_rank=4",
        "behavior_if_log_dir_exists=delete",
      ],
      env,
    );
    const done = exited(child);
    const waitFor = async (what: string, ok: () => boolean): Promise<void> => {
      for (let i = 0; i < 6000 && !ok(); i++) {
        if (child.exitCode !== null) throw new Error(`exited early while waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.ok(ok(), `timed out waiting for ${what}`);
    };
    const rows = () => (existsSync(join(logDir, "metrics.jsonl")) ? readMetrics(logDir) : []);
    const ckpts = () => (existsSync(join(logDir, "checkpoints.jsonl")) ? readCheckpoints(logDir) : []);
    await waitFor("the first step", () => rows().length > 0);
    child.kill("SIGUSR1");
    await waitFor("the requested checkpoint", () => ckpts().length > 0);
    const requested = ckpts()[0]!;
    assert.ok(!requested.final && requested.sampler_path !== undefined);
    child.kill("SIGINT");
    const result = await done;
    assert.equal(result.code, 0, result.stderr);
    const records = readCheckpoints(logDir);
    const last = records.at(-1)!;
    assert.equal(records.length, 2);
    assert.ok(!last.final, "a stop is not a final checkpoint");
    const steps = readMetrics(logDir).map((r) => r.step);
    // Every submitted step was finished and logged, and the stop checkpoint resumes right after them.
    assert.deepEqual(steps, range(0, steps.length));
    assert.equal(last.batch, steps.length);
    assert.ok(steps.length < 1000);
    const manifest = JSON.parse(readFileSync(join(logDir, "run.json"), "utf8")) as { status: string };
    assert.equal(manifest.status, "stopped");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
