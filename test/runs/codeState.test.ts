// Run metadata: the git revision and uncommitted diff of the checkout (code.diff, as the cookbook
// writes it), a clear note when there is no checkout, and a training run that leaves code.diff,
// config.json's code_state and a trace.json of its steps in its directory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { captureCodeState, CODE_DIFF_FILE, writeCodeState } from "../../src/runs/codeState.ts";
import { TRACE_FILE } from "../../src/log/trace.ts";
import { assertValidTrace, tempDir } from "../log/helpers.ts";
import { recipeSandbox, REPO, runRecipe } from "../recipes/helpers.ts";

const git = (dir: string, ...args: string[]) =>
  execFileSync("git", ["-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { encoding: "utf8" }).trim();

test("a checkout with changes: revision, the staged and unstaged diff against HEAD, untracked files named", () => {
  const repo = tempDir("codestate-");
  git(repo, "init", "-q");
  writeFileSync(join(repo, "a.txt"), "one\n");
  writeFileSync(join(repo, "b.txt"), "bee\n");
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "first");
  const head = git(repo, "rev-parse", "HEAD");
  mkdirSync(join(repo, "sub"));
  const clean = captureCodeState(join(repo, "sub"));
  assert.equal(clean.record.git_revision, head);
  assert.ok(clean.record.git_revision !== null && !clean.record.uncommitted_changes);
  assert.match(clean.diff!, /\(no local changes\)/);

  writeFileSync(join(repo, "a.txt"), "two\n");
  writeFileSync(join(repo, "b.txt"), "bee staged\n");
  git(repo, "add", "b.txt");
  writeFileSync(join(repo, "new.txt"), "untracked\n");
  const dirty = captureCodeState(repo);
  assert.ok(dirty.record.git_revision !== null);
  assert.equal(dirty.record.uncommitted_changes, true);
  assert.equal(dirty.record.untracked_files, 1);
  assert.match(dirty.diff!, new RegExp(`^### repo: .* @ ${head}\\n`));
  assert.match(dirty.diff!, /^-one\n\+two$/m, "the unstaged change");
  assert.match(dirty.diff!, /^\+bee staged$/m, "the staged change");
  assert.match(dirty.diff!, /untracked files \(not in the diff\): new\.txt/);
  const logDir = tempDir("codestate-run-");
  writeCodeState(logDir, dirty);
  assert.equal(readFileSync(join(logDir, CODE_DIFF_FILE), "utf8"), dirty.diff);
});

test("outside a git checkout: no code.diff, and the record says why", () => {
  const dir = tempDir("codestate-nogit-");
  const state = captureCodeState(dir);
  assert.equal(state.diff, null);
  assert.equal(state.record.git_revision, null);
  assert.ok(state.record.git_revision === null && state.record.note.includes(dir), state.record.git_revision === null ? state.record.note : "");
  writeCodeState(dir, state);
  assert.equal(existsSync(join(dir, CODE_DIFF_FILE)), false);
});

test("a training run leaves code.diff of this checkout, code_state in config.json and a trace.json of its steps", { timeout: 120_000 }, async () => {
  const s = recipeSandbox("run-metadata");
  try {
    const logDir = join(s.root, "run");
    await runRecipe("rl_basic", [
      `model_name=${s.modelDir}`,
      `log_path=${logDir}`,
      "group_size=2",
      "groups_per_batch=2",
      "max_tokens=4",
      "lora_rank=4",
      "max_steps=2",
      "behavior_if_log_dir_exists=delete",
    ]);
    const config = JSON.parse(readFileSync(join(logDir, "config.json"), "utf8")) as { code_state: Record<string, unknown> };
    let head: string | null = null;
    try {
      head = git(REPO, "rev-parse", "HEAD");
    } catch {
      // Tests run from an unpacked copy: then the run must say it is not a checkout.
    }
    if (head === null) assert.equal(config.code_state["git_revision"], null);
    else {
      assert.equal(config.code_state["git_revision"], head);
      assert.equal(config.code_state["diff_file"], CODE_DIFF_FILE);
      assert.ok(readFileSync(join(logDir, CODE_DIFF_FILE), "utf8").startsWith(`### repo: ${git(REPO, "rev-parse", "--show-toplevel")} @ ${head}`));
    }
    const spans = assertValidTrace(JSON.parse(readFileSync(join(logDir, TRACE_FILE), "utf8")));
    assert.deepEqual(
      spans.filter((e) => e.cat === "step").map((e) => e.name),
      ["step 0", "step 1"],
    );
    const names = new Set(spans.map((e) => e.name));
    for (const name of ["sampling", "train_step", "save_checkpoint"]) assert.ok(names.has(name), `${name} in ${[...names].join(", ")}`);
  } finally {
    s.cleanup();
  }
});
