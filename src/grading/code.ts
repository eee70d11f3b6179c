// Grading code (docs/code-rl.md#grading-code): the last fenced block of a response is the solution;
// it runs against hidden tests in the sandbox (src/sandbox), all tests of one solution in one
// sandboxed run, as the cookbook does with one SandboxFusion call per solution. Each test gets a
// status; a test with no result (the run was killed before it) takes the run's status.
import { randomBytes } from "node:crypto";
import { runSandboxed, type SandboxLimits, type SandboxResult } from "../sandbox/index.ts";
import { HARNESS_PY } from "./codeHarness.ts";

export type CodeTest =
  | { kind: "stdin_stdout"; input: string; output: string }
  | { kind: "functional"; fn: string; input: string; output: string }
  | { kind: "assert"; code: string };

export type TestStatus = "passed" | "wrong" | "error" | "timeout" | "memory" | "output_limit" | "not_run";

export interface TestOutcome {
  index: number;
  status: TestStatus;
  detail: string;
}

export interface CodeGrade {
  passed: number;
  total: number;
  /** Every test passed (the cookbook's `correct`). */
  allPassed: boolean;
  tests: TestOutcome[];
  /** The sandboxed run (status, limits hit, what isolation was applied). */
  run: Pick<SandboxResult, "status" | "reason" | "wallMs" | "isolation">;
}

/** The last fenced code block (```lang … ```), trimmed, or null when there is none. */
export function extractCodeBlock(response: string): string | null {
  const blocks = [...response.matchAll(/```[A-Za-z0-9_+-]*[ \t]*\n([\s\S]*?)```/g)];
  const last = blocks.at(-1);
  return last === undefined ? null : last[1]!.trim();
}

export interface GradeCodeOptions {
  /** Seconds each test may run (the cookbook's per-test `timeout`, default 6). */
  testTimeoutSeconds?: number;
  /** Python run before the solution (MBPP's test_setup_code). */
  setup?: string;
  limits?: Partial<SandboxLimits>;
}

/** Parses the harness's result lines (those starting with `token`) into one outcome per test. */
export function parseHarnessOutput(stdout: string, token: string, total: number, run: Pick<SandboxResult, "status" | "reason">): TestOutcome[] {
  const byIndex = new Map<number, TestOutcome>();
  for (const line of stdout.split("\n")) {
    if (!line.startsWith(token)) continue;
    try {
      const r = JSON.parse(line.slice(token.length)) as { index?: unknown; status?: unknown; detail?: unknown };
      if (typeof r.index !== "number" || !["passed", "wrong", "error", "timeout"].includes(String(r.status))) continue;
      byIndex.set(r.index, { index: r.index, status: r.status as TestStatus, detail: typeof r.detail === "string" ? r.detail : "" });
    } catch {
      // a line cut by the output cap
    }
  }
  const missing: TestStatus = run.status === "timeout" || run.status === "memory" || run.status === "output_limit" ? run.status : "not_run";
  return Array.from({ length: total }, (_, index) => byIndex.get(index) ?? { index, status: missing, detail: run.reason });
}

/** Runs `code` against `tests` in the sandbox. Never throws for what the code does. */
export async function gradeCode(code: string, tests: readonly CodeTest[], options: GradeCodeOptions = {}): Promise<CodeGrade> {
  const perTest = options.testTimeoutSeconds ?? 6;
  const token = `@@result-${randomBytes(8).toString("hex")}@@`;
  // The cookbook's total budget: (per-test + 1) × tests + 5 seconds.
  const wall = (perTest + 1) * tests.length + 5;
  const result = await runSandboxed({
    language: "python",
    code: HARNESS_PY,
    files: { "tests.json": JSON.stringify({ setup: options.setup ?? "", tests }), "solution.py": code },
    args: [token, String(perTest)],
    limits: { wallSeconds: wall, cpuSeconds: wall, outputBytes: 256 * 1024, ...options.limits },
  });
  const outcomes = parseHarnessOutput(result.stdout, token, tests.length, result);
  const passed = outcomes.filter((t) => t.status === "passed").length;
  return {
    passed,
    total: tests.length,
    allPassed: tests.length > 0 && passed === tests.length,
    tests: outcomes,
    run: { status: result.status, reason: result.reason, wallMs: result.wallMs, isolation: result.isolation },
  };
}

/** Per-test lines for transcripts: "test 1 passed", "test 2 wrong: got 5, expected 6". */
export function describeGrade(grade: CodeGrade): string {
  const lines = grade.tests.map((t) => `test ${t.index + 1} ${t.status}${t.status === "passed" || t.detail === "" ? "" : `: ${t.detail}`}`);
  return [`${grade.passed}/${grade.total} tests passed (sandbox: ${grade.run.status}, ${grade.run.wallMs} ms)`, ...lines].join("\n");
}
