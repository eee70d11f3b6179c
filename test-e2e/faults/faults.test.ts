// Fault injection on real `cookbook run sl_basic` processes: a second writer on a live run, a
// SIGKILL leaving torn lines, a disk that fills up (a small tmpfs) under the checkpoint store and
// under the log folder. Each case ends with a resume and an audit of what survived.
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { readCheckpoints } from "../../src/runs/checkpoints.ts";
import { readManifest } from "../../src/runs/manifest.ts";
import { LOCK_FILE } from "../../src/runs/runLock.ts";
import { ProcessManager } from "../../src/tui/services/processManager.ts";
import { auditProblems, auditRun } from "../../scripts/runAudit.ts";
import { SMALL_SL, finished, mountTmpfs, runCookbook, startCookbook, tempDir, waitUntil } from "./helpers.ts";

const lines = (file: string): number =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "").length
    : 0;
const lastCheckpointStep = (logDir: string): number => {
  const last = readCheckpoints(logDir).at(-1);
  return typeof last?.batch === "number" ? last.batch : 0;
};

test("a second writer is refused naming the live pid (CLI resume and delete, TUI launch); torn lines after SIGKILLs are repaired", async () => {
  const root = tempDir();
  const logDir = join(root, "run");
  const env = { COOKBOOK_HOME: join(root, "home") };
  const sl = (max: number, behavior: string): string[] => [
    "run",
    "sl_basic",
    `log_path=${logDir}`,
    ...SMALL_SL,
    `max_steps=${max}`,
    `behavior_if_log_dir_exists=${behavior}`,
  ];
  const first = startCookbook(sl(400, "raise"), env);
  const firstDone = finished(first);
  try {
    await waitUntil(() => lines(join(logDir, "metrics.jsonl")) >= 2, "the first writer's first steps");
    const pid = first.pid!;
    assert.equal(JSON.parse(readFileSync(join(logDir, LOCK_FILE), "utf8")).pid, pid);

    const resume = await runCookbook(sl(400, "resume"), env);
    assert.equal(resume.code, 2, resume.stderr);
    assert.match(resume.stderr, new RegExp(`^error: run directory ${logDir} is in use by a live writer: pid ${pid} `));
    const del = await runCookbook(sl(400, "delete"), env);
    assert.equal(del.code, 2, del.stderr);
    assert.match(del.stderr, new RegExp(`pid ${pid}\\b`));

    const tui = new ProcessManager();
    await assert.rejects(
      tui.launch({ recipe: "sl_basic", args: SMALL_SL, logPath: logDir, ifExists: "resume" }),
      new RegExp(`in use by a live writer: pid ${pid} `),
    );
    await assert.rejects(
      tui.launch({ recipe: "sl_basic", args: SMALL_SL, logPath: logDir, ifExists: "delete" }),
      new RegExp(`in use by a live writer: pid ${pid} `),
    );
    assert.equal(first.exitCode, null, "the first writer kept running");
    assert.equal(readManifest(logDir)?.pid, pid);

    await waitUntil(() => readCheckpoints(logDir).length >= 2, "two checkpoints");
    first.kill("SIGKILL");
    await firstDone;
  } finally {
    first.kill("SIGKILL");
  }
  // A crash mid-append: half a row in both files.
  appendFileSync(join(logDir, "metrics.jsonl"), '{"step":9999,"train_mean_nll":1.');
  appendFileSync(join(logDir, "checkpoints.jsonl"), '{"name":"00099');
  const target = lastCheckpointStep(logDir) + 6;
  const before = readCheckpoints(logDir).length;

  const second = startCookbook(sl(target, "resume"), env);
  const secondDone = finished(second);
  await waitUntil(() => readCheckpoints(logDir).length > before || second.exitCode !== null, "a checkpoint of the resumed run");
  second.kill("SIGKILL");
  await secondDone;
  appendFileSync(join(logDir, "checkpoints.jsonl"), '{"name":"0009');

  const third = await runCookbook(sl(target, "resume"), env);
  assert.equal(third.code, 0, third.stderr);
  const audit = auditRun(logDir, join(root, "home", "checkpoints"));
  assert.deepEqual(auditProblems(audit, { finalRecord: true, lastStep: target - 1 }), []);
  assert.equal(audit.steps.at(-1), target - 1);
  assert.equal(existsSync(join(logDir, LOCK_FILE)), false);
});

test("a full disk under the run and its checkpoints stops with file, step and free space; nothing half-written; resumable", async () => {
  const fs = mountTmpfs("3m");
  try {
    const logDir = join(fs.dir, "run");
    const storeDir = join(fs.dir, "home", "checkpoints");
    const env = { COOKBOOK_HOME: join(fs.dir, "home") };
    const args = ["run", "sl_basic", `log_path=${logDir}`, ...SMALL_SL, "max_steps=60"];
    const full = await runCookbook([...args, "behavior_if_log_dir_exists=raise"], env);
    assert.equal(full.code, 1, full.stderr);
    assert.match(
      full.stderr,
      /^error: no space left on device writing \/\S+ \([^)]*step \d+[^)]*\)+; [\d.]+ \w+ free of 3\.0 MiB on that filesystem\. Files written before this are intact/m,
    );
    assert.doesNotMatch(full.stderr, /^\s+at /m, "no stack trace");
    const audit = auditRun(logDir, storeDir);
    assert.ok(audit.checkpointRecords >= 2, `some checkpoints were written before the disk filled (${audit.checkpointRecords})`);
    assert.deepEqual(auditProblems(audit), [], "no torn line, no half checkpoint, every listed checkpoint loads");
    assert.doesNotThrow(() => readManifest(logDir));

    fs.resize("64m");
    const resumed = await runCookbook([...args, "behavior_if_log_dir_exists=resume"], env);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(auditProblems(auditRun(logDir, storeDir), { finalRecord: true, lastStep: 59 }), []);
    assert.equal(readManifest(logDir)?.status, "completed");
  } finally {
    fs.unmount();
  }
});

test("a full log folder: the error names the file and step, the exit handler prints no stack and leaves no temp file; resumable", async () => {
  const fs = mountTmpfs("40k");
  const root = tempDir();
  try {
    const logDir = join(fs.dir, "run");
    const storeDir = join(root, "checkpoints");
    const env = { COOKBOOK_HOME: root };
    const args = ["run", "sl_basic", `log_path=${logDir}`, ...SMALL_SL, "max_steps=40"];
    const full = await runCookbook([...args, "behavior_if_log_dir_exists=raise"], env);
    assert.equal(full.code, 1, full.stderr);
    assert.match(full.stderr, new RegExp(`^error: no space left on device writing ${logDir}/[\\w.]+ \\([^)]*step \\d+[^)]*\\); `, "m"));
    assert.doesNotMatch(full.stderr, /^\s+at /m, "no stack trace");
    for (const name of readdirSync(logDir)) {
      assert.doesNotMatch(name, /tmp/, `left ${name}`);
      assert.ok(statSync(join(logDir, name)).size > 0, `${name} is empty`);
    }
    assert.deepEqual(auditProblems(auditRun(logDir, storeDir)), []);

    fs.resize("4m");
    const resumed = await runCookbook([...args, "behavior_if_log_dir_exists=resume"], env);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(auditProblems(auditRun(logDir, storeDir), { finalRecord: true, lastStep: 39 }), []);
  } finally {
    fs.unmount();
  }
});
