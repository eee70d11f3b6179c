// Does `cookbook serve` give memory back? Starts the server as its own process (so its RSS is
// its own), runs N short sessions through our HTTP client — each creates a LoRA model on the
// shipped tiny-chat model, sends a few MiB of forward_backward data, steps, samples from an
// ephemeral sampler, then goes silent — waits until every session has expired, and prints the
// server's RSS at start, at the peak and at the end. Goal (issue 20): end within 1.5× of start.
// Usage: npm run bench:serve_memory [-- --sessions 200 --concurrency 8 --datums 32 --tokens 400]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir, loadavg } from "node:os";
import { join } from "node:path";
import { HttpServiceClient } from "../src/tinker/http/serviceClient.ts";
import type { Datum } from "../src/tinker/types.ts";

const argv = process.argv.slice(2);
function arg(name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
}
const sessions = arg("sessions", 200);
const concurrency = arg("concurrency", 4);
const datums = arg("datums", 8);
const tokens = arg("tokens", 128);
const sessionTimeoutSec = 3;

const CLI = join(import.meta.dirname, "..", "bin", "cookbook.js");
const root = mkdtempSync(join(tmpdir(), "bench-serve-memory-"));

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** The process that holds the server: `pid` itself, or its only child when it re-ran itself. */
function serverPid(pid: number): number {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
    return children.length === 1 ? Number(children[0]) : pid;
  } catch {
    return pid;
  }
}

function datum(seed: number): Datum {
  const ids = Array.from({ length: tokens + 1 }, (_, i) => ((seed * 7919 + i * 104729) % 1000) + 10);
  return {
    model_input: { chunks: [{ type: "encoded_text", tokens: ids.slice(0, -1) }] },
    loss_fn_inputs: { target_tokens: { data: ids.slice(1), dtype: "int64" }, weights: { data: Array(tokens).fill(1), dtype: "float32" } },
  };
}

async function oneSession(url: string, k: number, proto: boolean): Promise<void> {
  const client = new HttpServiceClient({
    baseUrl: url,
    env: {},
    protoForwardBackward: proto,
    heartbeatIntervalMs: 500,
    logger: { info: () => undefined, warn: () => undefined },
  });
  try {
    const tc = await client.createLoraTrainingClient("tiny-chat", { rank: 8, seed: k });
    const data = Array.from({ length: datums }, (_, i) => datum(k * 1000 + i));
    for (let step = 0; step < 2; step++) {
      const fb = await tc.forwardBackward(data, "cross_entropy");
      const opt = await tc.optimStep({ learning_rate: 1e-3 });
      await fb.result();
      await opt.result();
    }
    const sampler = await tc.saveWeightsAndGetSamplingClient();
    await sampler.sample({ chunks: [{ type: "encoded_text", tokens: [1, 5, 9, 33] }] }, 16, { max_tokens: 32, seed: k });
  } finally {
    // No more heartbeats: the server expires the session after sessionTimeoutSec.
    await client.close();
  }
}

async function main(): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env, COOKBOOK_HOME: join(root, "home"), HF_HUB_OFFLINE: "1" };
  delete env.TINKER_BASE_URL;
  const server = spawn(process.execPath, [CLI, "serve", "--port", "0", "--store", join(root, "store"), "--session-timeout", String(sessionTimeoutSec)], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Do not leave the server behind if this script is interrupted.
  process.once("exit", () => server.kill("SIGTERM"));
  let serverErr = "";
  server.stderr!.on("data", (d: Buffer) => (serverErr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    server.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    server.once("exit", (code) => reject(new Error(`cookbook serve exited with ${code}: ${serverErr}`)));
  });
  // With allocator tuning `cookbook serve` runs as a child of the process we started: measure that one.
  await new Promise((r) => setTimeout(r, 1000));
  const pid = serverPid(server.pid!);
  const idle = rssMiB(pid);
  // One session first: starts the engine worker (its own V8 isolate and module graph) and loads the
  // base model, which stay for the server's lifetime; "start" is measured after it has expired.
  await oneSession(url, 10_000, true);
  await new Promise((r) => setTimeout(r, (sessionTimeoutSec + 3) * 1000));
  const start = rssMiB(pid);
  let peak = start;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 200);
  const t0 = Date.now();
  let next = 0;
  let afterFirst = NaN;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const k = next++;
        if (k >= sessions) return;
        await oneSession(url, k, k % 2 === 0);
        if (k === 0) afterFirst = rssMiB(pid);
        if ((k + 1) % 10 === 0) process.stderr.write(`  ${k + 1} sessions, RSS ${rssMiB(pid).toFixed(0)} MiB, ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
      }
    }),
  );
  const busy = (Date.now() - t0) / 1000;
  const atEnd = rssMiB(pid);
  // Every session expires after sessionTimeoutSec; give the expiry and the future sweep time to run.
  let settled = atEnd;
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    settled = rssMiB(pid);
  }
  clearInterval(sampler);
  const sessionsLeft = ((await (await fetch(`${url}/api/v1/sessions?limit=1000`)).json()) as { sessions: string[] }).sessions.length;
  server.kill("SIGTERM");
  await new Promise((r) => server.once("exit", r));
  rmSync(root, { recursive: true, force: true });
  const ratio = settled / start;
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
  process.stdout.write(
    [
      `cookbook serve memory: ${sessions} sessions (${concurrency} at a time; ${datums} datums × ${tokens} tokens per forward_backward, 2 steps, 16 samples) in ${busy.toFixed(1)} s`,
      `  RSS idle, no engine   ${idle.toFixed(0)} MiB (before the engine worker started)`,
      `  RSS at start          ${start.toFixed(0)} MiB (after one warm-up session expired)`,
      `  RSS after 1 session   ${afterFirst.toFixed(0)} MiB`,
      `  allocator settings    ${pid === server.pid ? "none (COOKBOOK_SERVE_MALLOC=0 or not Linux)" : "MALLOC_* set by cookbook serve"}`,
      `  RSS peak              ${peak.toFixed(0)} MiB`,
      `  RSS when clients done ${atEnd.toFixed(0)} MiB`,
      `  RSS 20 s later        ${settled.toFixed(0)} MiB (${sessionsLeft} live sessions) → ${ratio.toFixed(2)}× start (goal ≤ 1.5×) ${ratio <= 1.5 ? "OK" : "OVER"}`,
      `  load average ${load}`,
      "",
    ].join("\n"),
  );
}

await main();
