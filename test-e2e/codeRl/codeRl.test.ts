// code_rl and the code benchmarks with the real sandbox and python3: the shipped tasks' hidden
// tests tell the operators apart, the environment's reward and transcript, MBPP and HumanEval
// graded offline from local parquet, and a short code_rl run on a small random model.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";
import { CODE_OPS, codeReply } from "../../src/data/synthetic/codeTasks.ts";
import { fixtureDataPath } from "../../src/data/fixtures.ts";
import { gradeCode } from "../../src/grading/code.ts";
import { readCodeTasksJsonl } from "../../src/grading/codeTasks.ts";
import { CodeEnv } from "../../src/rl/envs/code.ts";
import { getRenderer } from "../../src/renderers/registry.ts";
import { getTokenizer } from "../../src/tokenizers/index.ts";
import { resolveBenchmark } from "../../src/eval/registry.ts";
import { resolveBenchmarkConfig } from "../../src/eval/benchmark.ts";
import { runBenchmark } from "../../src/eval/runner.ts";
import { fakeRenderer } from "../../test/eval/fakes.ts";
import { modelInputToInts } from "../../src/tinker/modelInput.ts";
import type { SamplingClient } from "../../src/tinker/clients.ts";
import type { ModelInput, SampleResponse } from "../../src/tinker/types.ts";
import { recipeSandbox, runRecipe } from "../../test/recipes/helpers.ts";

