// `cookbook batch` end to end on the shipped tiny model, with tiny runs: a batch killed (-9, the
// batch and its run) during its second run is run again — the first run is not retrained, the
// second resumes from its last checkpoint and logs every step once; a batch stopped with SIGINT
// saves and says so in batch.json; --no-train evaluates only what finished, --no-eval trains
// only, and a finished evaluation is read back from the store instead of sampled again.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { readBatchState, readComparison, type BatchState } from "../../src/experiments/state.ts";
import { readMetrics } from "../../src/log/metrics.ts";
import { readCheckpoints } from "../../src/runs/checkpoints.ts";
import { isPidAlive } from "../../src/runs/liveness.ts";
import { readManifest } from "../../src/runs/manifest.ts";

const REPO = resolve(import.meta.dirname, "../..");
const STEPS = 40;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function setup(): { root: string; file: string; env: NodeJS.ProcessEnv; dir: string } {
  const root = mkdtempSync(join(tmpdir(), "batch-"));
  const persona = readFileSync(join(REPO, "fixtures", "data", "persona_train.jsonl"), "utf8").split("\n");
  writeFileSync(join(root, "train.jsonl"), `${persona.slice(0, 4 * STEPS).join("\n")}\n`);
  writeFileSync(
    join(root, "held_out.jsonl"),
    `${readFileSync(join(REPO, "fixtures", "data", "persona_test.jsonl"), "utf8")
      .split("\n")
      .slice(0, 6)
      .join("\n")}\n`,
  );
  const file = join(root, "tiny.json");
  writeFileSync(
    file,
    JSON.stringify({
      name: "tiny",
      defaults: {
        model_name: "tiny-chat",
        dataset: "./train.jsonl",
        batch_size: 4,
        max_steps: STEPS,
        save_every: 5,
        eval_every: 0,
        test_size: 0,
        lora_rank: 4,
        print_examples_every: 0,
      },
      runs: [
        { name: "first", recipe: "sl_basic" },
        { name: "second", recipe: "sl_basic", overrides: { seed: 1 } },
      ],
      test_sets: ["nll:./held_out.jsonl", { benchmark: "arithmetic", max_examples: 4 }],
    }),
  );
  return {
    root,
    file,
    dir: join(root, "experiments", "tiny"),
    env: { ...process.env, COOKBOOK_HOME: join(root, "home"), HF_HUB_OFFLINE: "1", FORCE_COLOR: "0" },
  };
}

