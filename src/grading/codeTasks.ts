// Code problems with hidden tests, from where they come (docs/code-rl.md#data): the project's own
// JSONL (one task per line, tests already in our shapes), DeepCoder-style rows (the cookbook's
// agentica-org/DeepCoder-Preview-Dataset: `problem`, `tests` as JSON in the LiveCodeBench or TACO
// shape, `starter_code`, `metadata`), MBPP (assert lines) and HumanEval (a `check(candidate)`
// function). Hub ids go through src/hf (local folder, HF cache, then the hub); errors name the
// file and line or row.
import { readJsonlObjects } from "../files/jsonlInput.ts";
import { inflateSync } from "node:zlib";
import type { HubOptions } from "../hf/datasets.ts";
import { readParquetRowRange, readSplitRows, streamSplitRows } from "../hf/parquetRows.ts";
import type { CodeTest } from "./code.ts";

/**
 * Tests read back from their parquet row when the task is graded: DeepCoder's and LiveCodeBench's
 * tests are gigabytes, so a loader keeps only each task's file and row (docs/code-rl.md#data).
 */
export interface LazyCodeTests {
  count: number;
  load(): Promise<CodeTest[]>;
}

export interface CodeTask {
  id: string;
  /** The full user message: statement, format instructions and starter code. */
  prompt: string;
  tests: CodeTest[] | LazyCodeTests;
  /** Python run before the solution (MBPP's test_setup_code). */
  setup?: string;
  /** HumanEval: the function's signature and docstring, put before a reply that omits them. */
  completionPrefix?: { entryPoint: string; prefix: string };
  source: string;
}

/** A task whose tests are in memory (the shipped tasks, MBPP, HumanEval). */
export type LoadedCodeTask = CodeTask & { tests: CodeTest[] };

export class CodeTaskError extends Error {
  override name = "CodeTaskError";
}

/** A task's tests, read from their row when they are not in memory. */
export function testsOf(task: CodeTask): Promise<CodeTest[]> {
  return Array.isArray(task.tests) ? Promise.resolve(task.tests) : task.tests.load();
}

export function testCount(task: CodeTask): number {
  return Array.isArray(task.tests) ? task.tests.length : task.tests.count;
}

/** Tasks read back recently: a group's members and a retried task share one read. */
const RECENT_TESTS = 64;

/**
 * Rows of a split streamed one row group at a time; each kept row's tests are parsed once to
 * check and count them, then dropped, and read again from the row when `load` is called.
 */
async function lazyTaskRows<T>(
  ref: { path: string; name: string | null; split: string },
  hub: HubOptions,
  task: (values: Record<string, unknown>, where: string) => (T & { tests: CodeTest[] }) | null,
): Promise<(T & { tests: LazyCodeTests })[]> {
  const recent = new Map<string, Promise<CodeTest[]>>();
  const out: (T & { tests: LazyCodeTests })[] = [];
  for await (const { file, row, values } of streamSplitRows(ref, undefined, hub)) {
    const where = `${file} row ${row}`;
    const made = task(values, where);
    if (made === null) continue;
    const load = (): Promise<CodeTest[]> => {
      const key = `${file}#${row}`;
      let tests = recent.get(key);
      if (tests === undefined) {
        tests = readParquetRowRange(file, row, row + 1).then((rows) => {
          const again = rows[0] === undefined ? null : task(rows[0].values, where);
          if (again === null) throw new CodeTaskError(`${where}: the row changed since it was read (no tests now)`);
          return again.tests;
        });
        tests.catch(() => recent.delete(key));
        recent.set(key, tests);
        if (recent.size > RECENT_TESTS) recent.delete(recent.keys().next().value!);
      }
      return tests;
    };
    out.push({ ...made, tests: { count: made.tests.length, load } });
  }
  return out;
}

// The cookbook's LiveCodeBench prompt (docs/code-rl.md#prompt-and-reward), in our words where the
// words are ours and the benchmark's where the model is meant to recognise them.
const SYSTEM_LINE =
  "You are an expert Python programmer. You will be given a question (problem specification) and will generate a correct Python program that matches the specification and passes all tests.";
const WITH_STARTER = "You will use the following starter code to write the solution to the problem and enclose your code within delimiters.";
const WITHOUT_STARTER =
  "Read the inputs from stdin solve the problem and write the answer to stdout (do not directly test on the sample inputs). Enclose your code within delimiters as follows. Ensure that when the python program runs, it reads the inputs, runs the algorithm and writes output to STDOUT.";

