// Code grading without running anything: the reply's code block, the harness's result lines,
// task files and the hub's shapes (DeepCoder, MBPP, HumanEval) read into our tests.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";
import { describeGrade, extractCodeBlock, parseHarnessOutput } from "../../src/grading/code.ts";
import {
  codePrompt,
  decodeLiveCodeBenchTests,
  normalizeDeepcoderTests,
  readCodeTasksJsonl,
  readDeepcoder,
  readHumanEval,
  readLiveCodeBench,
  readMbpp,
  shortCodePrompt,
  solutionSource,
  testCount,
  testsOf,
  unpickleString,
  type CodeTask,
} from "../../src/grading/codeTasks.ts";
import { startFakeHub } from "../hub/fakeHub.ts";

test("the last fenced block is the code; none is null", () => {
  assert.equal(extractCodeBlock("Try:\n```python\nx = 1\n```\nbetter:\n```py\nx = 2\n```\n"), "x = 2");
  assert.equal(extractCodeBlock("```\nprint(3)\n```"), "print(3)");
  assert.equal(extractCodeBlock("def f(): return 1"), null);
  assert.equal(extractCodeBlock("```python\nunclosed"), null);
});

test("harness lines count only with the run's token; missing tests take the run's status", () => {
  const token = "@@t@@";
  const out = [
    `${token}{"index":0,"status":"passed","detail":""}`,
    `@@forged@@{"index":1,"status":"passed"}`,
    "print noise",
    `${token}{"index":2,"status":"wrong","detail":"got 1, expected 2"}`,
    `${token}{"index":3,"sta`,
  ].join("\n");
  const tests = parseHarnessOutput(out, token, 4, { status: "timeout", reason: "killed at the wall-clock limit (9 s)" });
  assert.deepEqual(
    tests.map((t) => t.status),
    ["passed", "timeout", "wrong", "timeout"],
  );
  assert.equal(tests[2]!.detail, "got 1, expected 2");
  const ok = parseHarnessOutput(out, token, 3, { status: "ok", reason: "exited with code 0" });
  assert.equal(ok[1]!.status, "not_run");
  const text = describeGrade({
    passed: 1,
    total: 3,
    allPassed: false,
    tests: ok,
    run: {
      status: "ok",
      reason: "",
      wallMs: 12,
      isolation: { network: "not isolated", filesystem: "not isolated", processes: "", user: "", rlimits: "", notes: [] },
    },
  });
  assert.match(text, /^1\/3 tests passed/);
  assert.match(text, /test 3 wrong: got 1, expected 2/);
});

