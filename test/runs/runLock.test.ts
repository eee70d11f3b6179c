import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { deleteRefusal } from "../../src/runs/logDir.ts";
import { readManifest } from "../../src/runs/manifest.ts";
import { LOCK_FILE, RunLockedError, acquireRunLock, currentOwner, liveLockOwner, processStartTicks } from "../../src/runs/runLock.ts";
import { withRun } from "../../src/runs/session.ts";
import { tempDir, waitForExit } from "./helpers.ts";

const base = { recipe: "demo", config: { lr: 1 }, engine: "none", argv: [], commandLine: "cookbook run demo", console: false as const };

function writeLock(dir: string, owner: Record<string, unknown>): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, LOCK_FILE), JSON.stringify(owner));
}

test("a second writer in the same directory is refused with the live pid, whatever the policy", async () => {
  const dir = join(tempDir(), "run");
  await withRun({ ...base, logPath: dir, behavior: "raise" }, async (run) => {
    run.metrics.logMetrics({ loss: 1 }, 0);
    for (const behavior of ["resume", "delete", "ask", "raise"] as const) {
      await assert.rejects(
        withRun({ ...base, logPath: dir, behavior, logDirOptions: { interactive: false } }, async () => {
          assert.fail("the second writer ran");
        }),
        (err: unknown) => err instanceof RunLockedError && err.message.includes(`pid ${process.pid}`),
        behavior,
      );
    }
    assert.equal(readManifest(dir)?.status, "running");
  });
  assert.equal(readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n").length, 1);
  assert.equal(existsSync(join(dir, LOCK_FILE)), false, "the lock is released when the run ends");
});

test("a lock held by another live process refuses resume and delete; once it dies the lock is taken over", async () => {
  const dir = join(tempDir(), "run");
  await withRun({ ...base, logPath: dir, behavior: "raise" }, async () => {});
  const child = spawn("sleep", ["60"], { stdio: "ignore" });
  try {
    const pid = child.pid!;
    writeLock(dir, { pid, host: hostname(), start_ticks: processStartTicks(pid), boot_id: currentOwner().boot_id, acquired_at: "then" });
    assert.equal(liveLockOwner(dir)?.pid, pid);
    await assert.rejects(
      withRun({ ...base, logPath: dir, behavior: "resume" }, async () => {}),
      new RegExp(`in use by a live writer: pid ${pid} `),
    );
    assert.equal(deleteRefusal(dir), `its run is still live (pid ${pid})`);
    child.kill("SIGKILL");
    await waitForExit(child);
    assert.equal(liveLockOwner(dir), undefined);
    let resumed = false;
    await withRun({ ...base, logPath: dir, behavior: "resume" }, async (run) => {
      resumed = run.resumed;
      assert.equal(JSON.parse(readFileSync(join(dir, LOCK_FILE), "utf8")).pid, process.pid);
    });
    assert.equal(resumed, true);
  } finally {
    child.kill("SIGKILL");
  }
});

test("a lock whose pid was reused by another process (different start time) is stale", () => {
  const dir = tempDir();
  const me = currentOwner();
  assert.notEqual(me.start_ticks, null, "this test needs /proc");
  writeLock(dir, { ...me, start_ticks: me.start_ticks! + 1 });
  assert.equal(liveLockOwner(dir), undefined);
  const lock = acquireRunLock(dir);
  assert.equal(lock.owner.start_ticks, me.start_ticks);
  lock.release();
  assert.deepEqual(readdirSync(dir), [], "no lock, no temp or stale files left");
});

test("an unreadable lock file is stale; a lock from a previous boot is stale", () => {
  const dir = tempDir();
  writeFileSync(join(dir, LOCK_FILE), '{"pid":');
  acquireRunLock(dir).release();
  writeLock(dir, { ...currentOwner(), boot_id: "another-boot" });
  assert.equal(liveLockOwner(dir), undefined);
});

test("the lock holder sweeps temp files of writers killed mid-write, not those of live processes", async () => {
  const dir = join(tempDir(), "run");
  await withRun({ ...base, logPath: dir, behavior: "raise" }, async () => {});
  const child = spawn("sleep", ["30"], { stdio: "ignore" });
  const gone = spawn("true", { stdio: "ignore" });
  await waitForExit(gone);
  try {
    const dead = `.run.json.${gone.pid}.0123abcd.tmp`;
    const live = `.metrics.jsonl.${child.pid}.0123abcd.tmp`;
    const stale = `.run.lock.stale.${gone.pid}.89abcdef`;
    for (const f of [dead, live, stale]) writeFileSync(join(dir, f), "");
    await withRun({ ...base, logPath: dir, behavior: "resume" }, async () => {});
    const left = readdirSync(dir);
    assert.ok(!left.includes(dead) && !left.includes(stale), left.join(" "));
    assert.ok(left.includes(live));
  } finally {
    child.kill("SIGKILL");
  }
});

test("a lock file being written (empty, just created) is not taken over at once", () => {
  const dir = tempDir();
  writeFileSync(join(dir, LOCK_FILE), "");
  const started = Date.now();
  const lock = acquireRunLock(dir);
  assert.ok(Date.now() - started >= 1_500, "waited for the writer before judging the lock stale");
  assert.equal(JSON.parse(readFileSync(join(dir, LOCK_FILE), "utf8")).pid, process.pid);
  lock.release();
});