/** The LiveCodeBench-style user message for a statement and optional starter code. */
export function codePrompt(statement: string, starterCode?: string | null): string {
  let text = `${SYSTEM_LINE}\n\n${statement.endsWith("\n") ? statement : `${statement}\n\n`}`;
  if (starterCode !== undefined && starterCode !== null && starterCode.trim() !== "")
    text += `### Format: ${WITH_STARTER}\n\`\`\`python\n${starterCode}\n\`\`\`\n\n`;
  else text += `### Format: ${WITHOUT_STARTER}\n\`\`\`python\n# YOUR CODE HERE\n\`\`\`\n\n`;
  return `${text}### Answer: (use the provided format with backticks)\n\n`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function parseTest(raw: unknown, where: string): CodeTest {
  if (!isRecord(raw)) throw new CodeTaskError(`${where}: a test must be an object with "kind"`);
  const str = (key: string): string => {
    const v = raw[key];
    if (typeof v !== "string")
      throw new CodeTaskError(`${where}: test field "${key}" must be a string, got ${v === undefined ? "nothing" : JSON.stringify(v)}`);
    return v;
  };
  switch (raw["kind"]) {
    case "stdin_stdout":
      return { kind: "stdin_stdout", input: str("input"), output: str("output") };
    case "functional":
      return { kind: "functional", fn: str("fn"), input: str("input"), output: str("output") };
    case "assert":
      return { kind: "assert", code: str("code") };
    default:
      throw new CodeTaskError(`${where}: test "kind" must be stdin_stdout, functional or assert, got ${JSON.stringify(raw["kind"])}`);
  }
}

/** A short user message for small models: the statement, then the block to write. */
export function shortCodePrompt(statement: string, starterCode?: string | null): string {
  const start = starterCode !== undefined && starterCode !== null && starterCode.trim() !== "" ? `, starting with ${starterCode.trim()}` : "";
  return `${statement.trim()}\nReply with a \`\`\`python code block${start}.`;
}

export type CodePromptStyle = "lcb" | "short";

/**
 * `{"id", "question", "starter_code"?, "tests": [...]}` per line (the shipped tasks' format), asked
 * with the LiveCodeBench prompt or the short one.
 */
export function readCodeTasksJsonl(path: string, style: CodePromptStyle = "lcb"): LoadedCodeTask[] {
  const rows = readJsonlObjects(path, 'an object with "question" and "tests"', { makeError: (m) => new CodeTaskError(m) });
  const out = rows.map(({ where, line, row }) => {
    const question = row["question"];
    if (typeof question !== "string" || question.trim() === "") throw new CodeTaskError(`${where}: "question" must be a non-empty string`);
    const tests = row["tests"];
    if (!Array.isArray(tests) || tests.length === 0) throw new CodeTaskError(`${where}: "tests" must be a non-empty list`);
    const starter = row["starter_code"];
    if (starter !== undefined && starter !== null && typeof starter !== "string") throw new CodeTaskError(`${where}: "starter_code" must be a string`);
    return {
      id: String(row["id"] ?? line),
      prompt: (style === "lcb" ? codePrompt : shortCodePrompt)(question, starter ?? null),
      tests: tests.map((t, k) => parseTest(t, `${where} tests[${k}]`)),
      source: path,
    };
  });
  if (out.length === 0) throw new CodeTaskError(`${path}: no tasks`);
  return out;
}

/** A split's rows, each with where it came from (errors name the file and row). */
async function parquetRows(path: string, name: string | null, split: string, hub: HubOptions): Promise<{ where: string; values: Record<string, unknown> }[]> {
  const rows = await readSplitRows({ path, name, split }, undefined, hub);
  return rows.map((r) => ({ where: `${r.file} row ${r.row}`, values: r.values }));
}

function text(values: Record<string, unknown>, key: string, where: string): string {
  const v = values[key];
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  throw new CodeTaskError(`${where}: column "${key}" must be a string, got ${v === undefined ? "nothing" : JSON.stringify(v)}`);
}

function stringList(values: Record<string, unknown>, key: string, where: string): string[] {
  // Some parquet writers store a list column as its JSON text.
  const v = typeof values[key] === "string" ? jsonish(values[key]) : values[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) throw new CodeTaskError(`${where}: column "${key}" must be a list of strings`);
  return v;
}

function jsonish(v: unknown): unknown {
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v);
  } catch {
    return undefined;
  }
}

