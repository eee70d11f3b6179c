import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DiskFullError, describeWriteError } from "../../src/files/diskErrors.ts";
import { appendLine, writeFileAtomic } from "../../src/files/durable.ts";
import { appendJsonl, readJsonl } from "../../src/log/jsonl.ts";
import { enospc, failWritesTo } from "./faults.ts";

const tempDir = (): string => mkdtempSync(join(tmpdir(), "cookbook-files-"));

test("an append after a crash mid-write cuts the torn fragment, so the next record is not glued to it", () => {
  const file = join(tempDir(), "metrics.jsonl");
  writeFileSync(file, '{"step":1,"loss":2}\n{"step":2,"lo');
  const result = appendJsonl(file, { step: 3, loss: 1 });
  // start/end: where the new line sits, after the cut (what metrics.columns records).
  assert.deepEqual(result, { repaired: "cut", cutBytes: 13, start: 20, end: 40 });
  assert.equal(readFileSync(file, "utf8"), '{"step":1,"loss":2}\n{"step":3,"loss":1}\n');
  assert.deepEqual(
    readJsonl<{ step: number }>(file).map((r) => r.step),
    [1, 3],
  );
});

test("a whole record that only lacks its newline is kept and terminated", () => {
  const file = join(tempDir(), "checkpoints.jsonl");
  writeFileSync(file, '{"name":"000001"}');
  assert.deepEqual(appendJsonl(file, { name: "000002" }), { repaired: "terminated", start: 18, end: 36 });
  assert.deepEqual(
    readJsonl<{ name: string }>(file).map((r) => r.name),
    ["000001", "000002"],
  );
});

test("a torn fragment longer than the read chunk, and one with no newline before it, are cut whole", () => {
  const dir = tempDir();
  const long = join(dir, "a.jsonl");
  writeFileSync(long, `{"step":0}\n{"text":"${"x".repeat(200_000)}`);
  appendJsonl(long, { step: 1 });
  assert.equal(readFileSync(long, "utf8"), '{"step":0}\n{"step":1}\n');
  const only = join(dir, "b.jsonl");
  writeFileSync(only, '{"ste');
  appendJsonl(only, { step: 0 });
  assert.equal(readFileSync(only, "utf8"), '{"step":0}\n');
});

test("text logs keep a torn line and end it before the next entry", () => {
  const file = join(tempDir(), "logs.log");
  writeFileSync(file, "2026 [INFO] half a mess");
  assert.deepEqual(appendLine(file, "2026 [INFO] next", { repair: "text" }), { repaired: "terminated", start: 24, end: 41 });
  assert.equal(readFileSync(file, "utf8"), "2026 [INFO] half a mess\n2026 [INFO] next\n");
});

test("a full disk mid-append leaves the file as it was and names the file and what was written", () => {
  const file = join(tempDir(), "metrics.jsonl");
  writeFileSync(file, '{"step":0}\n');
  const restore = failWritesTo((p) => p === file, 5);
  try {
    assert.throws(
      () => appendJsonl(file, { step: 1, loss: 0.5 }, { context: "metrics of step 1" }),
      (err: unknown) =>
        err instanceof DiskFullError &&
        err.message.includes(file) &&
        err.message.includes("metrics of step 1") &&
        /no space left on device/.test(err.message) &&
        /free of/.test(err.message),
    );
  } finally {
    restore();
  }
  assert.equal(readFileSync(file, "utf8"), '{"step":0}\n');
});

test("a full disk during an atomic replace keeps the old content and leaves no temp file", () => {
  const dir = tempDir();
  const file = join(dir, "run.json");
  writeFileSync(file, '{"status":"running"}\n');
  const restore = failWritesTo((p) => p.endsWith(".tmp"), 3);
  try {
    assert.throws(() => writeFileAtomic(file, '{"status":"completed"}\n', { context: "run status" }), DiskFullError);
  } finally {
    restore();
  }
  assert.equal(readFileSync(file, "utf8"), '{"status":"running"}\n');
  assert.deepEqual(readdirSync(dir), ["run.json"]);
  writeFileAtomic(file, '{"status":"completed"}\n');
  assert.equal(readFileSync(file, "utf8"), '{"status":"completed"}\n');
});

test("only disk-full errors are rewritten; EDQUOT says quota", () => {
  const other = new Error("EACCES");
  assert.equal(describeWriteError(other, "/x"), other);
  const quota = describeWriteError(Object.assign(new Error("EDQUOT"), { code: "EDQUOT" }), "/tmp/x", "step 4");
  assert.ok(quota instanceof DiskFullError);
  assert.match((quota as Error).message, /^disk quota exceeded writing \/tmp\/x \(step 4\)/);
  const full = describeWriteError(enospc(), "/tmp/y");
  assert.equal(describeWriteError(full, "/elsewhere"), full);
});
