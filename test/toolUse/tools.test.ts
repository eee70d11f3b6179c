import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { z } from "zod";
import { calculatorTool, evaluateExpression } from "../../src/toolUse/tools/calculator.ts";
import { documentSearchTool, readDocuments } from "../../src/toolUse/tools/documentSearch.ts";
import { defineTool, errorToolResult, runToolCall, simpleToolResult, toolSpec } from "../../src/toolUse/tool.ts";

test("calculator: exact long integer sums, precedence, parentheses, errors", () => {
  assert.equal(evaluateExpression("48213 + 39677"), "87890");
  assert.equal(evaluateExpression("123456789012345678 + 1"), "123456789012345679");
  assert.equal(evaluateExpression("2 + 3 * (4 - 1)"), "11");
  assert.equal(evaluateExpression("-5 + 2"), "-3");
  assert.equal(evaluateExpression("7 / 2"), "3.5");
  assert.throws(() => evaluateExpression("1 / 0"), /division by zero/);
  assert.throws(() => evaluateExpression("2 +"), /ends too early/);
  assert.throws(() => evaluateExpression("2 $ 3"), /unexpected character "\$"/);
});

test("toolSpec renders the zod schema as JSON Schema", () => {
  const spec = toolSpec(calculatorTool);
  assert.equal(spec.name, "calculator");
  assert.deepEqual((spec.parameters["properties"] as Record<string, { type: string }>)["expression"]?.type, "string");
  assert.deepEqual(spec.parameters["required"], ["expression"]);
  assert.equal(spec.parameters["$schema"], undefined);
});

test("runToolCall: results, bad JSON, schema errors, throws and timeouts become error results", async () => {
  assert.deepEqual(await runToolCall(calculatorTool, '{"expression": "1 + 2"}', 1000), simpleToolResult("3"));
  const badJson = await runToolCall(calculatorTool, "{expression: 1}", 1000);
  assert.equal(badJson.isError, true);
  assert.match(badJson.content, /not valid JSON/);
  const badArgs = await runToolCall(calculatorTool, '{"expr": "1"}', 1000);
  assert.match(badArgs.content, /invalid arguments for calculator: expression/);
  const thrower = defineTool({
    name: "boom",
    description: "throws",
    schema: z.object({}),
    handler: async () => {
      throw new Error("kaput");
    },
  });
  assert.deepEqual(await runToolCall(thrower, "{}", 1000), errorToolResult("boom failed: kaput"));
  let aborted = false;
  const slow = defineTool({
    name: "slow",
    description: "never answers in time",
    schema: z.object({}),
    handler: (_args, { signal }) =>
      new Promise((resolve) => {
        signal.addEventListener("abort", () => {
          aborted = true;
        });
        setTimeout(() => resolve("late"), 2000).unref();
      }),
  });
  const timedOut = await runToolCall(slow, "{}", 30);
  assert.equal(timedOut.isError, true);
  assert.match(timedOut.content, /slow timed out after 30 ms/);
  assert.equal(aborted, true);
  assert.throws(() => defineTool({ name: "bad name", description: "x", schema: z.object({}), handler: async () => "" }), /must match/);
});

test("document search ranks by shared rare words and reports bad rows by line", async () => {
  const dir = mkdtempSync(join(tmpdir(), "docs-"));
  const file = join(dir, "docs.jsonl");
  writeFileSync(
    file,
    [
      { id: 1, title: "Zorbia", text: "Zorbia is a land of glowing moss and quiet towns." },
      { id: "b", title: "Moss", text: "Glowing moss grows near the river." },
      { id: 3, text: "Towns trade bread." },
    ]
      .map((d) => JSON.stringify(d))
      .join("\n") + "\n",
  );
  const search = documentSearchTool(file, { k: 2 });
  const hit = await runToolCall(search, '{"query": "glowing moss river"}', 1000);
  assert.equal(hit.isError, false);
  assert.equal(hit.content.split("\n")[0]!.startsWith("[b] Moss:"), true);
  assert.equal(hit.content.split("\n").length, 2);
  assert.equal((await runToolCall(search, '{"query": "spaceship"}', 1000)).content, "No results.");
  writeFileSync(file, '{"id": 1, "text": "ok"}\n{"id": 2}\n');
  assert.throws(() => readDocuments(file), /docs\.jsonl:2: key "text"/);
});