/** DeepCoder's `tests` (LiveCodeBench list, or TACO's {inputs, outputs, fn_name}) in our shapes. */
export function normalizeDeepcoderTests(rawTests: unknown, metadata: unknown): CodeTest[] {
  let tests = jsonish(rawTests);
  const meta = jsonish(metadata);
  const metaFn = isRecord(meta) && typeof meta["func_name"] === "string" ? meta["func_name"] : null;
  if (isRecord(tests) && Array.isArray(tests["inputs"]) && Array.isArray(tests["outputs"])) {
    const inputs = tests["inputs"] as unknown[];
    const outputs = tests["outputs"] as unknown[];
    const fn = typeof tests["fn_name"] === "string" ? tests["fn_name"] : null;
    tests = Array.from({ length: Math.max(inputs.length, outputs.length) }, (_, i) => {
      const out = outputs[i] ?? outputs[0] ?? "";
      return {
        input: inputs[i] ?? inputs[0] ?? "",
        output: Array.isArray(out) ? (out[0] ?? "") : out,
        testtype: fn === null ? "stdin_stdout" : "functional",
        metadata: { func_name: fn },
      };
    });
  }
  if (isRecord(tests)) tests = [tests];
  if (!Array.isArray(tests)) return [];
  const out: CodeTest[] = [];
  for (const t of tests) {
    if (!isRecord(t)) continue;
    const asText = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v ?? ""));
    const tmeta = jsonish(t["metadata"]);
    const fn = (isRecord(tmeta) && typeof tmeta["func_name"] === "string" ? tmeta["func_name"] : null) ?? metaFn;
    if (t["testtype"] === "functional") {
      if (fn !== null) out.push({ kind: "functional", fn, input: asText(t["input"]), output: asText(t["output"]) });
    } else {
      out.push({ kind: "stdin_stdout", input: asText(t["input"]), output: asText(t["output"]) });
    }
  }
  return out;
}

export const DEEPCODER_REPO = "agentica-org/DeepCoder-Preview-Dataset";
/** The cookbook's subsets: primeintellect, taco and lcbv5 for training; codeforces and lcbv5 for testing. */
export const DEEPCODER_SUBSETS: Record<"train" | "test", string[]> = { train: ["primeintellect", "taco", "lcbv5"], test: ["codeforces", "lcbv5"] };

/**
 * DeepCoder-style rows of one split (rows without usable tests or statement are skipped, as the
 * cookbook does). The split is streamed; each task's tests are read from its row when graded.
 */
export async function readDeepcoder(split: "train" | "test", options: { path?: string; subsets?: string[]; hub?: HubOptions } = {}): Promise<CodeTask[]> {
  const path = options.path ?? DEEPCODER_REPO;
  const out: CodeTask[] = [];
  for (const subset of options.subsets ?? DEEPCODER_SUBSETS[split]) {
    const tasks = await lazyTaskRows({ path, name: subset, split }, options.hub ?? {}, (values, where) => {
      const statement = [values["question"], values["prompt"], values["problem"]].find((v): v is string => typeof v === "string" && v.trim() !== "");
      const tests = normalizeDeepcoderTests(values["tests"] ?? values["ground_truth"], values["metadata"]);
      if (statement === undefined || tests.length === 0) return null;
      const starter = typeof values["starter_code"] === "string" ? values["starter_code"] : null;
      return { prompt: codePrompt(statement, starter), tests, source: where };
    });
    for (const t of tasks) out.push({ id: `${subset}/${out.length}`, ...t });
  }
  if (out.length === 0)
    throw new CodeTaskError(`${path}: no ${split} rows with a statement and tests in ${(options.subsets ?? DEEPCODER_SUBSETS[split]).join(", ")}`);
  return out;
}

export const MBPP_REPO = "google-research-datasets/mbpp";

/** MBPP (config `full`: text, test_list, test_setup_code): the first assert is shown, every assert is a test. */
export async function readMbpp(split: string, options: { path?: string; config?: string; hub?: HubOptions } = {}): Promise<LoadedCodeTask[]> {
  const path = options.path ?? MBPP_REPO;
  const rows = await parquetRows(path, options.config ?? "full", split, options.hub ?? {});
  return rows.map(({ where, values }) => {
    const statement = typeof values["text"] === "string" ? values["text"] : text(values, "prompt", where);
    const asserts = stringList(values, "test_list", where);
    if (asserts.length === 0) throw new CodeTaskError(`${where}: "test_list" has no asserts`);
    const setup = [...stringList(values, "test_imports", where), typeof values["test_setup_code"] === "string" ? values["test_setup_code"] : ""]
      .join("\n")
      .trim();
    return {
      id: String(values["task_id"] ?? where),
      prompt: `${SYSTEM_LINE}\n\n${statement}\nYour code should pass tests like this:\n${asserts[0]}\n\nWrite the function in a \`\`\`python code block.`,
      tests: asserts.map((code): CodeTest => ({ kind: "assert", code })),
      ...(setup !== "" ? { setup } : {}),
      source: where,
    };
  });
}

export const LIVECODEBENCH_REPO = "livecodebench/code_generation_lite";

/**
 * The one pickled value LiveCodeBench stores: a str, pickled by Python (protocol 2 to 5), holding
 * JSON. Only the opcodes that spell a single str are read; anything else is refused by name.
 */