test("task files: prompts in either style, errors name file:line and field", () => {
  const dir = mkdtempSync(join(tmpdir(), "codetasks-"));
  const good = join(dir, "good.jsonl");
  writeFileSync(
    good,
    `${JSON.stringify({ id: "a", question: "Add them.", starter_code: "def solve(a, b):", tests: [{ kind: "functional", fn: "solve", input: "1\n2", output: "3" }] })}\n\n`,
  );
  const [lcb] = readCodeTasksJsonl(good, "lcb");
  assert.equal(lcb!.prompt, codePrompt("Add them.", "def solve(a, b):"));
  assert.match(lcb!.prompt, /### Format: You will use the following starter code[\s\S]*```python\ndef solve\(a, b\):\n```[\s\S]*### Answer:/);
  const [short] = readCodeTasksJsonl(good, "short");
  assert.equal(short!.prompt, shortCodePrompt("Add them.", "def solve(a, b):"));
  assert.deepEqual(short!.tests, [{ kind: "functional", fn: "solve", input: "1\n2", output: "3" }]);
  const bad = join(dir, "bad.jsonl");
  writeFileSync(bad, `${JSON.stringify({ question: "q", tests: [{ kind: "functional", fn: "f", input: "1" }] })}\n`);
  assert.throws(() => readCodeTasksJsonl(bad), /bad\.jsonl:1 tests\[0\]: test field "output" must be a string, got nothing/);
  writeFileSync(bad, `${JSON.stringify({ question: "q", tests: [] })}\n`);
  assert.throws(() => readCodeTasksJsonl(bad), /bad\.jsonl:1: "tests" must be a non-empty list/);
  writeFileSync(bad, `{"question": "q", "tests": [{"kind": "shell", "code": "ls"}]}\n`);
  assert.throws(() => readCodeTasksJsonl(bad), /must be stdin_stdout, functional or assert, got "shell"/);
});

test("DeepCoder tests: LiveCodeBench lists, TACO dicts, JSON strings, function names from metadata", () => {
  const lcb = JSON.stringify([
    { input: "1 2\n", output: "3\n", testtype: "stdin" },
    { input: "[1]", output: "1", testtype: "functional", metadata: { func_name: "first" } },
  ]);
  assert.deepEqual(normalizeDeepcoderTests(lcb, "{}"), [
    { kind: "stdin_stdout", input: "1 2\n", output: "3\n" },
    { kind: "functional", fn: "first", input: "[1]", output: "1" },
  ]);
  assert.deepEqual(normalizeDeepcoderTests({ inputs: ["a", "b"], outputs: [["x"], "y"] }, null), [
    { kind: "stdin_stdout", input: "a", output: "x" },
    { kind: "stdin_stdout", input: "b", output: "y" },
  ]);
  assert.deepEqual(normalizeDeepcoderTests({ inputs: ["[2]"], outputs: ["4"], fn_name: "double" }, null), [
    { kind: "functional", fn: "double", input: "[2]", output: "4" },
  ]);
  assert.deepEqual(normalizeDeepcoderTests([{ input: "1", output: "1", testtype: "functional" }], JSON.stringify({ func_name: "same" })), [
    { kind: "functional", fn: "same", input: "1", output: "1" },
  ]);
  assert.deepEqual(normalizeDeepcoderTests("not json", null), []);
});

test("HumanEval replies that give only the body get the signature back", () => {
  const task: CodeTask = { id: "h", prompt: "", tests: [], source: "", completionPrefix: { entryPoint: "add", prefix: 'def add(a, b):\n    """Add."""\n' } };
  assert.equal(solutionSource(task, "def add(a, b):\n    return a + b"), "def add(a, b):\n    return a + b");
  assert.equal(solutionSource(task, "return a + b"), 'def add(a, b):\n    """Add."""\n    return a + b\n');
});

function parquet(columns: Record<string, string[]>, rowGroupSize?: number): Uint8Array {
  return new Uint8Array(
    parquetWriteBuffer({
      columnData: Object.entries(columns).map(([name, data]) => ({ name, data, type: "STRING" as const })),
      ...(rowGroupSize !== undefined ? { rowGroupSize } : {}),
    }),
  );
}

test("DeepCoder from a local folder: rows streamed, unusable ones skipped, each task's tests read back from its row when graded", async () => {
  const dir = mkdtempSync(join(tmpdir(), "deepcoder-"));
  const tests = (n: number) => JSON.stringify([{ input: `${n}\n`, output: `${n * 2}\n`, testtype: "stdin" }]);
  mkdirSync(join(dir, "taco"));
  writeFileSync(
    join(dir, "taco", "train-00000-of-00001.parquet"),
    parquet(
      {
        problem: ["Double 1.", "No tests here.", "", "Double 4.", "Double 5."],
        tests: [tests(1), "[]", tests(3), tests(4), tests(5)],
        metadata: ["{}", "{}", "{}", "{}", "{}"],
      },
      2,
    ),
  );
  const tasks = await readDeepcoder("train", { path: dir, subsets: ["taco"] });
  assert.deepEqual(
    tasks.map((t) => t.id),
    ["taco/0", "taco/1", "taco/2"],
  );
  assert.ok(
    tasks.every((t) => !Array.isArray(t.tests)),
    "tests are not kept in memory",
  );
  assert.match(tasks[2]!.source, /train-00000-of-00001\.parquet row 4$/);
  assert.match(tasks[1]!.prompt, /Double 4\./);
  assert.equal(testCount(tasks[1]!), 1);
  assert.deepEqual(await testsOf(tasks[1]!), [{ kind: "stdin_stdout", input: "4\n", output: "8\n" }]);
  assert.deepEqual(await testsOf(tasks[2]!), [{ kind: "stdin_stdout", input: "5\n", output: "10\n" }]);
  assert.equal(await testsOf(tasks[2]!), await testsOf(tasks[2]!), "a task read again soon after shares the read");
});

test("MBPP and HumanEval from the (fake) hub the cookbook's way", async () => {
  const mbpp = parquet({
    task_id: ["11"],
    text: ["Write a function to remove the first and last occurrence of a given character."],
    test_list: [JSON.stringify(['assert remove_Occ("hello","l") == "helo"', 'assert remove_Occ("abcda","a") == "bcd"'])],
    test_setup_code: [""],
  });
  const human = parquet({
    task_id: ["HumanEval/0"],
    prompt: ["def inc(x):\n"],
    entry_point: ["inc"],
    test: ["def check(candidate):\n    assert candidate(1) == 2\n"],
    canonical_solution: ["    return x + 1\n"],
  });
  const hub = await startFakeHub({
    datasets: {
      "google-research-datasets/mbpp": { sha: "1".repeat(40), files: { "full/test-00000-of-00001.parquet": mbpp } },
      "openai/openai_humaneval": { sha: "2".repeat(40), files: { "openai_humaneval/test-00000-of-00001.parquet": human } },
    },
  });
  try {
    const env = { HF_ENDPOINT: hub.url, HF_HOME: mkdtempSync(join(tmpdir(), "hfhome-")) };
    const [m] = await readMbpp("test", { hub: { env, log: () => undefined } });
    assert.equal(m!.id, "11");
    assert.deepEqual(m!.tests, [
      { kind: "assert", code: 'assert remove_Occ("hello","l") == "helo"' },
      { kind: "assert", code: 'assert remove_Occ("abcda","a") == "bcd"' },
    ]);
    assert.match(m!.prompt, /remove the first and last occurrence[\s\S]*assert remove_Occ\("hello","l"\) == "helo"/);
    assert.doesNotMatch(m!.prompt, /bcda/, "only the first assert is shown");
    const [h] = await readHumanEval({ hub: { env, log: () => undefined } });
    assert.equal(h!.id, "HumanEval/0");
    assert.deepEqual(h!.tests, [{ kind: "assert", code: "def check(candidate):\n    assert candidate(1) == 2\n\n\ncheck(inc)\n" }]);
    assert.ok(hub.requests.some((r) => r.includes("openai_humaneval")));
  } finally {
    await hub.close();
  }
});

// Made by Python 3.11: base64(zlib.compress(pickle.dumps(json.dumps(tests)))) with the default
// protocol (4), as LiveCodeBench stores its private tests.
const PICKLED_STDIN = "eJxrYJlaxQABPWXR1UqZeQWlJUpWCkpGCsYxeUo6Ckr5pSVQIVOIQElqcUlJZUEqSKi4JCUzT6lWRwFJp6GBgq4Jul4znHpjp+gBALTqJsw=";
const PICKLED_FUNCTIONAL = "eJxrYJnqyAABPbbR1UqZeQWlJUpWCkrmMXkWSjoKSvmlJVARQ1MQvyS1uKSksiAVJJJWmpdckpmfl5ijVBs7RQ8A+UkWCQ==";

test("LiveCodeBench's private tests: pickled by Python, compressed and base64-encoded, read back", () => {
  assert.deepEqual(decodeLiveCodeBenchTests(PICKLED_STDIN, "row 0"), [
    { input: "2 3\n", output: "5\n", testtype: "stdin" },
    { input: "10 -4\n", output: "6\n", testtype: "stdin" },
  ]);
  assert.deepEqual(decodeLiveCodeBenchTests('[{"input": "1", "output": "1", "testtype": "stdin"}]', "row 1"), [{ input: "1", output: "1", testtype: "stdin" }]);
  // A pickle of something other than a str (here an int: protocol 4, BININT1 5) is refused by name.
  assert.throws(() => unpickleString(Uint8Array.from([0x80, 0x04, 0x4b, 0x05, 0x2e]), "row 2"), /row 2: pickle opcode 0x4b is not part of a pickled str/);
  assert.throws(() => decodeLiveCodeBenchTests("bm90IHpsaWI=", "row 3"), /row 3.*neither JSON nor base64 zlib/);
});

test("LiveCodeBench from the (fake) hub: public and private tests, stdin programs and LeetCode functions", async () => {
  const lcb = parquet({
    question_id: ["abc001_a", "lc-add"],
    question_title: ["Sum", "Add"],
    question_content: ["Read two integers and print their sum.", "Return a + b."],
    platform: ["atcoder", "leetcode"],
    starter_code: ["", "class Solution:\n    def add(self, a: int, b: int) -> int:\n        "],
    public_test_cases: [
      JSON.stringify([{ input: "1 1\n", output: "2\n", testtype: "stdin" }]),
      JSON.stringify([{ input: "1\n2", output: "3", testtype: "functional" }]),
    ],
    private_test_cases: [PICKLED_STDIN, PICKLED_FUNCTIONAL],
    metadata: ["{}", JSON.stringify({ func_name: "add" })],
  });
  const hub = await startFakeHub({
    datasets: { "livecodebench/code_generation_lite": { sha: "3".repeat(40), files: { "data/test-00000-of-00001.parquet": lcb } } },
  });
  try {
    const env = { HF_ENDPOINT: hub.url, HF_HOME: mkdtempSync(join(tmpdir(), "hfhome-")) };
    const [stdin, leetcode] = await readLiveCodeBench({ hub: { env, log: () => undefined } });
    assert.equal(stdin!.id, "abc001_a");
    assert.equal(testCount(stdin!), 3);
    assert.deepEqual(await testsOf(stdin!), [
      { kind: "stdin_stdout", input: "1 1\n", output: "2\n" },
      { kind: "stdin_stdout", input: "2 3\n", output: "5\n" },
      { kind: "stdin_stdout", input: "10 -4\n", output: "6\n" },
    ]);
    assert.match(stdin!.prompt, /Read the inputs from stdin/);
    assert.deepEqual(await testsOf(leetcode!), [
      { kind: "functional", fn: "add", input: "1\n2", output: "3" },
      { kind: "functional", fn: "add", input: "7\n8", output: "15" },
    ]);
    assert.match(leetcode!.prompt, /starter code[\s\S]*class Solution:/);
  } finally {
    await hub.close();
  }
});
