import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { JsonlError, appendJsonl, parseJsonlText, readJsonl } from "../../src/log/jsonl.ts";
import { tempDir } from "./helpers.ts";

test("appendJsonl writes whole lines that readJsonl reads back", () => {
  const file = join(tempDir(), "a.jsonl");
  appendJsonl(file, { step: 0, loss: 1.5 });
  appendJsonl(file, { step: 1, loss: 0.5, "env/all/reward": 2 });
  assert.equal(readFileSync(file, "utf8"), '{"step":0,"loss":1.5}\n{"step":1,"loss":0.5,"env/all/reward":2}\n');
  assert.deepEqual(readJsonl(file), [
    { step: 0, loss: 1.5 },
    { step: 1, loss: 0.5, "env/all/reward": 2 },
  ]);
});

test("a missing file reads as empty", () => {
  assert.deepEqual(readJsonl(join(tempDir(), "none.jsonl")), []);
});

test("a torn final line (no newline, unparsable) is skipped", () => {
  const result = parseJsonlText('{"a":1}\n{"a":2}\n{"a":', "m.jsonl");
  assert.deepEqual(result.records, [{ a: 1 }, { a: 2 }]);
  assert.equal(result.tornTail, true);
  // A complete final line without newline still counts.
  const whole = parseJsonlText('{"a":1}\n{"a":2}', "m.jsonl");
  assert.deepEqual(whole.records, [{ a: 1 }, { a: 2 }]);
  assert.equal(whole.tornTail, false);
});

test("a malformed line that is not the torn tail throws with file and line number", () => {
  const file = join(tempDir(), "metrics.jsonl");
  writeFileSync(file, '{"a":1}\n\n{"a":2\n{"a":3}\n');
  assert.throws(
    () => readJsonl(file),
    (err: unknown) => {
      assert.ok(err instanceof JsonlError);
      assert.equal(err.file, file);
      assert.equal(err.line, 3);
      assert.match(err.message, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:3: malformed JSON line \\(`));
      return true;
    },
  );
  // A malformed last line that does end with a newline was fully written: that is an error too.
  assert.throws(() => parseJsonlText('{"a":1}\nnope\n', "x.jsonl"), { message: /^x\.jsonl:2: malformed JSON line/ });
});
