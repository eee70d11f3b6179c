// SkyRL tx's recorded answers (fixtures/skyrl, captured by test-skyrl/record.ts from a real
// SkyRL tx) replayed to `cookbook run` as it is: CI has no SkyRL, so this is what keeps our client
// compatible with what SkyRL actually sends (null fields, `tinker://<id>/<name>` sampler paths,
// its metric names and future shapes). Each recorded run must finish again from the recorded
// answers alone, log the recorded metrics and record the recorded checkpoints, paths as given.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startFakeServer } from "./fakeServer.ts";
import { readRecording, replayer, type RecordedExchange } from "./recording.ts";

const REPO = resolve(import.meta.dirname, "../../..");
const FIXTURES = join(REPO, "fixtures", "skyrl");
const BIN = join(REPO, "bin", "cookbook.js");

interface RecordedRun {
  recipe: string;
  args: string[];
  served_model: string;
  /** The served model's folder relative to the repository, when it was the shipped fixture. */
  served_model_in_repo?: string;
  metrics: Record<string, unknown>[];
  checkpoints: Record<string, unknown>[];
}

type Row = Record<string, unknown>;
const untimed = (r: Row): Row => Object.fromEntries(Object.entries(r).filter(([k]) => !k.startsWith("time/")));
const readJsonl = (file: string): Row[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Row);

/** Every value under `key` anywhere in the recorded answers. */
function answered(exchanges: RecordedExchange[], path: string, key: string): unknown[] {
  const out: unknown[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === "object" && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        if (k === key) out.push(x);
        walk(x);
      }
    }
  };
  for (const e of exchanges) if (e.path === path) walk(e.response);
  return out;
}

const runs = existsSync(FIXTURES) ? readdirSync(FIXTURES).filter((f) => f.endsWith(".run.json")) : [];

test("the SkyRL recordings are there and hold what this test is about", () => {
  assert.deepEqual(runs.sort(), ["dpo.run.json", "rl_basic.run.json", "sl_basic.run.json"]);
  const sl = readRecording(join(FIXTURES, "sl_basic.jsonl"));
  const rl = readRecording(join(FIXTURES, "rl_basic.jsonl"));
  const all = [...sl, ...rl];
  // SkyRL answers null where the hosted service leaves a field out: a named sampler save has no
  // sampling session, an ephemeral one no path.
  assert.ok(answered(all, "/api/v1/retrieve_future", "sampling_session_id").includes(null), "a null sampling_session_id");
  assert.ok(answered(rl, "/api/v1/retrieve_future", "path").includes(null), "a null path (ephemeral sampler save)");
  // Named sampler saves come back as tinker://<id>/<name>, without the sampler_weights segment.
  const paths = answered(sl, "/api/v1/retrieve_future", "path").filter((p): p is string => typeof p === "string");
  assert.ok(
    paths.some((p) => /^tinker:\/\/[^/]+\/[^/]+$/.test(p)),
    `a two-segment sampler path among ${paths.join(", ")}`,
  );
  // DPO's reference is the base model, never a sampler checkpoint of the model it trains (SkyRL
  // samples those with the current weights), and the recorded run learned.
  const dpo = JSON.parse(readFileSync(join(FIXTURES, "dpo.run.json"), "utf8")) as RecordedRun;
  assert.ok(dpo.checkpoints.every((c) => typeof c["reference_base_model"] === "string" && c["reference_sampler_path"] === undefined));
  const losses = dpo.metrics.map((r) => Number(r["dpo_loss"]));
  assert.ok(Math.abs(losses[0]! - Math.LN2) < 0.05 && losses.at(-1)! < Math.LN2, `dpo_loss ${losses.join(", ")}`);
});

for (const file of runs) {
  const run = JSON.parse(readFileSync(join(FIXTURES, file), "utf8")) as RecordedRun;
  test(`${run.recipe}: our client finishes the run from SkyRL's recorded answers with the recorded metrics and checkpoints`, async () => {
    const recorded = readRecording(join(FIXTURES, `${run.recipe}.jsonl`));
    const model = run.served_model_in_repo !== undefined ? join(REPO, run.served_model_in_repo) : run.served_model;
    const replay = replayer(recorded, (text) => text.split(JSON.stringify(run.served_model).slice(1, -1)).join(JSON.stringify(model).slice(1, -1)));
    const server = await startFakeServer((req) => replay.answer(req), 100_000);
    const root = mkdtempSync(join(tmpdir(), "skyrl-replay-"));
    try {
      const logDir = join(root, run.recipe);
      const args = run.args.map((a) => (a.startsWith("model_name=") ? `model_name=${model}` : a));
      // Not spawnSync: the fake server answers from this process's event loop.
      const child = await new Promise<{ status: number | null; stderr: string }>((done) => {
        const p = spawn(
          process.execPath,
          [BIN, "run", run.recipe, `base_url=${server.url}`, `log_path=${logDir}`, "behavior_if_log_dir_exists=delete", "server_wait_seconds=0", ...args],
          {
            cwd: REPO,
            env: { ...process.env, COOKBOOK_HOME: join(root, "home"), FORCE_COLOR: "0", TINKER_API_KEY: "" },
            stdio: ["ignore", "ignore", "pipe"],
          },
        );
        let stderr = "";
        p.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
        p.once("exit", (status) => done({ status, stderr }));
      });
      assert.equal(
        child.status,
        0,
        `cookbook run ${run.recipe} against the replay failed:\n${child.stderr.slice(-3000)}\nunanswered: ${replay.unanswered.join("\n")}`,
      );
      assert.deepEqual(replay.unanswered, []);
      assert.deepEqual(readJsonl(join(logDir, "metrics.jsonl")).map(untimed), run.metrics.map(untimed));
      // Records that name the served model (DPO's reference_base_model) name it as this checkout does.
      const localModel = (v: unknown): unknown =>
        JSON.parse(JSON.stringify(v).split(JSON.stringify(run.served_model).slice(1, -1)).join(JSON.stringify(model).slice(1, -1)));
      assert.deepEqual(readJsonl(join(logDir, "checkpoints.jsonl")), localModel(run.checkpoints));
      assert.deepEqual(
        replay.unused().map((e) => `${e.method} ${e.path} ${JSON.stringify(e.request)} ${e.status} ${JSON.stringify(e.response).slice(0, 100)}`),
        [],
        `recorded answers nobody asked for (our client's requests changed since the recording?); body mismatches: ${replay.bodyMismatches.join("\n")}`,
      );
    } finally {
      await server.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
}
