import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { checkLogDir, deleteRunDir } from "../../src/runs/logDir.ts";
import { startManifest } from "../../src/runs/manifest.ts";
import { tempDir } from "./helpers.ts";

function runDir(): string {
  const dir = join(tempDir(), "run");
  mkdirSync(dir);
  writeFileSync(join(dir, "metrics.jsonl"), '{"step":0}\n');
  return dir;
}

test("a missing or empty directory is fresh whatever the policy", async () => {
  const root = tempDir();
  assert.equal(await checkLogDir(join(root, "new"), "raise"), "fresh");
  assert.equal(await checkLogDir(root, "raise"), "fresh");
});

test("resume, raise and delete on an existing run directory", async () => {
  const dir = runDir();
  assert.equal(await checkLogDir(dir, "resume"), "resume");
  await assert.rejects(checkLogDir(dir, "raise"), {
    name: "UsageError",
    message: `log directory ${dir} already exists (behavior_if_log_dir_exists=raise)`,
  });
  assert.equal(await checkLogDir(dir, "delete"), "deleted");
  assert.equal(existsSync(dir), false);
});

test("ask errors without a terminal and prompts delete/resume/exit on one", async () => {
  const dir = runDir();
  await assert.rejects(checkLogDir(dir, "ask", { interactive: false }), {
    message: `log directory ${dir} already exists and there is no terminal to ask; pass behavior_if_log_dir_exists=delete, resume or raise`,
  });
  const answers = ["what", "resume"];
  const asked: string[] = [];
  const prompt = async (q: string): Promise<string> => {
    asked.push(q);
    return answers.shift() ?? "exit";
  };
  assert.equal(await checkLogDir(dir, "ask", { interactive: true, prompt }), "resume");
  assert.equal(asked.length, 2, "asks again after an invalid answer");
  assert.equal(asked[0], `Log directory ${dir} already exists. [delete, resume, exit]: `);
  assert.equal(await checkLogDir(dir, "ask", { interactive: true, prompt: async () => "exit" }), "exit");
  assert.equal(await checkLogDir(dir, "ask", { interactive: true, prompt: async () => " Delete " }), "deleted");
  assert.equal(existsSync(dir), false);
});

test("delete refuses the root, the home directory, the cwd and non-run directories", () => {
  assert.throws(() => deleteRunDir("/"), { name: "RefusedDeleteError", message: "refusing to delete /: it is the filesystem root" });
  assert.throws(() => deleteRunDir(homedir()), { message: `refusing to delete ${homedir()}: it is the home directory` });
  assert.throws(() => deleteRunDir(process.cwd()), { message: `refusing to delete ${process.cwd()}: it contains the current working directory` });
  const notRun = tempDir();
  writeFileSync(join(notRun, "thesis.tex"), "precious");
  assert.throws(() => deleteRunDir(notRun), {
    message: `refusing to delete ${notRun}: it does not look like a run directory (none of metrics.jsonl, config.json, run.json, checkpoints.jsonl, logs.log, run.lock)`,
  });
  assert.ok(existsSync(join(notRun, "thesis.tex")));
});

test("delete refuses a directory whose run is live", async () => {
  const dir = runDir();
  const handle = startManifest(dir, { recipe: "x", argv: [], engine: "none" }, 1000);
  try {
    await assert.rejects(checkLogDir(dir, "delete"), { message: `refusing to delete ${dir}: its run is still live (pid ${process.pid})` });
  } finally {
    handle.finish("stopped");
  }
  deleteRunDir(dir);
  assert.equal(existsSync(dir), false);
});
