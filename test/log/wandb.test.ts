// W&B logging through @wandb/sdk, against a fake W&B server on 127.0.0.1 (no network): the run
// name, project, config and every step's scalars arrive; the key is sent only as the server's
// credentials and never written to the run's logs; a server that refuses the run stops W&B
// logging with a message while the run goes on; without a key the run says how to upload later.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { withRun } from "../../src/runs/index.ts";
import { startFakeWandb } from "./fakeWandb.ts";

const KEY = "fake-wandb-key-0123456789";
const base = {
  recipe: "demo",
  config: { learning_rate: 0.001, lora_rank: 8 },
  engine: "none",
  argv: [],
  commandLine: "cookbook run demo",
  console: false as const,
  behavior: "delete" as const,
};

test("with WANDB_API_KEY, each step's scalars reach W&B under wandb_project / wandb_name", async () => {
  const fake = await startFakeWandb();
  const dir = mkdtempSync(join(tmpdir(), "wandb-run-"));
  try {
    const env = { WANDB_API_KEY: KEY, WANDB_BASE_URL: fake.url };
    await withRun({ ...base, logPath: join(dir, "run"), wandbProject: "my-proj", wandbName: "lr-1e-3", env }, async (run) => {
      for (let step = 0; step < 4; step++) run.metrics.logMetrics({ train_mean_nll: 3 - step * 0.5, learning_rate: 0.001, note: "text is not a scalar" }, step);
    });
    const [created] = fake.runs();
    assert.equal(fake.runs().length, 1);
    assert.equal(created!["project"], "my-proj");
    assert.equal(created!["displayName"], "lr-1e-3");
    assert.equal(created!["entity"], "fake-entity", "entity from the viewer query");
    assert.deepEqual(JSON.parse(String(created!["config"])), base.config);
    const rows = fake.history();
    assert.deepEqual(
      rows.map((r) => [r["_step"], r["train_mean_nll"], r["learning_rate"], r["note"]]),
      [0, 1, 2, 3].map((s) => [s, 3 - s * 0.5, 0.001, undefined]),
    );
    assert.deepEqual(fake.completed(), { exitcode: 0 }, "the W&B run is marked finished before withRun returns");
    const credentials = `Basic ${Buffer.from(`api:${KEY}`).toString("base64")}`;
    assert.ok(
      fake.requests.every((r) => r.authorization === credentials),
      "every request carries the key as its credentials",
    );
    const logs = readFileSync(join(dir, "run", "logs.log"), "utf8");
    assert.match(logs, /wandb_project=my-proj: logging each step to W&B at http:\/\/127\.0\.0\.1:\d+ as run "lr-1e-3"/);
    assert.match(logs, /W&B: logging to http:\/\/127\.0\.0\.1:\d+\/fake-entity\/my-proj\/runs\//);
    assert.ok(readdirSync(join(dir, "run")).includes("tensorboard"), "TensorBoard files are written too");
    for (const f of ["logs.log", "config.json", "run.json", "metrics.jsonl"])
      assert.ok(!readFileSync(join(dir, "run", f), "utf8").includes(KEY), `key in ${f}`);
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a W&B server that refuses the run stops W&B logging with a message; the run completes", async () => {
  const fake = await startFakeWandb({ refuseRun: true });
  const dir = mkdtempSync(join(tmpdir(), "wandb-refused-"));
  try {
    const env = { WANDB_API_KEY: KEY, WANDB_BASE_URL: fake.url };
    await withRun({ ...base, logPath: join(dir, "run"), wandbProject: "locked", env }, async (run) => {
      for (let step = 0; step < 3; step++) {
        run.metrics.logMetrics({ loss: 1 / (step + 1) }, step);
        await new Promise((r) => setTimeout(r, 200));
      }
    });
    const logs = readFileSync(join(dir, "run", "logs.log"), "utf8");
    assert.match(logs, /W&B logging stopped: .*metrics\.jsonl and the TensorBoard files still hold every step/);
    assert.match(logs, /run completed/);
    assert.ok(!logs.includes(KEY) && !logs.includes(Buffer.from(`api:${KEY}`).toString("base64")));
    assert.equal(
      readFileSync(join(dir, "run", "metrics.jsonl"), "utf8")
        .trim()
        .split("\n").length,
      3,
    );
    assert.match(readFileSync(join(dir, "run", "run.json"), "utf8"), /"status": "completed"/);
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("wandb_project without a key, and wandb_name without a project, are said, not ignored", async () => {
  const dir = mkdtempSync(join(tmpdir(), "wandb-nokey-"));
  try {
    await withRun({ ...base, logPath: join(dir, "nokey"), wandbProject: "my-proj", env: {} }, async (run) => run.metrics.logMetrics({ loss: 1 }, 0));
    const logs = readFileSync(join(dir, "nokey", "logs.log"), "utf8");
    assert.match(logs, /WANDB_API_KEY is not set, so nothing is sent to W&B/);
    assert.match(logs, /wandb sync --sync-tensorboard --project my-proj .*nokey\/tensorboard/);
    await withRun({ ...base, logPath: join(dir, "noproj"), wandbName: "orphan", env: { WANDB_API_KEY: KEY } }, async (run) =>
      run.metrics.logMetrics({ loss: 1 }, 0),
    );
    assert.match(readFileSync(join(dir, "noproj", "logs.log"), "utf8"), /wandb_name=orphan is ignored: set wandb_project too/);
    assert.ok(!readdirSync(join(dir, "noproj")).includes("tensorboard"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
