import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { readManifest, startManifest, writeManifest } from "../../src/runs/manifest.ts";
import { isPidAlive, runState } from "../../src/runs/liveness.ts";
import { REPO, spawnTs, tempDir, waitForExit, waitForOutput } from "./helpers.ts";

const CHILD = join(REPO, "test/runs/fixtures/manifestChild.ts");

test("startManifest writes run.json, refreshes the heartbeat, and finish records the status", async () => {
  const dir = tempDir();
  const handle = startManifest(dir, { recipe: "demo", argv: ["a=1"], command: "cookbook run demo a=1", engine: "embedded" }, 30);
  const first = readManifest(dir);
  assert.ok(first);
  assert.equal(first.recipe, "demo");
  assert.deepEqual(first.argv, ["a=1"]);
  assert.equal(first.pid, process.pid);
  assert.equal(first.host, hostname());
  assert.equal(first.engine, "embedded");
  assert.equal(first.status, "running");
  await new Promise((r) => setTimeout(r, 120));
  const later = readManifest(dir);
  assert.ok(later && Date.parse(later.heartbeat_at) > Date.parse(first.heartbeat_at), "heartbeat advanced");
  assert.equal(runState(dir).status, "running");
  assert.equal(runState(dir).live, true);
  handle.finish("failed", "boom");
  handle.finish("completed");
  const done = readManifest(dir);
  assert.equal(done?.status, "failed", "first finish wins");
  assert.equal(done?.error, "boom");
  assert.ok(done?.ended_at);
  assert.equal(runState(dir).live, false);
});

test("readManifest names the file when run.json is invalid", () => {
  const dir = tempDir();
  writeFileSync(join(dir, "run.json"), "{not json");
  assert.throws(() => readManifest(dir), { message: new RegExp(`^${join(dir, "run.json")}: not valid JSON`) });
  writeFileSync(join(dir, "run.json"), '{"recipe":"x"}');
  assert.throws(() => readManifest(dir), { message: /run\.json: invalid run manifest at argv/ });
  assert.equal(readManifest(tempDir()), undefined);
});

test("a live child process is detected, and shows as crashed once killed", async () => {
  const dir = tempDir();
  const child = spawnTs(CHILD, [dir]);
  try {
    await waitForOutput(child, /ready/);
    const state = runState(dir);
    assert.equal(state.status, "running");
    assert.equal(state.live, true);
    assert.equal(state.manifest?.pid, child.pid);
    assert.ok(child.pid !== undefined && isPidAlive(child.pid));
  } finally {
    child.kill("SIGKILL");
    await waitForExit(child);
  }
  const after = runState(dir);
  assert.equal(after.status, "crashed");
  assert.equal(after.live, false);
});

test("a child that finishes records completed; one that exits early records failed", async () => {
  const done = tempDir();
  const a = spawnTs(CHILD, [done, "finish"]);
  assert.equal((await waitForExit(a)).code, 0);
  assert.equal(runState(done).status, "completed");
  const early = tempDir();
  const b = spawnTs(CHILD, [early, "exit"]);
  assert.equal((await waitForExit(b)).code, 3);
  assert.equal(readManifest(early)?.status, "failed");
  assert.match(readManifest(early)?.error ?? "", /process exited \(code 3\)/);
});

test("a stale heartbeat is not live even if the pid exists", () => {
  const dir = tempDir();
  const old = new Date(Date.now() - 60_000).toISOString();
  writeManifest(dir, {
    recipe: "x",
    argv: [],
    pid: process.pid,
    host: hostname(),
    started_at: old,
    engine: "none",
    status: "running",
    heartbeat_at: old,
  });
  assert.deepEqual([runState(dir).status, runState(dir).live], ["stale", false]);
});

test("a zombie (killed, not yet reaped by its parent) is not alive", async () => {
  // The shell's background child is left to `sleep 3` after the exec, which never reaps it.
  const parent = spawn("sh", ["-c", "sleep 0.01 & echo $!; exec sleep 3"], { stdio: ["ignore", "pipe", "ignore"] });
  try {
    const pid = Number((await once(parent.stdout!, "data"))[0].toString().trim());
    let state = "";
    for (let i = 0; i < 200 && state !== "Z"; i++) {
      await new Promise((r) => setTimeout(r, 10));
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    }
    assert.equal(state, "Z", "the child became a zombie");
    assert.equal(isPidAlive(pid), false);
    assert.equal(isPidAlive(parent.pid!), true);
  } finally {
    parent.kill("SIGKILL");
  }
});