export function unpickleString(bytes: Uint8Array, where: string): string {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  let value: string | null = null;
  const take = (n: number): Uint8Array => {
    if (at + n > bytes.length) throw new CodeTaskError(`${where}: the pickle ends early`);
    const out = bytes.subarray(at, at + n);
    at += n;
    return out;
  };
  const text = (n: number): string => new TextDecoder("utf-8", { fatal: true }).decode(take(n));
  for (;;) {
    const op = take(1)[0]!;
    if (op === 0x80)
      at += 1; // PROTO
    else if (op === 0x95)
      at += 8; // FRAME
    else if (op === 0x94)
      continue; // MEMOIZE
    else if (op === 0x8c)
      value = text(take(1)[0]!); // SHORT_BINUNICODE
    else if (op === 0x58)
      value = text(view.getUint32(take(4).byteOffset - bytes.byteOffset, true)); // BINUNICODE
    else if (op === 0x8d)
      value = text(Number(view.getBigUint64(take(8).byteOffset - bytes.byteOffset, true))); // BINUNICODE8
    else if (op === 0x2e)
      break; // STOP
    else throw new CodeTaskError(`${where}: pickle opcode 0x${op.toString(16)} is not part of a pickled str (expected LiveCodeBench's encoded test list)`);
  }
  if (value === null) throw new CodeTaskError(`${where}: the pickle holds no str`);
  return value;
}

/** LiveCodeBench's `private_test_cases`: JSON, pickled, zlib-compressed and base64-encoded (or plain JSON in older rows). */
export function decodeLiveCodeBenchTests(encoded: string, where: string): unknown {
  const trimmed = encoded.trim();
  if (trimmed.startsWith("[") || trimmed === "") return trimmed === "" ? [] : JSON.parse(trimmed);
  let json: string;
  try {
    json = unpickleString(inflateSync(Buffer.from(trimmed, "base64")), where);
  } catch (err) {
    if (err instanceof CodeTaskError) throw err;
    throw new CodeTaskError(`${where}: private_test_cases is neither JSON nor base64 zlib (${(err as Error).message})`);
  }
  return JSON.parse(json);
}

/**
 * LiveCodeBench code generation (code_generation_lite, split test): the statement with its
 * starter code in the LiveCodeBench prompt; the public and the private tests are all hidden tests.
 */
export async function readLiveCodeBench(options: { path?: string; hub?: HubOptions } = {}): Promise<CodeTask[]> {
  const path = options.path ?? LIVECODEBENCH_REPO;
  return lazyTaskRows({ path, name: null, split: "test" }, options.hub ?? {}, (values, where) => {
    const statement = text(values, "question_content", where);
    const publicTests = jsonish(values["public_test_cases"]);
    const privateTests =
      typeof values["private_test_cases"] === "string" ? decodeLiveCodeBenchTests(values["private_test_cases"], `${where} private_test_cases`) : [];
    const all = [...(Array.isArray(publicTests) ? publicTests : []), ...(Array.isArray(privateTests) ? privateTests : [])];
    const tests = normalizeDeepcoderTests(all, values["metadata"]);
    if (tests.length === 0) throw new CodeTaskError(`${where}: no usable tests in public_test_cases / private_test_cases`);
    const starter = typeof values["starter_code"] === "string" ? values["starter_code"] : null;
    return { id: String(values["question_id"] ?? where), prompt: codePrompt(statement, starter), tests, source: where };
  });
}

export const HUMANEVAL_REPO = "openai/openai_humaneval";

/** HumanEval (split test): complete the function; its `check(candidate)` is one test. */
export async function readHumanEval(options: { path?: string; hub?: HubOptions } = {}): Promise<LoadedCodeTask[]> {
  const path = options.path ?? HUMANEVAL_REPO;
  const rows = await parquetRows(path, null, "test", options.hub ?? {});
  return rows.map(({ where, values }) => {
    const prefix = text(values, "prompt", where);
    const entryPoint = text(values, "entry_point", where);
    return {
      id: text(values, "task_id", where),
      prompt: `Complete the following Python function. Reply with the whole function in a \`\`\`python code block.\n\n\`\`\`python\n${prefix}\`\`\``,
      tests: [{ kind: "assert", code: `${text(values, "test", where)}\n\ncheck(${entryPoint})\n` }],
      completionPrefix: { entryPoint, prefix },
      source: where,
    };
  });
}

/** The program to run for a reply's code: HumanEval replies that give only the body get the signature back. */
export function solutionSource(task: CodeTask, code: string): string {
  const c = task.completionPrefix;
  if (c === undefined || new RegExp(`def\\s+${c.entryPoint}\\s*\\(`).test(code)) return code;
  const body = code
    .split("\n")
    .map((l) => (l.startsWith(" ") || l.trim() === "" ? l : `    ${l}`))
    .join("\n");
  return `${c.prefix}${body}\n`;
}
