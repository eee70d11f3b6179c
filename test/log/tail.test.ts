import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { JsonlTailReader } from "../../src/log/tail.ts";
import { tempDir } from "./helpers.ts";

test("returns only complete new lines and picks up a partial line once it is finished", () => {
  const file = join(tempDir(), "metrics.jsonl");
  const reader = new JsonlTailReader(file);
  assert.deepEqual(reader.read(), [], "missing file");
  writeFileSync(file, '{"step":0}\n{"step":1}\n{"st');
  assert.deepEqual(reader.read(), [{ step: 0 }, { step: 1 }]);
  assert.deepEqual(reader.read(), []);
  appendFileSync(file, 'ep":2}\n{"step":3}\n');
  assert.deepEqual(reader.read(), [{ step: 2 }, { step: 3 }]);
});

test("malformed complete lines are collected with line numbers, not fatal", () => {
  const file = join(tempDir(), "m.jsonl");
  writeFileSync(file, '{"a":1}\nbad\n');
  const reader = new JsonlTailReader(file);
  assert.deepEqual(reader.read(), [{ a: 1 }]);
  appendFileSync(file, '{"a":2}\nworse\n');
  assert.deepEqual(reader.read(), [{ a: 2 }]);
  assert.deepEqual(
    reader.errors.map((e) => e.line),
    [2, 4],
  );
  assert.match(reader.errors[1].message, /m\.jsonl:4: malformed JSON line/);
});

test("a truncated (rewritten) file is read from the start again", () => {
  const file = join(tempDir(), "m.jsonl");
  writeFileSync(file, '{"a":1}\n{"a":2}\n');
  const reader = new JsonlTailReader(file);
  assert.equal(reader.read().length, 2);
  writeFileSync(file, '{"b":1}\n');
  assert.deepEqual(reader.read(), [{ b: 1 }]);
});

test("multi-byte characters split across reads are decoded correctly", () => {
  const file = join(tempDir(), "m.jsonl");
  const reader = new JsonlTailReader(file);
  const line = Buffer.from('{"text":"héllo ✓"}\n');
  writeFileSync(file, line.subarray(0, 12));
  assert.deepEqual(reader.read(), []);
  appendFileSync(file, line.subarray(12));
  assert.deepEqual(reader.read(), [{ text: "héllo ✓" }]);
});

test("100k rows: first read and incremental reads are fast", () => {
  const file = join(tempDir(), "big.jsonl");
  const rows: string[] = [];
  for (let i = 0; i < 100_000; i++) rows.push(JSON.stringify({ step: i, loss: 1 / (i + 1), "time/total": 0.01 }));
  writeFileSync(file, `${rows.join("\n")}\n`);
  const reader = new JsonlTailReader<{ step: number }>(file);
  let t0 = performance.now();
  const all = reader.read();
  const firstMs = performance.now() - t0;
  assert.equal(all.length, 100_000);
  assert.equal(all[99_999].step, 99_999);
  assert.ok(firstMs < 2000, `first read took ${firstMs} ms`);
  appendFileSync(file, '{"step":100000}\n');
  t0 = performance.now();
  assert.deepEqual(reader.read(), [{ step: 100_000 }]);
  const incMs = performance.now() - t0;
  assert.ok(incMs < 50, `incremental read took ${incMs} ms`);
});
