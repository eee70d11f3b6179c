// Soak test of crash safety: N random SIGKILLs of a training run (sl_basic, small settings), each
// followed by a resume, then one resume to the end and an audit of what survived: metrics steps
// unique, in order and complete, every listed checkpoint loadable, the final record present, no
// temporary files left. Kills land at random moments: during start-up (lock, resume, truncation)
// or mid-training (appends, checkpoint saves).
//
//   npm run soak -- [--kills 50] [--max-steps 6×kills+40] [--dir /tmp/soak] [--seed 1]
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { auditProblems, auditRun } from "./runAudit.ts";

const REPO = resolve(import.meta.dirname, "..");
const { values } = parseArgs({
  options: {
    kills: { type: "string", default: "50" },
    "max-steps": { type: "string" },
    dir: { type: "string" },
    seed: { type: "string", default: "1" },
  },
});
const kills = Number(values.kills);
// Each mid-run kill lets a few steps through; enough steps that the kills end before the run does.
const maxSteps = Number(values["max-steps"] ?? 6 * kills + 40);
if (!Number.isInteger(kills) || kills < 0) throw new Error(`--kills must be a whole number, got ${values.kills}`);
if (!Number.isInteger(maxSteps) || maxSteps < 4) throw new Error(`--max-steps must be a whole number ≥ 4, got ${values["max-steps"]}`);

// A small deterministic generator, so a soak can be replayed with the same kill moments.
let state = Number(values.seed) >>> 0 || 1;
const random = (): number => {
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  return (state >>> 0) / 2 ** 32;
};

const root = values.dir ?? mkdtempSync(join(tmpdir(), "cookbook-soak-"));
const logDir = join(root, "run");
const home = join(root, "home");
const storeDir = join(home, "checkpoints");
const ARGS = ["batch_size=2", "save_every=2", "eval_every=0", "lora_rank=4", "test_size=0", "max_length=128", `max_steps=${maxSteps}`];

function launch(behavior: string): ChildProcess {
  return spawn(
    process.execPath,
    [join(REPO, "bin", "cookbook.js"), "run", "sl_basic", `log_path=${logDir}`, ...ARGS, `behavior_if_log_dir_exists=${behavior}`],
    {
      cwd: REPO,
      env: { ...process.env, COOKBOOK_HOME: home, FORCE_COLOR: "0" },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise((res) => child.once("exit", (code, signal) => setImmediate(() => res({ code, signal, stderr }))));
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const rows = (): number =>
  existsSync(join(logDir, "metrics.jsonl"))
    ? readFileSync(join(logDir, "metrics.jsonl"), "utf8")
        .split("\n")
        .filter((l) => l.trim()).length
    : 0;
const tornTail = (file: string): boolean => {
  const path = join(logDir, file);
  if (!existsSync(path)) return false;
  const text = readFileSync(path, "utf8");
  return text.length > 0 && !text.endsWith("\n");
};
const storeTemps = (): number => {
  let n = 0;
  if (!existsSync(storeDir)) return 0;
  for (const run of readdirSync(storeDir)) {
    for (const kind of ["weights", "sampler_weights"]) {
      const dir = join(storeDir, run, kind);
      if (existsSync(dir)) n += readdirSync(dir).filter((e) => e.startsWith(".tmp-") || e.startsWith(".old-")).length;
    }
  }
  return n;
};

const started = Date.now();
const tally = { killedAtStartup: 0, killedMidRun: 0, finishedBeforeKill: 0, failed: 0, tornMetrics: 0, tornCheckpoints: 0, storeTempsSeen: 0 };
const failures: string[] = [];
process.stdout.write(`soak: ${kills} SIGKILLs of sl_basic (max_steps=${maxSteps}) in ${root}\n`);
for (let i = 0; i < kills; i++) {
  const before = rows();
  const child = launch(i === 0 ? "raise" : "resume");
  const done = exited(child);
  let finishedEarly = false;
  void done.then(() => (finishedEarly = true));
  const midRun = random() < 0.7;
  if (midRun) {
    // Wait for new progress (steps written since the resume), then a little longer.
    const deadline = Date.now() + 60_000;
    while (!finishedEarly && rows() <= before && Date.now() < deadline) await sleep(50);
    await sleep(random() * 800);
  } else {
    await sleep(random() * 3000);
  }
  child.kill("SIGKILL");
  const result = await done;
  if (result.signal === "SIGKILL") {
    if (midRun) tally.killedMidRun++;
    else tally.killedAtStartup++;
  } else if (result.code === 0) {
    tally.finishedBeforeKill++;
  } else {
    tally.failed++;
    failures.push(`launch ${i + 1}: exit ${result.code}: ${result.stderr.trim().split("\n")[0]}`);
  }
  if (tornTail("metrics.jsonl")) tally.tornMetrics++;
  if (tornTail("checkpoints.jsonl")) tally.tornCheckpoints++;
  tally.storeTempsSeen += storeTemps();
  process.stdout.write(`  kill ${i + 1}/${kills}: ${result.signal ?? `exit ${result.code}`} after ${rows()} rows${midRun ? "" : " (start-up)"}\n`);
  if (result.code === 0) break;
}

const final = await exited(launch("resume"));
const audit = auditRun(logDir, storeDir);
const problems = auditProblems(audit, { finalRecord: true, lastStep: maxSteps - 1 });
if (final.code !== 0) problems.unshift(`final resume exited ${final.code}: ${final.stderr.trim().split("\n")[0]}`);
problems.push(...failures);
const [l1, l5, l15] = loadavg().map((l) => l.toFixed(2));
process.stdout.write(
  [
    "",
    `kills: ${tally.killedMidRun + tally.killedAtStartup} of ${kills} asked: ${tally.killedMidRun} mid-run, ${tally.killedAtStartup} during start-up; ${tally.finishedBeforeKill} finished before the kill; ${tally.failed} failed on their own`,
    `left by the kills and repaired/swept on resume: ${tally.tornMetrics} torn metrics tails, ${tally.tornCheckpoints} torn checkpoint records, ${tally.storeTempsSeen} temporary checkpoint folders`,
    `metrics.jsonl: ${audit.metricsRows} rows, steps ${audit.steps[0] ?? "-"}..${audit.steps.at(-1) ?? "-"}, ${audit.duplicateSteps.length} duplicated, ${audit.outOfOrder} out of order`,
    `checkpoints.jsonl: ${audit.checkpointRecords} records, ${audit.loaded} checkpoints loaded, ${audit.unloadable.length} unloadable, final record ${audit.finalRecord ? "present" : "MISSING"}`,
    `leftover temporary files: ${audit.leftovers.length}`,
    `wall time ${((Date.now() - started) / 1000).toFixed(0)} s; load average ${l1}, ${l5}, ${l15}`,
    problems.length === 0 ? "survived: everything" : `PROBLEMS (${problems.length}):\n${problems.map((p) => `  - ${p}`).join("\n")}`,
    "",
  ].join("\n"),
);
process.exitCode = problems.length === 0 ? 0 : 1;
