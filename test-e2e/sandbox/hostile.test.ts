// The hostile corpus: programs that try to hang, fork, eat memory, write outside their folder,
// reach the network, flood output and read our secrets. Each must end with a clear status, leave
// no process or file behind, and keep this process responsive. Needs python3 and util-linux's
// prlimit and unshare (with namespaces usable), and fails loudly without them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { runSandboxed, sandboxCapabilities, type SandboxLanguage, type SandboxResult } from "../../src/sandbox/index.ts";

// Our sandboxes' folders go under a folder of this file's own, so sandboxes that other test files
// run at the same time are not mistaken for ours by the leftover checks.
const PRIVATE_TMP = mkdtempSync(join(tmpdir(), "hostile-"));
// A program running under a uid of its own must be able to pass through to its folder.
chmodSync(PRIVATE_TMP, 0o711);
process.env["TMPDIR"] = PRIVATE_TMP;

const TIGHT = { wallSeconds: 6, cpuSeconds: 2, memoryMb: 256, maxProcesses: 8, outputBytes: 16 * 1024 };

function sandboxProcesses(): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((e) => /^\d+$/.test(e))) {
    try {
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if (cwd.startsWith(`${PRIVATE_TMP}/cookbook-sandbox-`)) found.push(`${pid} in ${cwd}`);
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

function leftoverDirs(): string[] {
  return readdirSync(tmpdir()).filter((n) => n.startsWith("cookbook-sandbox-"));
}

/** Runs a program while a timer measures how late this process's event loop gets. */
async function run(language: SandboxLanguage, code: string, extra: { stdin?: string } = {}): Promise<{ r: SandboxResult; lagMs: number }> {
  let lagMs = 0;
  let last = Date.now();
  const tick = setInterval(() => {
    const now = Date.now();
    lagMs = Math.max(lagMs, now - last - 50);
    last = now;
  }, 50);
  try {
    const r = await runSandboxed({ language, code, limits: TIGHT, ...extra });
    return { r, lagMs };
  } finally {
    clearInterval(tick);
  }
}

function contained(r: SandboxResult, lagMs: number): void {
  assert.ok(r.wallMs < (TIGHT.wallSeconds + 3) * 1000, `ran ${r.wallMs} ms, past the wall limit`);
  assert.ok(lagMs < 1500, `the host's event loop stalled ${lagMs} ms`);
  assert.deepEqual(sandboxProcesses(), [], "processes of the sandbox outlived it");
}

test("this machine can isolate (namespaces, prlimit)", () => {
  const caps = sandboxCapabilities();
  assert.notEqual(caps.tools.prlimit, null, "prlimit (util-linux) is missing");
  assert.equal(caps.namespaces, true, `namespaces unusable: ${caps.namespaceError}`);
});

test("a well-behaved program runs with everything applied", async () => {
  const { r } = await run("python", "import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))", { stdin: "2 3 4" });
  assert.equal(r.status, "ok", r.stderr);
  assert.equal(r.stdout.trim(), "9");
  assert.equal(r.isolation.network, "none (new network namespace)");
  assert.equal(r.isolation.filesystem, "read-only except the working directory");
  assert.deepEqual(r.isolation.notes, []);
  const { r: n } = await run("node", "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(s.split(' ').length))", { stdin: "a b c" });
  assert.equal(n.status, "ok", n.stderr);
  assert.equal(n.stdout.trim(), "3");
});

for (const [language, code] of [
  ["python", "while True:\n    pass"],
  ["node", "for (;;) {}"],
] as const) {
  test(`${language}: an infinite loop stops at the CPU limit`, async () => {
    const { r, lagMs } = await run(language, code);
    assert.equal(r.status, "timeout");
    assert.equal(r.limit, "cpu", r.reason);
    contained(r, lagMs);
  });
}

test("python: sleeping forever stops at the wall-clock limit", async () => {
  const { r, lagMs } = await run("python", "import time\ntime.sleep(1000)");
  assert.equal(r.status, "timeout");
  assert.equal(r.limit, "wall");
  contained(r, lagMs);
});

for (const [name, language, code] of [
  ["python os.fork", "python", "import os, time\nn = 0\nwhile True:\n    try:\n        os.fork(); n += 1\n    except OSError:\n        time.sleep(0.01)"],
  ["shell :(){ :|:& };:", "python", "import os\nos.system(':(){ :|:& };:')\nimport time\ntime.sleep(1000)"],
  [
    "node child_process",
    "node",
    "const { spawn } = require('child_process'); const go = () => { try { spawn(process.execPath, ['-e', 'setInterval(()=>{},1000)'], { detached: true }).on('error', () => {}); } catch {} setImmediate(go); }; go();",
  ],
  [
    "python setsid escapees",
    "python",
    "import os, time\nfor _ in range(5):\n    if os.fork() == 0:\n        os.setsid()\n        time.sleep(1000)\ntime.sleep(1000)",
  ],
] as const) {
  test(`fork bomb (${name}) is held by the process limit and leaves nothing behind`, async () => {
    const { r, lagMs } = await run(language, code);
    assert.equal(r.status, "timeout", `${r.status}: ${r.reason}\n${r.stderr.slice(0, 500)}`);
    contained(r, lagMs);
  });
}

test("python: forks beyond the process limit fail inside the program", async () => {
  const code =
    "import os\nmade = 0\ntry:\n    for _ in range(50):\n        if os.fork() == 0:\n            import time; time.sleep(5); os._exit(0)\n        made += 1\nexcept OSError as e:\n    print('refused after', made, e.errno)\n";
  const { r, lagMs } = await run("python", code);
  assert.match(r.stdout, /refused after \d+ 11/, r.stdout + r.stderr);
  const made = Number(/refused after (\d+)/.exec(r.stdout)![1]);
  assert.ok(made < TIGHT.maxProcesses, `made ${made} children with a limit of ${TIGHT.maxProcesses}`);
  contained(r, lagMs);
});

for (const [language, code] of [
  ["python", "a = []\nwhile True:\n    a.append(bytearray(10**7))"],
  ["node", "const a = []; for (;;) a.push(new Array(1e6).fill(1.5));"],
  ["node", "const a = []; for (;;) a.push(Buffer.alloc(1e7, 1));"],
] as const) {
  test(`${language}: a memory bomb stops at the memory limit (${code.slice(0, 40)}…)`, async () => {
    const { r, lagMs } = await run(language, code);
    assert.equal(r.status, "memory", `${r.status}: ${r.reason}\n${r.stderr.slice(-500)}`);
    contained(r, lagMs);
  });
}

test("writes outside the working directory fail; inside they work", async () => {
  const marker = `cookbook-escape-${randomBytes(4).toString("hex")}`;
  const targets = [
    join(tmpdir(), marker),
    `/var/tmp/${marker}`,
    `/dev/shm/${marker}`,
    `${process.cwd()}/${marker}`,
    `/root/${marker}`,
    `/etc/${marker}`,
    `../${marker}`,
  ];
  const code = [
    "import json, os",
    `targets = ${JSON.stringify(targets)}`,
    "out = {}",
    "for t in targets:",
    "    try:",
    "        open(t, 'w').write('x'); out[t] = 'written'",
    "    except OSError as e:",
    "        out[t] = e.strerror",
    "open('inside.txt', 'w').write('ok')",
    "out['inside'] = open('inside.txt').read()",
    "print(json.dumps(out))",
  ].join("\n");
  const { r, lagMs } = await run("python", code);
  assert.equal(r.status, "ok", r.stderr);
  const out = JSON.parse(r.stdout) as Record<string, string>;
  assert.equal(out["inside"], "ok");
  for (const t of targets) {
    assert.notEqual(out[t], "written", `${t} was writable`);
    assert.equal(existsSync(t.startsWith("../") ? join(tmpdir(), marker) : t), false, `${t} exists on the host`);
  }
  contained(r, lagMs);
  assert.deepEqual(leftoverDirs(), [], "working directories were left behind");
});

test("a file over the size limit is refused", async () => {
  const r = await runSandboxed({ language: "python", code: "open('big', 'wb').write(b'x' * (4 << 20))", limits: { ...TIGHT, fileBytes: 1 << 20 } });
  assert.equal(r.status, "error");
  assert.equal(r.limit, "file_size", r.reason);
});

test("sockets reach nothing, not even this host's loopback", async () => {
  let connections = 0;
  const server = createServer((s) => {
    connections++;
    s.end("secret");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    const py = [
      "import socket",
      `for host, port in [('127.0.0.1', ${port}), ('1.1.1.1', 53), ('8.8.8.8', 443)]:`,
      "    try:",
      "        socket.create_connection((host, port), timeout=2); print('connected', host)",
      "    except OSError as e:",
      "        print('refused', host, e.errno)",
      "try:",
      "    print('resolved', socket.gethostbyname('example.com'))",
      "except OSError as e:",
      "    print('no dns')",
    ].join("\n");
    const { r, lagMs } = await run("python", py);
    assert.equal(r.status, "ok", r.stderr);
    assert.doesNotMatch(r.stdout, /connected|resolved/);
    assert.equal((r.stdout.match(/refused/g) ?? []).length, 3, r.stdout);
    contained(r, lagMs);
    const js = `const net = require('net'); const s = net.connect(${port}, '127.0.0.1'); s.on('connect', () => console.log('connected')); s.on('error', (e) => console.log('refused', e.code));`;
    const { r: n } = await run("node", js);
    assert.match(n.stdout, /refused/, n.stdout + n.stderr);
    assert.equal(connections, 0, "the sandbox reached a server on the host");
  } finally {
    server.close();
  }
});

for (const [language, code] of [
  ["python", "while True:\n    print('x' * 1000)"],
  ["node", "const s = 'y'.repeat(1000); for (;;) process.stderr.write(s);"],
] as const) {
  test(`${language}: huge output is cut at the cap and the program killed`, async () => {
    const { r, lagMs } = await run(language, code);
    assert.equal(r.status, "output_limit", `${r.status}: ${r.reason}`);
    assert.ok(r.stdout.length + r.stderr.length <= TIGHT.outputBytes, `kept ${r.stdout.length + r.stderr.length} bytes`);
    assert.ok(r.outputBytes > TIGHT.outputBytes);
    contained(r, lagMs);
  });
}

test("environment secrets of the caller are not visible", async () => {
  const secret = `tml-${randomBytes(12).toString("hex")}`;
  const before = process.env["TINKER_API_KEY"];
  process.env["TINKER_API_KEY"] = secret;
  try {
    const code = [
      "import os",
      "print(dict(os.environ))",
      "for pid in os.listdir('/proc'):",
      "    if pid.isdigit():",
      "        for f in ('environ', 'cmdline'):",
      "            try: print(pid, f, open(f'/proc/{pid}/{f}', 'rb').read())",
      "            except OSError as e: print(pid, f, e.strerror)",
      `for p in ['/proc/${process.pid}/environ', '/proc/1/environ', '/proc/self/environ']:`,
      "    try: print(p, open(p, 'rb').read())",
      "    except OSError as e: print(p, e.strerror)",
    ].join("\n");
    const { r } = await run("python", code);
    assert.equal(r.status, "ok", r.stderr);
    assert.ok(!r.stdout.includes(secret) && !r.stderr.includes(secret), "the secret reached the sandbox");
    assert.doesNotMatch(r.stdout, /TINKER_API_KEY/);
    const { r: n } = await run("node", "console.log(JSON.stringify(process.env))");
    assert.equal(n.status, "ok", n.stderr);
    assert.ok(!n.stdout.includes(secret));
  } finally {
    if (before === undefined) delete process.env["TINKER_API_KEY"];
    else process.env["TINKER_API_KEY"] = before;
  }
});
