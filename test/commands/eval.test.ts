import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { EvalStore } from "../../src/eval/store.ts";

const REPO = resolve(import.meta.dirname, "../..");
const BIN = join(REPO, "bin/cookbook.js");

function cookbook(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { cwd: REPO, env: { ...process.env, CI: "1" }, timeout: 300_000 }, (err, stdout, stderr) => {
      done({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

test("cookbook eval tiny-chat on the embedded engine: summary table, store, and a resumed rerun by run_id samples nothing", async () => {
  const store = mkdtempSync(join(tmpdir(), "cookbook-eval-"));
  const r = await cookbook(["eval", "tiny-chat", "arithmetic:9", "max_examples=6", "num_samples=2", `store=${store}`]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n");
  assert.match(lines[0]!, /^benchmark\s+model\s+metric\s+score\s+pass@1\s+pass@2\s+examples\s+errors$/);
  assert.match(lines[2]!, /^arithmetic_max9\s+tiny-chat\s+accuracy\s+\d+\.\d%\s+\d+\.\d%\s+\d+\.\d%\s+6\s+0$/);
  // Progress is on stderr, not mixed into the table.
  assert.match(r.stderr, /arithmetic_max9 \[#+\] 6\/6/);
  const s = new EvalStore(store);
  const [run] = s.listIndex();
  assert.equal(s.readMetadata(run!.run_id)!.status, "complete");
  const result = s.readResult(run!.run_id, "arithmetic_max9")!;
  assert.equal(result.num_examples, 6);
  assert.equal(s.readTrajectories(run!.run_id, "arithmetic_max9").length, 6);
  assert.equal(s.readTrajectories(run!.run_id, "arithmetic_max9")[0]!.samples.length, 2);

  const again = await cookbook(["eval", "tiny-chat", "arithmetic:9", "max_examples=6", "num_samples=2", `store=${store}`, `run_id=${run!.run_id}`]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /resumed eval run/);
  assert.equal(s.readTrajectories(run!.run_id, "arithmetic_max9").length, 6, "nothing re-sampled");
  assert.equal(again.stdout.split("\n")[2], lines[2]);
});

test("cookbook eval errors: unknown benchmark, unknown setting, missing benchmark", async () => {
  const unknown = await cookbook(["eval", "tiny-chat", "gsm9k"]);
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.stderr, /unknown benchmark "gsm9k"/);
  const badKey = await cookbook(["eval", "tiny-chat", "arithmetic", "num_sample=3"]);
  assert.equal(badKey.code, 2);
  assert.match(badKey.stderr, /unknown config key "num_sample"; closest valid keys: num_samples/);
  const none = await cookbook(["eval", "tiny-chat"]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /name at least one benchmark/);
});
