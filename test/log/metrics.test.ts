import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { formatValue } from "../../src/log/format.ts";
import { MetricsLogger, formatMetricsTable, readMetrics } from "../../src/log/metrics.ts";
import { RunLog } from "../../src/log/runLog.ts";
import { tempDir } from "./helpers.ts";

test("MetricsLogger writes config.json (indent 2) and one flat line per step", () => {
  const dir = join(tempDir(), "run");
  const printed: string[] = [];
  const logger = new MetricsLogger(dir, { console: { write: (s: string) => printed.push(s) }, consoleEvery: 2 });
  logger.logHyperparams({ learning_rate: 1e-4, nested: { a: 1 } });
  assert.equal(readFileSync(join(dir, "config.json"), "utf8"), '{\n  "learning_rate": 0.0001,\n  "nested": {\n    "a": 1\n  }\n}\n');
  logger.logMetrics({ loss: 0.5 }, 0);
  logger.logMetrics({ loss: 0.25, step: 99 }, 1);
  logger.logMetrics({ loss: 0.125 }, 2);
  assert.deepEqual(readMetrics(dir), [
    { step: 0, loss: 0.5 },
    { step: 1, loss: 0.25 },
    { step: 2, loss: 0.125 },
  ]);
  assert.equal(printed.length, 2, "console every 2 steps");
  assert.match(printed[1], /^Step 2\n/);
});

test("console table: keys sorted, 6 significant digits, :total/:count hidden", () => {
  const table = formatMetricsTable({ "time/fwd:total": 3, "time/fwd:count": 2, "time/fwd:mean": 1.23456789, loss: 0.000123456789, accuracy: 1, name: "x" }, 7);
  assert.equal(table, ["Step 7", "  accuracy       1", "  loss           0.000123457", "  name           x", "  time/fwd:mean  1.23457"].join("\n"));
});

test("formatValue keeps integers and rounds floats to 6 significant digits", () => {
  assert.equal(formatValue(123456789), "123456789");
  // biome-ignore lint/suspicious/noApproximativeNumericConstant: a float literal to round, not π
  assert.equal(formatValue(3.14159265), "3.14159");
  assert.equal(formatValue(1234567.891), "1234570");
  assert.equal(formatValue(Number.NaN), "NaN");
});

test("logs.log starts with the command line and appends entries", () => {
  const dir = tempDir();
  const log = new RunLog(dir, "cookbook run demo a=1");
  log.info("hello");
  log.warn("careful");
  const lines = readFileSync(join(dir, "logs.log"), "utf8").trimEnd().split("\n");
  assert.match(lines[0], /^\d{4}-\d\d-\d\dT[\d:.]+Z \[INFO\] command: cookbook run demo a=1$/);
  assert.match(lines[1], /\[INFO\] hello$/);
  assert.match(lines[2], /\[WARNING\] careful$/);
});
