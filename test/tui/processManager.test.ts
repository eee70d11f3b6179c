import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isPidAlive, readCheckpoints, readManifest } from "../../src/runs/index.ts";
import { freshName, prepareLaunchDir } from "../../src/runs/index.ts";
import { ProcessManager, type ProcessEvent } from "../../src/tui/services/processManager.ts";
import { relaunchArgs } from "../../src/tui/services/runActions.ts";
import { RunTailer } from "../../src/tui/services/runTailer.ts";
import { tempRoot } from "./fixtures.ts";

// A stand-in for `cookbook run`: writes run.json with heartbeats and a metric every 40 ms,
// saves a checkpoint on SIGUSR1, saves and stops on SIGINT (unless told to ignore it).
const FAKE = `
import { appendFileSync, renameSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
const args = Object.fromEntries(process.argv.slice(4).filter((a) => a.includes("=")).map((a) => [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]));
const dir = args.log_path;
const started = new Date().toISOString();
const manifest = (status) => { writeFileSync(join(dir, "run.json.tmp"), JSON.stringify({ recipe: process.argv[3], argv: process.argv.slice(4), pid: process.pid, host: hostname(), started_at: started, engine: "none", status, heartbeat_at: new Date().toISOString() })); renameSync(join(dir, "run.json.tmp"), join(dir, "run.json")); };
manifest("running");
let step = 0;
const ckpt = () => appendFileSync(join(dir, "checkpoints.jsonl"), JSON.stringify({ name: String(step).padStart(6, "0"), batch: step, state_path: "tinker://fake/weights/" + step }) + "\\n");
process.on("SIGUSR1", ckpt);
if (args.ignore_sigint !== "1") process.on("SIGINT", () => { ckpt(); manifest("stopped"); process.exit(0); });
else process.on("SIGINT", () => {});
setInterval(() => { appendFileSync(join(dir, "metrics.jsonl"), JSON.stringify({ step, loss: 1 / (step + 1) }) + "\\n"); step++; manifest("running"); }, 40);
console.log("fake started");
`;

async function until<T>(fn: () => T | undefined | false, what: string, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 30));
  }
}

test("launch detaches the recipe, SIGUSR1 saves a checkpoint, stop sends SIGINT", async () => {
  const root = tempRoot();
  const bin = join(root, "fake-cookbook.mjs");
  writeFileSync(bin, FAKE);
  const pm = new ProcessManager({ termAfterMs: 5000, killAfterMs: 1000 });
  const events: ProcessEvent[] = [];
  pm.on("event", (e) => events.push(e));
  try {
    const res = await pm.launch({ recipe: "fake", args: ["lr=0.1"], logPath: join(root, "run"), ifExists: "new", bin });
    assert.ok(res.pid > 0);
    assert.ok(res.command.includes("behavior_if_log_dir_exists=resume"));
    assert.ok(res.command.includes(`log_path=${res.logDir}`));
    const tailer = new RunTailer(res.logDir);
    await until(() => tailer.poll() && tailer.snapshot.rows.length >= 3 && tailer.snapshot.state.live, "metrics and a live run");
    assert.match(readFileSync(join(res.logDir, "stdout.log"), "utf8"), /fake started/);
    pm.checkpoint(res.logDir);
    await until(() => readCheckpoints(res.logDir).length === 1, "checkpoint after SIGUSR1");
    pm.stop(res.logDir);
    await until(() => readManifest(res.logDir)?.status === "stopped", "stopped status");
    assert.equal(readCheckpoints(res.logDir).length, 2, "SIGINT saved a checkpoint");
    assert.deepEqual(
      events.map((e) => e.message.split(" ")[0]),
      ["launched", "sent", "sent"],
    );
    // A second launch into the same path with "new" picks a fresh name.
    const again = await pm.launch({ recipe: "fake", args: [], logPath: join(root, "run"), ifExists: "new", bin });
    assert.equal(again.logDir, `${join(root, "run")}-2`);
    await until(() => existsSync(join(again.logDir, "run.json")), "second run");
    pm.stop(again.logDir);
    await until(() => readManifest(again.logDir)?.status === "stopped", "second stopped");
  } finally {
    pm.dispose();
  }
});

test("stop escalates to SIGTERM when the run ignores SIGINT", async () => {
  const root = tempRoot();
  const bin = join(root, "fake-cookbook.mjs");
  writeFileSync(bin, FAKE);
  const pm = new ProcessManager({ termAfterMs: 300, killAfterMs: 300 });
  const events: string[] = [];
  pm.on("event", (e) => events.push(e.message));
  try {
    const res = await pm.launch({ recipe: "fake", args: ["ignore_sigint=1"], logPath: join(root, "stubborn"), ifExists: "new", bin });
    await until(() => readManifest(res.logDir)?.status === "running", "running");
    pm.stop(res.logDir);
    await until(() => !isPidAlive(res.pid), "process gone after escalation");
    assert.ok(
      events.some((m) => m.includes("SIGTERM")),
      events.join("; "),
    );
  } finally {
    pm.dispose();
  }
});

