import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { installRunControl, signalRun } from "../../src/runs/control.ts";
import { readCheckpoints } from "../../src/runs/checkpoints.ts";
import { readManifest, startManifest } from "../../src/runs/manifest.ts";
import { runState } from "../../src/runs/liveness.ts";
import { readMetrics } from "../../src/log/metrics.ts";
import { REPO, tempDir, waitForExit, waitUntil } from "./helpers.ts";
import { spawn } from "node:child_process";

function startLineFit(logDir: string, extra: string[]) {
  return spawn(
    process.execPath,
    [join(REPO, "bin/cookbook.js"), "run", "example_line_fit", `log_path=${logDir}`, "console_every=100000", "save_every=0", ...extra],
    { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] },
  );
}

function metricsLines(dir: string): number {
  const file = join(dir, "metrics.jsonl");
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").length - 1 : 0;
}

test("installRunControl: SIGUSR1 requests a checkpoint (consumed once), SIGINT requests a stop", async () => {
  const control = installRunControl({ log: () => {} });
  try {
    assert.equal(control.checkpointRequested, false);
    process.kill(process.pid, "SIGUSR1");
    await waitUntil(() => control.checkpointRequested, 5000, "SIGUSR1");
    assert.equal(control.consumeCheckpointRequest(), true);
    assert.equal(control.consumeCheckpointRequest(), false);
    process.kill(process.pid, "SIGINT");
    await waitUntil(() => control.stopRequested, 5000, "SIGINT");
  } finally {
    control.dispose();
  }
  assert.equal(process.listenerCount("SIGUSR1"), 0);
  assert.equal(process.listenerCount("SIGINT"), 0);
});

test("signalRun refuses directories without a live run", () => {
  const dir = tempDir();
  assert.throws(() => signalRun(dir, "stop"), { name: "UsageError", message: `no run.json in ${dir}: not a run started by cookbook` });
  const handle = startManifest(dir, { recipe: "x", argv: [], engine: "none" }, 1000);
  handle.finish("completed");
  assert.throws(() => signalRun(dir, "checkpoint"), { message: `the run in ${dir} is not running (status: completed)` });
});

test("checkpoint-now and stop signals reach a running example recipe; resume continues", async () => {
  const dir = join(tempDir(), "run");
  const child = startLineFit(dir, ["max_steps=100000", "step_delay_ms=5"]);
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  try {
    await waitUntil(() => runState(dir).live && metricsLines(dir) >= 3, 30_000, "run to start");
    assert.equal(signalRun(dir, "checkpoint").signal, "SIGUSR1");
    await waitUntil(() => existsSync(join(dir, "checkpoints.jsonl")), 10_000, "checkpoint record");
    const first = readCheckpoints(dir);
    assert.equal(first.length, 1);
    assert.equal(first[0].final, undefined);
    assert.ok(typeof first[0].state_path === "string" && existsSync(first[0].state_path));
    assert.equal(signalRun(dir, "stop").signal, "SIGINT");
    const exit = await waitForExit(child);
    assert.equal(exit.code, 0, stderr);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
  assert.equal(readManifest(dir)?.status, "stopped");
  const checkpoints = readCheckpoints(dir);
  assert.equal(checkpoints.length, 2, "stop saves a checkpoint");
  const lastStep = readMetrics(dir).at(-1)?.step ?? -1;
  assert.equal(checkpoints[1].batch, lastStep + 1, "stop checkpoint resumes at the next step");
  assert.match(readFileSync(join(dir, "logs.log"), "utf8"), /SIGINT: saving and stopping/);

  const resumed = startLineFit(dir, ["behavior_if_log_dir_exists=resume", `max_steps=${lastStep + 4}`]);
  assert.equal((await waitForExit(resumed)).code, 0);
  const steps = readMetrics(dir).map((m) => m.step);
  assert.deepEqual(steps.slice(-3), [lastStep + 1, lastStep + 2, lastStep + 3]);
  assert.equal(readCheckpoints(dir).at(-1)?.final, true);
  assert.equal(readManifest(dir)?.status, "completed");
});

test("a second SIGINT exits at once and SIGTERM exits, both recording stopped", async () => {
  for (const [signals, code] of [
    [["SIGINT", "SIGINT"], 130],
    [["SIGTERM"], 143],
  ] as const) {
    const dir = join(tempDir(), "run");
    const child = startLineFit(dir, ["max_steps=100", "step_delay_ms=60000"]);
    try {
      await waitUntil(() => runState(dir).live && metricsLines(dir) >= 1, 30_000, "run to start");
      for (const s of signals) {
        process.kill(child.pid ?? 0, s);
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal((await waitForExit(child, 10_000)).code, code);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
    const manifest = readManifest(dir);
    assert.equal(manifest?.status, "stopped");
    assert.equal(manifest?.error, `${signals[0] === "SIGINT" ? "SIGINT" : "SIGTERM"} forced exit`);
  }
});
