// Input JSONL is read strictly: every bad line is an error naming file:line and the expected shape,
// in the caller's error class; blank lines and CRLF endings are fine; a missing file is named.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readJsonlObjects } from "../../src/files/jsonlInput.ts";

class DomainError extends Error {}

function file(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "jsonl-input-")), "rows.jsonl");
  writeFileSync(path, text);
  return path;
}

test("objects come back with their 1-based lines; blank lines and CRLF are skipped", () => {
  const path = file('{"a":1}\r\n\r\n  \n{"a":2}\n');
  assert.deepEqual(
    readJsonlObjects(path, "{a}").map((r) => [r.line, r.row["a"], r.where]),
    [
      [1, 1, `${path}:1`],
      [4, 2, `${path}:4`],
    ],
  );
});

test("a torn line, a non-object line and a missing file are errors naming where and what was expected", () => {
  const options = { makeError: (m: string) => new DomainError(m) };
  assert.throws(
    () => readJsonlObjects(file('{"a":1}\n{"a":\n'), "an object with a", options),
    (e: Error) => e instanceof DomainError && e.message.includes(":2: not valid JSON") && e.message.includes("expected an object with a"),
  );
  assert.throws(
    () => readJsonlObjects(file('{"a":1}\n[1,2]\n'), "an object with a", options),
    (e: Error) => /:2: expected an object with a$/.test(e.message),
  );
  assert.throws(() => readJsonlObjects(file("null\n"), "an object", options), /:1: expected an object/);
  assert.throws(
    () => readJsonlObjects("/nonexistent/rows.jsonl", "x", options),
    (e: Error) => e instanceof DomainError && /\/nonexistent\/rows\.jsonl: cannot read/.test(e.message),
  );
});