test("launch with delete refuses a live run directory; freshName and relaunchArgs", async () => {
  const root = tempRoot();
  assert.equal(freshName(join(root, "none")), join(root, "none"));
  assert.deepEqual(relaunchArgs({ argv: ["a=1", "log_path=/x", "behavior_if_log_dir_exists=ask", "stray", "b=2"] }), ["a=1", "b=2"]);
  const bin = join(root, "fake-cookbook.mjs");
  writeFileSync(bin, FAKE);
  const pm = new ProcessManager();
  try {
    const res = await pm.launch({ recipe: "fake", args: [], logPath: join(root, "live"), ifExists: "new", bin });
    await until(() => readManifest(res.logDir)?.status === "running", "running");
    await assert.rejects(pm.launch({ recipe: "fake", args: [], logPath: res.logDir, ifExists: "delete", bin }), /still live/);
    pm.stop(res.logDir);
    await until(() => readManifest(res.logDir)?.status === "stopped", "stopped");
  } finally {
    pm.dispose();
  }
});

test("an existing log dir: new picks a fresh sibling, resume keeps it, delete empties a finished run", () => {
  const root = tempRoot();
  const fresh = join(root, "never");
  assert.equal(prepareLaunchDir(fresh, "delete"), fresh, "a missing dir is used as is");
  assert.ok(existsSync(fresh), "and created");
  const dir = join(root, "done");
  mkdirSync(dir);
  writeFileSync(join(dir, "metrics.jsonl"), '{"step":0}\n');
  writeFileSync(
    join(dir, "run.json"),
    JSON.stringify({
      recipe: "x",
      argv: [],
      pid: 999_999,
      host: "h",
      started_at: new Date(0).toISOString(),
      engine: "none",
      status: "completed",
      heartbeat_at: new Date(0).toISOString(),
    }),
  );
  assert.equal(prepareLaunchDir(dir, "new"), `${dir}-2`);
  assert.equal(prepareLaunchDir(dir, "resume"), dir);
  assert.ok(existsSync(join(dir, "metrics.jsonl")), "resume keeps the run's files");
  assert.equal(prepareLaunchDir(dir, "delete"), dir);
  assert.deepEqual(readdirSync(dir), [], "delete leaves an empty directory for the new run");
  const notARun = join(root, "notes");
  mkdirSync(notARun);
  writeFileSync(join(notARun, "todo.txt"), "keep me");
  assert.throws(() => prepareLaunchDir(notARun, "delete"), /does not look like a run directory/);
  assert.ok(existsSync(join(notARun, "todo.txt")));
});

// A stand-in for `cookbook batch <file> --root <dir>`: writes <root>/<experiment>/batch.json naming
// its file, and on SIGINT records "stopped".
const FAKE_BATCH = `
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
const [command, file, flag, root] = process.argv.slice(2);
if (command !== "batch" || flag !== "--root") { console.error("usage: batch <file> --root <dir>"); process.exit(2); }
const dir = join(root, "fake");
mkdirSync(dir, { recursive: true });
const state = (phase) => writeFileSync(join(dir, "batch.json"), JSON.stringify({ experiment: "fake", file, pid: process.pid, updated_at: new Date().toISOString(), phase, runs: [] }));
// The handler first: the test signals as soon as it has seen the output below.
process.on("SIGINT", () => { state("stopped"); process.exit(0); });
state("training");
console.log("batch started in " + process.cwd());
setInterval(() => {}, 1000);
`;

test("launchBatch starts cookbook batch <file> detached with its output in <root>/<file>.batch.log; stopBatch sends SIGINT", async () => {
  const root = tempRoot();
  const bin = join(root, "fake-cookbook.mjs");
  writeFileSync(bin, FAKE_BATCH);
  const experiments = join(root, "exps");
  const file = join(root, "grid.ts");
  writeFileSync(file, "export default {};\n");
  const pm = new ProcessManager();
  try {
    await assert.rejects(pm.launchBatch({ file: join(root, "missing.ts"), root: experiments, bin }), /no experiment file at .*missing\.ts/);
    const res = await pm.launchBatch({ file, root: experiments, bin, cwd: root });
    assert.deepEqual(res.command.slice(1), [bin, "batch", file, "--root", experiments]);
    const batchJson = join(experiments, "fake", "batch.json");
    await until(() => existsSync(batchJson), "batch.json written by the launched batch");
    assert.equal(JSON.parse(readFileSync(batchJson, "utf8")).file, file);
    await until(() => readFileSync(res.logFile, "utf8").includes("batch started"), "output in the launch log");
    assert.equal(res.logFile, join(experiments, "grid.ts.batch.log"));
    pm.stopBatch(res.pid, "fake");
    await until(() => JSON.parse(readFileSync(batchJson, "utf8")).phase === "stopped", "SIGINT reached the batch");
    await until(() => !isPidAlive(res.pid), "batch exited");
    assert.throws(() => pm.stopBatch(res.pid, "fake"), /batch fake is not running \(pid \d+ is gone\)/);
  } finally {
    pm.dispose();
  }
});
