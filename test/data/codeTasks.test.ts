// The shipped code tasks: the fixture files are what the generator makes, every task's tests
// single out its operator, and the warm-up's replies differ in the operator token alone.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { CODE_OPS, codeReply, generateCodeTasks, operatorOfTests } from "../../src/data/synthetic/codeTasks.ts";
import { fixtureDataPath } from "../../src/data/fixtures.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { softReplyDatum } from "../../src/supervised/softReply.ts";

test("the fixture files are the generator's output (scripts/makeCodeTasks.ts)", () => {
  for (const [name, seed, count, prefix] of [
    ["code_tasks_train.jsonl", 1, 240, "train-"],
    ["code_tasks_test.jsonl", 2, 48, "test-"],
  ] as const) {
    const onDisk = readFileSync(fixtureDataPath(name), "utf8");
    assert.equal(
      onDisk,
      generateCodeTasks(seed, count, 5, prefix)
        .map((t) => JSON.stringify(t))
        .join("\n") + "\n",
      `${name} is stale: run npx tsx scripts/makeCodeTasks.ts`,
    );
  }
});

test("every task's tests are passed by its operator only", () => {
  const tasks = generateCodeTasks(7, 96);
  assert.deepEqual(new Set(tasks.map((t) => t.op)), new Set(CODE_OPS.map((o) => o.symbol)));
  for (const t of tasks) {
    const passes = (op: (typeof CODE_OPS)[number]) =>
      t.tests.every((x) => {
        const [a, b] = x.input.split("\n").map(Number);
        return JSON.stringify(op.apply(a!, b!)) === x.output;
      });
    assert.deepEqual(
      CODE_OPS.filter(passes).map((o) => o.symbol),
      [t.op],
      t.question,
    );
  }
});

test("the warm-up's six replies differ in one token for tiny-chat, trained toward all six", async () => {
  const renderer = getRenderer("role_colon", await getTokenizer("tiny-chat"));
  const datum = softReplyDatum(renderer, {
    messages: [{ role: "user", content: "Write a Python function solve(a, b) that returns a plus b." }],
    alternatives: CODE_OPS.map((o) => codeReply(o.symbol)),
  });
  const targets = datum.loss_fn_inputs["target_tokens"]!;
  assert.equal(targets.shape?.at(-1), CODE_OPS.length, "one column per operator");
});

test("the warm-up finds a shipped task's operator from its tests alone; other tests have none", () => {
  for (const t of generateCodeTasks(3, 24)) assert.equal(operatorOfTests(t.tests)?.symbol, t.op);
  assert.equal(operatorOfTests([{ kind: "assert", code: "assert f(1) == 2" }]), null);
  assert.equal(operatorOfTests([{ kind: "functional", input: "[1, 2]", output: "3" }]), null);
  assert.equal(operatorOfTests([{ kind: "functional", input: "2\n3", output: "7" }]), null);
});
