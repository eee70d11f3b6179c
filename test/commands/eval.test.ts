import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { EvalStore } from "../../src/eval/store.ts";
import { followsInstruction } from "../../src/eval/ifeval/instructions.ts";
import { writeParquet } from "../eval/parquetFixtures.ts";

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

test("cookbook eval tiny-chat ifeval and mmlu_redux on local parquet: per-subject accuracy, IFEval verdicts stored per sample", async () => {
  const dir = mkdtempSync(join(tmpdir(), "cookbook-eval-hub-"));
  const fields = { num_words: "int64", relation: "string" } as const;
  writeParquet(join(dir, "ifeval.parquet"), [
    { name: "key", type: "int64", data: [1, 2] },
    { name: "prompt", type: "string", data: ["Say hi in fewer than 50 words.", "Write a word without commas."] },
    { name: "instruction_id_list", type: "string_list", data: [["length_constraints:number_words"], ["punctuation:no_comma"]] },
    { name: "kwargs", type: "struct_list", fields, data: [[{ num_words: 50, relation: "less than" }], [{}]] },
  ]);
  for (const subject of ["anatomy", "virology"]) {
    writeParquet(join(dir, "redux", subject, "test-00000-of-00001.parquet"), [
      { name: "question", type: "string", data: ["Q1?", "Q2?"] },
      {
        name: "choices",
        type: "string_list",
        data: [
          ["a", "b", "c", "d"],
          ["a", "b", "c", "d"],
        ],
      },
      { name: "answer", type: "int64", data: [0, 1] },
      { name: "error_type", type: "string", data: ["ok", "ok"] },
    ]);
  }
  const store = join(dir, "store");
  const r = await cookbook([
    "eval",
    "tiny-chat",
    `ifeval:${join(dir, "ifeval.parquet")}`,
    `mmlu_redux:${join(dir, "redux")}`,
    "max_tokens=16",
    `store=${store}`,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^ifeval\s+tiny-chat\s+accuracy\s+\d+\.\d%\s+2\s+0$/m);
  assert.match(r.stdout, /^mmlu_redux\s+tiny-chat\s+accuracy\s+\d+\.\d%\s+4\s+0$/m);
  const s = new EvalStore(store);
  const [run] = s.listIndex();
  const redux = s.readResult(run!.run_id, "mmlu_redux")!.metrics;
  const reduxRecords = s.readTrajectories(run!.run_id, "mmlu_redux");
  for (const subject of ["anatomy", "virology"]) {
    const mine = reduxRecords.filter((t) => t.example_id.startsWith(`${subject}/`));
    assert.equal(redux[`accuracy/${subject}`], mine.filter((t) => t.samples[0]!.correct).length / mine.length);
  }
  // Every stored IFEval verdict is what the checker says of the stored response.
  const records = s.readTrajectories(run!.run_id, "ifeval");
  assert.equal(records.length, 2);
  for (const t of records) {
    const { instruction_id_list, kwargs } = JSON.parse(t.reference) as { instruction_id_list: string[]; kwargs: Record<string, unknown>[] };
    const sample = t.samples[0]!;
    assert.equal(sample.correct, followsInstruction(instruction_id_list[0]!, sample.response, kwargs[0]!), sample.response);
    assert.equal(sample.details?.["instructions"], 1);
  }
  const metrics = s.readResult(run!.run_id, "ifeval")!.metrics;
  assert.equal(metrics["prompt_strict_accuracy"], records.filter((t) => t.samples[0]!.correct).length / 2);
  assert.equal(typeof metrics["instruction_loose_accuracy"], "number");
});