function batch(file: string, root: string, env: NodeJS.ProcessEnv, ...flags: string[]) {
  const child = spawn(process.execPath, [join(REPO, "bin", "cookbook.js"), "batch", file, "--root", join(root, "experiments"), ...flags], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<Exit>((r) => child.on("close", (code, signal) => r({ code, signal, stdout, stderr })));
  return { child, done };
}

function state(dir: string): BatchState | undefined {
  try {
    return readBatchState(dir);
  } catch {
    return undefined;
  }
}

/** Polls until the second run is training past a checkpoint of its own (not its last). */
async function waitForSecondRunPastCheckpoint(dir: string, exited: () => boolean): Promise<BatchState> {
  for (;;) {
    assert.ok(!exited(), "the batch ended before its second run could be interrupted");
    await new Promise((r) => setTimeout(r, 5));
    const s = state(dir);
    const second = s?.runs[1];
    if (second?.status !== "running" || second.pid === undefined) continue;
    const ckpt = existsSync(join(second.log_path, "checkpoints.jsonl")) ? readCheckpoints(second.log_path).at(-1) : undefined;
    if (ckpt === undefined || ckpt.final === true) continue;
    if (readMetrics(second.log_path).some((r) => r.step >= (ckpt.batch as number))) return s!;
  }
}

/** "submitted step=N" of logs.log, one list per launch of the run. */
function launches(logDir: string): number[][] {
  const out: number[][] = [];
  for (const line of readFileSync(join(logDir, "logs.log"), "utf8").split("\n")) {
    if (/\[INFO\] command: /.test(line)) out.push([]);
    const m = /submitted step=(\d+) /.exec(line);
    if (m) out[out.length - 1]!.push(Number(m[1]));
  }
  return out;
}

test("a batch killed during its second run: run again, the first is not retrained and the second resumes", { timeout: 300_000 }, async () => {
  const { root, file, env, dir } = setup();
  try {
    const first = batch(file, root, env, "--no-eval");
    let exited = false;
    void first.done.then(() => (exited = true));
    const s = await waitForSecondRunPastCheckpoint(dir, () => exited);
    assert.equal(s.phase, "training");
    assert.equal(s.pid, first.child.pid, "batch.json names the batch's pid while it trains");
    assert.equal(s.runs[0]!.status, "done");
    // A crash of everything: the batch and the run it is training.
    const runPid = s.runs[1]!.pid!;
    process.kill(runPid, "SIGKILL");
    first.child.kill("SIGKILL");
    await first.done;
    // SIGKILL is delivered at once but the exit (freeing a large process) takes a moment.
    while (isPidAlive(runPid)) await new Promise((r) => setTimeout(r, 10));
    const [firstDir, secondDir] = s.runs.map((r) => r.log_path) as [string, string];
    const firstCheckpoints = readFileSync(join(firstDir, "checkpoints.jsonl"), "utf8");
    const resumeFrom = readCheckpoints(secondDir)
      .filter((c) => c.state_path !== undefined)
      .at(-1)!.batch as number;
    assert.ok(resumeFrom > 0 && resumeFrom < STEPS);

    const again = await batch(file, root, env, "--no-eval").done;
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /1 of 2 runs already finished: first/);
    assert.match(again.stdout, /second: resuming sl_basic/);
    assert.equal(readFileSync(join(firstDir, "checkpoints.jsonl"), "utf8"), firstCheckpoints, "the first run is not retrained");
    assert.equal(launches(firstDir).length, 1);
    const secondLaunches = launches(secondDir);
    assert.equal(secondLaunches.length, 2);
    assert.equal(secondLaunches[1]![0], resumeFrom, "the second run resumes after its last checkpoint");
    assert.deepEqual(
      readMetrics(secondDir).map((r) => r.step),
      Array.from({ length: STEPS }, (_, i) => i),
      "every step logged once",
    );
    const end = readBatchState(dir)!;
    assert.equal(end.phase, "done");
    assert.equal(end.pid, undefined);
    assert.deepEqual(
      end.runs.map((r) => [r.name, r.status, r.pid]),
      [
        ["first", "done", undefined],
        ["second", "done", undefined],
      ],
    );
    assert.equal(readComparison(dir), undefined, "--no-eval writes no comparison");
    assert.ok(existsSync(join(dir, "report.html")));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("SIGINT stops cleanly; --no-train evaluates what finished; the next batch trains the rest and reuses stored evaluations", {
  timeout: 300_000,
}, async () => {
  const { root, file, env, dir } = setup();
  try {
    const run = batch(file, root, env);
    let exited = false;
    void run.done.then(() => (exited = true));
    const s = await waitForSecondRunPastCheckpoint(dir, () => exited);
    run.child.kill("SIGINT");
    const stopped = await run.done;
    assert.equal(stopped.code, 130, stopped.stderr);
    assert.match(stopped.stdout, /batch stopped; run the same command again to continue/);
    const after = readBatchState(dir)!;
    assert.equal(after.phase, "stopped");
    assert.deepEqual(
      after.runs.map((r) => r.status),
      ["done", "stopped"],
    );
    const secondDir = s.runs[1]!.log_path;
    assert.equal(readManifest(secondDir)?.status, "stopped", "the run itself saved and stopped");
    assert.ok(readCheckpoints(secondDir).every((c) => c.final !== true));

    const evalOnly = await batch(file, root, env, "--no-train").done;
    assert.equal(evalOnly.code, 0, evalOnly.stderr);
    assert.match(evalOnly.stdout, /not evaluated \(training not finished\): second/);
    const partial = readComparison(dir)!;
    assert.deepEqual(
      partial.models.map((m) => m.name),
      ["base:tiny-chat", "first"],
    );
    assert.deepEqual(
      partial.test_sets.map((t) => t.name),
      ["nll_held_out", "arithmetic"],
    );
    assert.equal(partial.results.length, 4);
    assert.ok(
      partial.results.every((r) => r.value !== null && r.error === undefined),
      JSON.stringify(partial.results),
    );
    assert.equal(readBatchState(dir)!.runs[1]!.status, "stopped", "--no-train leaves the stopped run as it was");

    const full = await batch(file, root, env).done;
    assert.equal(full.code, 0, full.stderr);
    assert.match(full.stdout, /second: resuming sl_basic/);
    // The baseline and the first run were evaluated by the --no-train batch: read back, not sampled.
    const stored = full.stdout.split("\n").filter((l) => l.includes("(stored)"));
    assert.equal(stored.length, 4, full.stdout);
    const comparison = readComparison(dir)!;
    assert.deepEqual(
      comparison.models.map((m) => m.name),
      ["base:tiny-chat", "first", "second"],
    );
    for (const r of partial.results) assert.equal(comparison.results.find((x) => x.model === r.model && x.test_set === r.test_set)?.value, r.value);
    assert.match(comparison.models[2]!.checkpoint ?? "", /^tinker:\/\/.*\/sampler_weights\/final$/);
    assert.match(readFileSync(join(dir, "comparison.md"), "utf8"), /\| second \|/);
    assert.match(readFileSync(join(dir, "comparison.csv"), "utf8"), /^second,run,tiny-chat,tinker:/m);
    assert.equal([...readFileSync(join(dir, "report.html"), "utf8").matchAll(/class="chart bar-chart"/g)].length, 2);
    assert.equal(readBatchState(dir)!.phase, "done");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("--dry-run measures each run and the evaluation, sums them, and trains nothing", { timeout: 300_000 }, async () => {
  const { root, file, env, dir } = setup();
  try {
    const out = await batch(file, root, env, "--dry-run").done;
    assert.equal(out.code, 0, out.stderr);
    for (const name of ["first", "second"]) assert.match(out.stdout, new RegExp(`^${name} +sl_basic +${STEPS} `, "m"));
    assert.match(out.stdout, /evaluation +\d+ s +\(2 test sets: 1 baselines × [\d.]+ s \+ 2 runs × [\d.]+ s, measured on tiny-chat and a checkpoint of it\)/);
    assert.match(out.stdout, /expected wall +\d/);
    assert.equal(existsSync(dir), false, "nothing written under the experiments root");
    assert.equal(
      existsSync(join(root, "home", "checkpoints")) && readdirSync(join(root, "home", "checkpoints")).length > 0,
      false,
      "no checkpoint left in the store",
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("parallel=2 trains both runs at the same time", { timeout: 300_000 }, async () => {
  const { root, file, env, dir } = setup();
  try {
    const out = await batch(file, root, env, "parallel=2", "--no-eval").done;
    assert.equal(out.code, 0, out.stderr);
    const lines = out.stdout.split("\n");
    const started = lines.filter((l) => / training sl_basic /.test(l)).map((l) => lines.indexOf(l));
    const firstDone = lines.findIndex((l) => /: done after /.test(l));
    assert.equal(started.length, 2);
    assert.ok(
      started.every((i) => i < firstDone),
      `both runs start before either ends:\n${out.stdout}`,
    );
    const runs = readBatchState(dir)!.runs;
    assert.deepEqual(
      runs.map((r) => r.status),
      ["done", "done"],
    );
    assert.ok(runs[1]!.started_at! < runs[0]!.finished_at!, "the second run started while the first was training");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
