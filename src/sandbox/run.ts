// Runs untrusted code (Python 3 or Node) in a child process with limits (docs/code-rl.md#the-sandbox):
// wall clock (a timer here), CPU seconds, memory, process count, file size and open files
// (rlimits through prlimit), output size (counted here; the program is killed past the cap), no
// network, its own /proc and a read-only filesystem except its working directory (namespaces
// through unshare), its own uid when we are root (setpriv), and an environment with nothing of
// ours in it. The working directory is temporary and removed afterwards. Every result says which
// of these were applied and which this machine could not apply.
import { spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { randomInt } from "node:crypto";
import { Semaphore } from "../async/concurrency.ts";
import { NAMESPACE_SCRIPT, SANDBOX_MARKER, findExecutable, namespaceArgs, sandboxCapabilities, tasksOfUser } from "./capabilities.ts";

export type SandboxLanguage = "python" | "node";
export type SandboxStatus = "ok" | "timeout" | "memory" | "output_limit" | "error";
/** Which limit ended the run, when one did. */
export type SandboxLimitHit = "wall" | "cpu" | "memory" | "output" | "file_size" | "processes";

export interface SandboxLimits {
  wallSeconds: number;
  cpuSeconds: number;
  memoryMb: number;
  /** Processes (and threads) the program may run at once, itself included. */
  maxProcesses: number;
  /** stdout + stderr bytes kept; the program is killed once it writes more. */
  outputBytes: number;
  /** Largest file the program may write. */
  fileBytes: number;
  openFiles: number;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  wallSeconds: 10,
  cpuSeconds: 5,
  memoryMb: 512,
  maxProcesses: 16,
  outputBytes: 64 * 1024,
  fileBytes: 8 * 1024 * 1024,
  openFiles: 64,
};

export interface SandboxRequest {
  language: SandboxLanguage;
  /** The program, written to main.py / main.js. */
  code: string;
  /** More files in the working directory (relative paths). */
  files?: Record<string, string>;
  stdin?: string;
  args?: string[];
  limits?: Partial<SandboxLimits>;
}

/** What was applied to one run, in words a person can check. */
export interface SandboxIsolation {
  network: "none (new network namespace)" | "not isolated";
  filesystem: "read-only except the working directory" | "not isolated";
  processes: string;
  user: string;
  rlimits: string;
  /** What could not be applied and why. */
  notes: string[];
}

export interface SandboxResult {
  status: SandboxStatus;
  limit: SandboxLimitHit | null;
  /** One line: why the run ended. */
  reason: string;
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** Bytes the program wrote, including what was cut. */
  outputBytes: number;
  wallMs: number;
  isolation: SandboxIsolation;
}

const SIGNALS: Record<number, string> = { 6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV", 24: "SIGXCPU", 25: "SIGXFSZ" };
const ENV = { PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8", PYTHONDONTWRITEBYTECODE: "1", PYTHONIOENCODING: "utf-8" };
const MEMORY_PATTERNS =
  /MemoryError|JavaScript heap out of memory|Cannot allocate memory|Array buffer allocation failed|Fatal process out of memory|std::bad_alloc|Invalid typed array length|Fatal process OOM/;
const FILE_SIZE_PATTERNS = /File too large|EFBIG/;
const PROCESS_PATTERNS = /Resource temporarily unavailable|EAGAIN|can't start new thread|fork: retry/;

// Enough for Node's own threads (libuv pool and V8 platform workers) on top of the program's.
const NODE_THREADS = 16;

let gate: Semaphore | null = null;
function concurrencyGate(): Semaphore {
  gate ??= new Semaphore(() => Math.max(1, availableParallelism()));
  return gate;
}

function interpreter(language: SandboxLanguage): { path: string; entry: string } {
  if (language === "python") {
    const path = findExecutable("python3");
    if (path === null) throw new Error("the sandbox needs python3 on PATH (Debian: apt-get install python3)");
    return { path, entry: "main.py" };
  }
  return { path: process.execPath, entry: "main.js" };
}

function programArgs(language: SandboxLanguage, limits: SandboxLimits, entry: string, args: string[]): string[] {
  // -I: no user site-packages and no PYTHON* variables; Node's heap stays under the memory limit
  // so it fails with its own out-of-memory message rather than at an arbitrary allocation.
  if (language === "python") return ["-I", entry, ...args];
  return [`--max-old-space-size=${Math.max(32, Math.floor(limits.memoryMb / 2))}`, entry, ...args];
}

function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    if (rel.startsWith("/") || rel.split("/").includes(".."))
      throw new Error(`sandbox file ${JSON.stringify(rel)}: paths must stay inside the working directory`);
    const full = join(dir, rel);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  }
}

interface Plan {
  command: string;
  args: string[];
  isolation: SandboxIsolation;
  uid: number | null;
}

function plan(language: SandboxLanguage, limits: SandboxLimits, dir: string, program: string[]): Plan {
  const caps = sandboxCapabilities();
  const notes: string[] = [];
  const threads = language === "node" ? NODE_THREADS : 0;
  let uid: number | null = null;
  let nproc = limits.maxProcesses + threads;
  let processes = `at most ${limits.maxProcesses} processes${threads > 0 ? ` (+${threads} threads for Node)` : ""}`;
  let user = "the caller's user";
  let hide = "";
  const wrap: string[] = [];
  if (caps.root && caps.tools.setpriv !== null) {
    // A uid of its own: RLIMIT_NPROC then counts only this program's processes (root is exempt from it).
    uid = 200_000 + randomInt(0, 800_000);
    user = `uid ${uid} (no groups, no_new_privs)`;
    wrap.push(caps.tools.setpriv, `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "--no-new-privs", "--");
  } else if (caps.root) {
    notes.push("setpriv not found: the program runs as root, which the process-count limit does not bind");
    user = "root";
  } else if (process.platform === "linux" && typeof process.getuid === "function") {
    // RLIMIT_NPROC counts every task of the real uid, so the limit is what runs now plus the budget.
    const now = tasksOfUser(process.getuid());
    nproc += now;
    processes += ` (counted with the ${now} tasks this user already runs)`;
    // Same uid as us, so our files are readable: the home folder (tokens, keys) goes under an empty tmpfs.
    const home = homedir();
    if (home !== "/" && existsSync(home) && ![dir, program[0]!].some((p) => p.startsWith(`${home}/`))) hide = home;
    else notes.push(`the home folder ${home} stays readable (the working directory or the interpreter is inside it)`);
    user += hide === "" ? "" : `, home folder ${home} hidden`;
  }
  const memBytes = limits.memoryMb * 1024 * 1024;
  if (caps.tools.prlimit !== null) {
    // V8 reserves more address space than it uses, so Node is held by its data segment instead.
    const memFlag = language === "python" ? `--as=${memBytes}` : `--data=${memBytes}`;
    wrap.push(
      caps.tools.prlimit,
      `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
      memFlag,
      `--nproc=${nproc}`,
      `--fsize=${limits.fileBytes}`,
      `--nofile=${limits.openFiles}`,
      "--core=0",
      "--",
    );
  } else {
    notes.push(
      `prlimit not found (${process.platform === "linux" ? "Debian: util-linux" : `not available on ${process.platform}`}): no CPU, memory, process, file-size or open-file limits; only the wall clock and the output cap hold`,
    );
    processes = "not limited";
  }
  const rlimits =
    caps.tools.prlimit === null
      ? "none"
      : `cpu ${limits.cpuSeconds} s, ${language === "python" ? "address space" : "data"} ${limits.memoryMb} MB, nproc ${nproc}, file size ${limits.fileBytes} B, open files ${limits.openFiles}, no core dumps`;
  if (caps.namespaces) {
    return {
      command: caps.tools.unshare!,
      args: [...namespaceArgs(caps.root), "--", caps.tools.sh!, "-c", NAMESPACE_SCRIPT, "sh", dir, hide, ...wrap, ...program],
      isolation: {
        network: "none (new network namespace)",
        filesystem: "read-only except the working directory",
        processes: `${processes}; own pid namespace, all killed at the end`,
        user,
        rlimits,
        notes,
      },
      uid,
    };
  }
  notes.push(
    `no namespaces (${caps.namespaceError}): the program can reach the network, write wherever its user may, and see other processes; processes that leave its process group may outlive it`,
  );
  const [command, ...rest] = [...wrap, ...program];
  return { command: command!, args: rest, isolation: { network: "not isolated", filesystem: "not isolated", processes, user, rlimits, notes }, uid };
}

function exitSignal(code: number | null, signal: NodeJS.Signals | null, namespaced: boolean): string | null {
  if (signal !== null) return signal;
  // Inside the namespaces a shell is pid 1 and reports a signalled program as 128 + its number.
  if (namespaced && code !== null && code > 128 && code < 160) return SIGNALS[code - 128] ?? `signal ${code - 128}`;
  return null;
}

/** Runs one program; never throws for what the program does (only for a request it cannot start). */
export async function runSandboxed(request: SandboxRequest): Promise<SandboxResult> {
  return concurrencyGate().run(() => runOne(request));
}

async function runOne(request: SandboxRequest): Promise<SandboxResult> {
  const limits: SandboxLimits = { ...DEFAULT_LIMITS, ...request.limits };
  const { path: interp, entry } = interpreter(request.language);
  const dir = mkdtempSync(join(tmpdir(), "cookbook-sandbox-"));
  try {
    writeFiles(dir, { ...request.files, [entry]: request.code });
    const p = plan(request.language, limits, dir, [interp, ...programArgs(request.language, limits, entry, request.args ?? [])]);
    if (p.uid !== null) {
      for (const f of [dir, ...Object.keys(request.files ?? {}).map((r) => join(dir, r)), join(dir, entry)]) if (existsSync(f)) chownSync(f, p.uid, p.uid);
      chmodSync(dir, 0o700);
    }
    const namespaced = p.isolation.network !== "not isolated";
    return await execute(p, dir, limits, request.stdin ?? "", namespaced);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function execute(p: Plan, dir: string, limits: SandboxLimits, stdin: string, namespaced: boolean): Promise<SandboxResult> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(p.command, p.args, { cwd: dir, env: { ...ENV, HOME: dir, TMPDIR: dir }, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let kept = 0;
    let total = 0;
    let killedFor: SandboxLimitHit | null = null;
    const kill = (why: SandboxLimitHit): void => {
      killedFor ??= why;
      try {
        // The whole process group: unshare and the namespace's pid 1 (whose death ends every process in it).
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const timer = setTimeout(() => kill("wall"), limits.wallSeconds * 1000);
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      total += chunk.length;
      if (kept < limits.outputBytes) {
        const part = chunk.subarray(0, limits.outputBytes - kept);
        into.push(part);
        kept += part.length;
      }
      if (total > limits.outputBytes) kill("output");
    };
    child.stdout.on("data", collect(out));
    child.stderr.on("data", collect(err));
    child.stdin.on("error", () => {
      // The program exited without reading its input.
    });
    child.stdin.end(stdin);
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve(finish(p, started, null, null, Buffer.alloc(0), Buffer.from(`cannot start ${p.command}: ${e.message}`), total, null, limits, namespaced));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve(finish(p, started, code, signal, Buffer.concat(out), Buffer.concat(err), total, killedFor, limits, namespaced));
    });
  });
}

function finish(
  p: Plan,
  started: number,
  code: number | null,
  rawSignal: NodeJS.Signals | null,
  out: Buffer,
  err: Buffer,
  total: number,
  killedFor: SandboxLimitHit | null,
  limits: SandboxLimits,
  namespaced: boolean,
): SandboxResult {
  const wallMs = Date.now() - started;
  const notes = [...p.isolation.notes];
  const stderrLines: string[] = [];
  for (const line of err.toString("utf8").split("\n")) {
    if (line.startsWith(SANDBOX_MARKER)) notes.push(line.slice(SANDBOX_MARKER.length));
    else stderrLines.push(line);
  }
  const stdout = out.toString("utf8");
  const stderr = stderrLines.join("\n");
  const signal = killedFor !== null ? "SIGKILL" : exitSignal(code, rawSignal, namespaced);
  const exitCode = signal === null ? code : null;
  const base = { exitCode, signal, stdout, stderr, outputBytes: total, wallMs, isolation: { ...p.isolation, notes } };
  const result = (status: SandboxStatus, limit: SandboxLimitHit | null, reason: string): SandboxResult => ({ status, limit, reason, ...base });
  if (killedFor === "wall") return result("timeout", "wall", `killed at the wall-clock limit (${limits.wallSeconds} s)`);
  if (killedFor === "output") return result("output_limit", "output", `killed after writing more than ${limits.outputBytes} bytes of output`);
  if (signal === "SIGXCPU") return result("timeout", "cpu", `killed at the CPU limit (${limits.cpuSeconds} s)`);
  // The hard CPU limit (one second past the soft one) ends a program that ignores SIGXCPU.
  if (signal === "SIGKILL" && !MEMORY_PATTERNS.test(stderr) && wallMs >= limits.cpuSeconds * 1000) {
    return result("timeout", "cpu", `killed (SIGKILL) at the CPU limit (${limits.cpuSeconds} s)`);
  }
  if (MEMORY_PATTERNS.test(stderr)) return result("memory", "memory", `ran out of memory (limit ${limits.memoryMb} MB)`);
  if (signal === "SIGXFSZ" || (code !== 0 && FILE_SIZE_PATTERNS.test(stderr)))
    return result("error", "file_size", `wrote a file larger than ${limits.fileBytes} bytes`);
  if (code === 0 && signal === null) return result("ok", null, "exited with code 0");
  if (PROCESS_PATTERNS.test(stderr)) return result("error", "processes", `failed at the process limit (${p.isolation.processes})`);
  if (signal !== null) return result("error", null, `killed by ${signal}`);
  return result("error", null, `exited with code ${code}`);
}
