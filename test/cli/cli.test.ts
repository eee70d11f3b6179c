import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const REPO = resolve(import.meta.dirname, "../..");
const BIN = join(REPO, "bin/cookbook.js");

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function cookbook(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { cwd: REPO, env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

const tempDir = (): string => mkdtempSync(join(tmpdir(), "cookbook-cli-"));

test("cookbook recipes lists recipes with descriptions (text and JSON)", async () => {
  const text = await cookbook(["recipes"]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^example_line_fit {2,}Toy example: fit y = a·x \+ b by gradient descent/m);
  const json = await cookbook(["recipes", "--json"]);
  const list = JSON.parse(json.stdout) as { name: string; description: string }[];
  assert.ok(list.some((r) => r.name === "example_line_fit" && r.description.length > 0));
});

test("cookbook run <recipe> --help prints fields, types, defaults and descriptions", async () => {
  const r = await cookbook(["run", "example_line_fit", "--help"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^example_line_fit: Toy example/);
  assert.match(r.stdout, /\n {2}learning_rate: number = 0\.1\n {6}Gradient-descent step size\n/);
  assert.match(r.stdout, /\n {2}data\.num_points: integer = 64\n/);
  assert.match(r.stdout, /\n {2}behavior_if_log_dir_exists: delete \| resume \| ask \| raise = "ask"\n/);
});

test("usage errors print one line without a stack and exit 2", async () => {
  const cases: [string[], string][] = [
    [["run", "example_line_fit", "lerning_rate=1"], 'error: unknown config key "lerning_rate"; closest valid keys: learning_rate\n'],
    [["run", "example_line_fit", "max_steps=abc"], 'error: invalid value for max_steps: "abc" (expected an integer)\n'],
    [["run", "example_line_fit", "lr_schedule=step"], 'error: invalid value for lr_schedule: "step" (expected one of linear, cosine, constant)\n'],
    [["run", "example_lin_fit"], 'error: unknown recipe "example_lin_fit"; closest: example_line_fit (see cookbook recipes)\n'],
    [["run", "example_line_fit", "learning_rate"], 'error: expected key=value, got "learning_rate"\n'],
    [["frobnicate"], "error: Unknown argument: frobnicate\n"],
  ];
  const results = await Promise.all(cases.map(([args]) => cookbook(args)));
  cases.forEach(([args, stderr], i) => {
    assert.equal(results[i].stderr, stderr, args.join(" "));
    assert.equal(results[i].code, 2, args.join(" "));
  });
});

test("a real run writes its directory; runs lists it; a second run without a terminal refuses", async () => {
  const root = tempDir();
  const logPath = join(root, "fit");
  const r = await cookbook(["run", "example_line_fit", `log_path=${logPath}`, "max_steps=30", "console_every=10", "data.noise=0"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Step 10\n {2}a {2,}/m);
  for (const f of ["metrics.jsonl", "config.json", "run.json", "logs.log", "checkpoints.jsonl"]) assert.ok(existsSync(join(logPath, f)), f);
  const metrics = readFileSync(join(logPath, "metrics.jsonl"), "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as { step: number; loss: number });
  assert.equal(metrics.length, 30);
  assert.ok(metrics[29].loss < metrics[0].loss / 10, "loss goes down");
  assert.equal(JSON.parse(readFileSync(join(logPath, "config.json"), "utf8")).data.noise, 0);
  const lastCheckpoint = readFileSync(join(logPath, "checkpoints.jsonl"), "utf8").trimEnd().split("\n").at(-1) ?? "";
  assert.equal(JSON.parse(lastCheckpoint).final, true);
  assert.match(readFileSync(join(logPath, "logs.log"), "utf8").split("\n")[0], /command: .*cookbook\.js run example_line_fit log_path=/);

  const listed = await cookbook(["runs", root, "--json"]);
  assert.equal(listed.code, 0, listed.stderr);
  const runs = JSON.parse(listed.stdout) as { name: string; status: string; recipe: string; lastStep: number; metrics: Record<string, number> }[];
  assert.equal(runs.length, 1);
  assert.equal(runs[0].name, "fit");
  assert.equal(runs[0].status, "completed");
  assert.equal(runs[0].recipe, "example_line_fit");
  assert.equal(runs[0].lastStep, 29);
  assert.equal(runs[0].metrics.loss, metrics[29].loss);

  const table = await cookbook(["runs", root]);
  assert.match(table.stdout, /^NAME +STATUS +RECIPE +KIND +STEP +METRICS +AGE\nfit +completed +example_line_fit +- +29 +loss=/);

  const again = await cookbook(["run", "example_line_fit", `log_path=${logPath}`]);
  assert.equal(again.code, 2);
  assert.equal(
    again.stderr,
    `error: log directory ${logPath} already exists and there is no terminal to ask; pass behavior_if_log_dir_exists=delete, resume or raise\n`,
  );
});

test("a failing run exits 1 with a one-line message", async () => {
  const root = tempDir();
  writeFileSync(join(root, "file"), "x");
  const r = await cookbook(["run", "example_line_fit", `log_path=${join(root, "file", "sub")}`]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^error: ENOTDIR: not a directory, mkdir '.*file\/sub'\n$/);
});

test("bare cookbook without a terminal prints the runs table of the default log root", async () => {
  const root = tempDir();
  const empty = await cookbook([], { COOKBOOK_LOG_ROOT: root });
  assert.equal(empty.code, 0, empty.stderr);
  assert.equal(empty.stdout, `no runs under ${root}\n`);
  writeFileSync(join(root, "config.json"), '{"num_epochs":1}');
  const one = await cookbook([], { COOKBOOK_LOG_ROOT: root });
  assert.match(one.stdout, /^NAME .*\n\S+ +idle +- +sl +- +- +\d+s$/m);
});

test("output into a reader that has gone (cookbook recipes | true) ends quietly with exit 0", () => {
  // `true` exits without reading, long before node has started, so every write meets a closed pipe.
  const piped = spawnSync("bash", ["-c", `"${process.execPath}" "${BIN}" recipes | true; echo "status=\${PIPESTATUS[0]}" >&2`], {
    cwd: REPO,
    encoding: "utf8",
  });
  assert.doesNotMatch(piped.stderr, /EPIPE|Unhandled/);
  assert.match(piped.stderr, /status=0/);
});