test("each shipped task's hidden tests pass its own operator and fail every other", async () => {
  const lines = readFileSync(fixtureDataPath("code_tasks_train.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id: string; op: string });
  const tasks = readCodeTasksJsonl(fixtureDataPath("code_tasks_train.jsonl"));
  for (const symbol of CODE_OPS.map((o) => o.symbol)) {
    const i = lines.findIndex((l) => l.op === symbol);
    const task = tasks[i]!;
    for (const op of CODE_OPS) {
      const code = codeReply(op.symbol).replace(/^```python\n|\n```$/g, "");
      const g = await gradeCode(code, task.tests);
      if (op.symbol === symbol) assert.equal(g.allPassed, true, `${task.id} (${symbol}) with its own operator: ${JSON.stringify(g.tests)}`);
      else assert.equal(g.allPassed, false, `${task.id} (${symbol}) passed with ${op.symbol}`);
    }
  }
});

test("the environment: reward, format penalty, per-test transcript, hostile replies contained", async () => {
  const tokenizer = await getTokenizer("tiny-chat");
  const renderer = getRenderer("role_colon", tokenizer);
  const [task] = readCodeTasksJsonl(fixtureDataPath("code_tasks_test.jsonl"), "short");
  const op = (JSON.parse(readFileSync(fixtureDataPath("code_tasks_test.jsonl"), "utf8").split("\n")[0]!) as { op: string }).op;
  const reply = async (text: string, reward: "all" | "fraction" = "all") => {
    const env = new CodeEnv(renderer, task!, { formatCoef: 0.1, reward, testTimeoutSeconds: 1 });
    await env.initialObservation();
    const tokens = tokenizer.encode(`${text}\n\nUser:`, { add_special_tokens: false } as never) as number[];
    return env.step(tokens, { stopReason: "stop" });
  };
  const right = await reply(codeReply(op));
  assert.equal(right.reward, 1);
  assert.equal(right.metrics?.["tests_passed"], 1);
  assert.equal(right.metrics?.["sandbox/ok"], 1);
  const last = right.messages!.at(-1)!;
  assert.equal(last.role, "environment");
  assert.match(String(last.content), /^5\/5 tests passed[\s\S]*test 5 passed/);
  const none = await reply("I would add them.");
  assert.equal(none.reward, -0.1);
  assert.equal(none.metrics?.["sandbox/not_run"], 1);
  const loop = await reply("```python\ndef solve(a, b):\n    while True:\n        pass\n```", "fraction");
  assert.equal(loop.reward, 0);
  assert.match(String(loop.messages!.at(-1)!.content), /test 1 timeout/);
  const escaped = await reply("```python\nimport os\nos.system('rm -rf ~')\ndef solve(a, b):\n    return open('/etc/passwd').read()\n```");
  assert.equal(escaped.reward, 0);
});

class ScriptedSampler implements SamplingClient {
  readonly baseModel = "fake-model";
  constructor(private readonly reply: (prompt: string) => string) {}
  async sample(prompt: ModelInput, n: number): Promise<SampleResponse> {
    const text = this.reply(String.fromCharCode(...modelInputToInts(prompt)));
    return { sequences: Array.from({ length: n }, () => ({ stop_reason: "stop" as const, tokens: [...text].map((c) => c.charCodeAt(0)) })) };
  }
  async computeLogprobs(): Promise<(number | null)[]> {
    return [];
  }
}

function parquet(columns: Record<string, string[]>): Uint8Array {
  return new Uint8Array(parquetWriteBuffer({ columnData: Object.entries(columns).map(([name, data]) => ({ name, data, type: "STRING" as const })) }));
}

test("MBPP and HumanEval in cookbook eval: graded in the sandbox from local parquet", async () => {
  const s = recipeSandbox("code-bench");
  try {
    const mbppDir = join(s.root, "mbpp");
    mkdirSync(join(mbppDir, "full"), { recursive: true });
    writeFileSync(
      join(mbppDir, "full", "test-00000-of-00001.parquet"),
      parquet({
        task_id: ["1", "2"],
        text: ["Write a function to double a number.", "Write a function to square a number."],
        test_list: [JSON.stringify(["assert double(2) == 4", "assert double(5) == 10"]), JSON.stringify(["assert square(3) == 9", "assert square(4) == 16"])],
        test_setup_code: ["", ""],
      }),
    );
    const mbpp = resolveBenchmark(`mbpp:${mbppDir}`);
    const sampler = new ScriptedSampler((p) =>
      p.includes("double") ? "```python\ndef double(x):\n    return 2 * x\n```" : "```python\ndef square(x):\n    return x + x\n```",
    );
    const r = await runBenchmark({
      benchmark: mbpp,
      config: resolveBenchmarkConfig(mbpp.defaults, { concurrency: 2 }),
      samplingClient: sampler,
      renderer: fakeRenderer,
    });
    assert.equal(r.metrics["accuracy"], 0.5);
    assert.deepEqual(
      r.records.map((x) => x.samples[0]!.correct),
      [true, false],
    );

    const heDir = join(s.root, "humaneval");
    mkdirSync(join(heDir, "openai_humaneval"), { recursive: true });
    writeFileSync(
      join(heDir, "openai_humaneval", "test-00000-of-00001.parquet"),
      parquet({
        task_id: ["HumanEval/0"],
        prompt: ['def inc(x):\n    """x plus one"""\n'],
        entry_point: ["inc"],
        test: ["def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(-1) == 0\n"],
        canonical_solution: ["    return x + 1\n"],
      }),
    );
    const he = resolveBenchmark(`humaneval:${heDir}`);
    for (const [reply, ok] of [
      ["```python\nreturn x + 1\n```", true],
      ["```python\ndef inc(x):\n    return x + 2\n```", false],
      ["x + 1", false],
    ] as const) {
      const res = await runBenchmark({
        benchmark: he,
        config: resolveBenchmarkConfig(he.defaults, { num_samples: 2 }),
        samplingClient: new ScriptedSampler(() => reply),
        renderer: fakeRenderer,
      });
      assert.equal(res.metrics["accuracy"], ok ? 1 : 0, reply);
      assert.equal(res.metrics["pass@2"], ok ? 1 : 0);
    }
  } finally {
    s.cleanup();
  }
});

test("LiveCodeBench in cookbook eval: stdin programs and LeetCode functions graded in the sandbox, private tests included", async () => {
  const s = recipeSandbox("code-lcb");
  try {
    const dir = join(s.root, "lcb");
    mkdirSync(join(dir, "data"), { recursive: true });
    // The private tests as LiveCodeBench stores them, made by Python: base64(zlib(pickle(json))).
    const privateStdin = "eJxrYJlaxQABPWXR1UqZeQWlJUpWCkpGCsYxeUo6Ckr5pSVQIVOIQElqcUlJZUEqSKi4JCUzT6lWRwFJp6GBgq4Jul4znHpjp+gBALTqJsw=";
    const privateFunctional = "eJxrYJnqyAABPbbR1UqZeQWlJUpWCkrmMXkWSjoKSvmlJVARQ1MQvyS1uKSksiAVJJJWmpdckpmfl5ijVBs7RQ8A+UkWCQ==";
    writeFileSync(
      join(dir, "data", "test-00000-of-00001.parquet"),
      parquet({
        question_id: ["abc001_a", "lc-add"],
        question_content: ["Read two integers and print their sum.", "Return a + b."],
        starter_code: ["", "class Solution:\n    def add(self, a: int, b: int) -> int:\n        "],
        public_test_cases: [
          JSON.stringify([{ input: "1 1\n", output: "2\n", testtype: "stdin" }]),
          JSON.stringify([{ input: "1\n2", output: "3", testtype: "functional" }]),
        ],
        private_test_cases: [privateStdin, privateFunctional],
        metadata: ["{}", JSON.stringify({ func_name: "add" })],
      }),
    );
    const lcb = resolveBenchmark(`livecodebench:${dir}`);
    const run = (stdinReply: string, leetcodeReply: string) =>
      runBenchmark({
        benchmark: lcb,
        config: resolveBenchmarkConfig(lcb.defaults, { concurrency: 2 }),
        samplingClient: new ScriptedSampler((p) => (p.includes("class Solution") ? leetcodeReply : stdinReply)),
        renderer: fakeRenderer,
      });
    const right = await run(
      "```python\na, b = map(int, input().split())\nprint(a + b)\n```",
      "```python\nclass Solution:\n    def add(self, a: int, b: int) -> int:\n        return a + b\n```",
    );
    assert.equal(right.metrics["accuracy"], 1);
    // Right on the public test only (1 + 1 = 2 = 2 * 1): the private tests catch it.
    const publicOnly = await run(
      "```python\na, b = map(int, input().split())\nprint(2 * a)\n```",
      "```python\nclass Solution:\n    def add(self, a: int, b: int) -> int:\n        return 3\n```",
    );
    assert.equal(publicOnly.metrics["accuracy"], 0);
  } finally {
    s.cleanup();
  }
});

test("code_rl trains on the embedded engine: warm-up, RL steps, evaluation, per-test transcripts", { timeout: 300_000 }, async () => {
  const s = recipeSandbox("code-rl");
  try {
    const logDir = join(s.root, "run");
    await runRecipe("code_rl", [
      `model_name=${s.modelDir}`,
      `log_path=${logDir}`,
      "group_size=2",
      "groups_per_batch=2",
      "max_tokens=30",
      "lora_rank=4",
      "behavior_if_log_dir_exists=delete",
      "warmup_steps=2",
      "warmup_batch_size=2",
      "max_steps=2",
      "test_problems=2",
      "eval_every=1",
    ]);
    const rows = readFileSync(join(logDir, "metrics.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, number>);
    // Two steps, then the evaluation of the final weights at step 2.
    assert.deepEqual(
      rows.map((r) => r["step"]),
      [0, 1, 2],
    );
    assert.ok("test/env/all/correct" in rows[2]!);
    for (const key of ["env/all/reward/total", "env/all/format", "env/all/tests_passed", "env/all/sandbox/not_run", "test/env/all/correct"])
      assert.ok(key in rows[0]!, `${key} in metrics`);
    const iter = readdirSync(logDir)
      .filter((d) => d.startsWith("iteration_"))
      .sort()[0]!;
    const summaries = readFileSync(join(logDir, iter, "train_rollout_summaries.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { response: string });
    assert.ok(
      summaries.every((x) => x.response.includes("environment (tests): ")),
      summaries[0]!.response,
    );
    assert.ok(readFileSync(join(`${logDir}-warmup`, "warmup.json"), "utf8").includes("code_rl format warm-up"));
  } finally {
    s.cleanup();
  }
});

test("cookbook play code_rl: a typed reply (\\n for line breaks) is graded and the tests' outcomes shown", async () => {
  const { runPlay } = await import("../../src/commands/play.ts");
  const totals: number[] = [];
  let shown = "";
  for (const op of CODE_OPS) {
    let out = "";
    const line = codeReply(op.symbol).replace(/\n/g, "\\n");
    totals.push(
      await runPlay("code_rl", [], {
        lines: (async function* () {
          yield line;
        })(),
        write: (t) => {
          out += t;
        },
      }),
    );
    if (totals.at(-1) === 1) shown = out;
  }
  assert.deepEqual([...totals].sort(), [0, 0, 0, 0, 0, 1], "exactly one operator solves the first task");
  assert.match(shown, /── environment ──\nenvironment \(tests\): 5\/5 tests passed[\s\S]*test 5 passed/);
});
