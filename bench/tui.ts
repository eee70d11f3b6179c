// bench:tui — how fast the dashboard opens on a large run and how often it redraws while another
// process appends metrics. Prints: rows, time to the first frame with charts, redraws per second
// while tailing, rows appended meanwhile, and the time to build the charts for one frame.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { execa } from "execa";

// Module loading is part of opening the dashboard: timed here rather than hidden in static imports.
const cpuMs = (since: NodeJS.CpuUsage): number => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
};
const i0 = performance.now();
const ic = process.cpuUsage();
const { render } = await import("ink-testing-library");
const { createElement } = await import("react");
const { recipes } = await import("../recipes/registry.ts");
const { App } = await import("../src/tui/App.tsx");
const { AppContainer } = await import("../src/tui/AppContainer.tsx");
const { ProcessManager } = await import("../src/tui/services/processManager.ts");
const importMs = performance.now() - i0;
const importCpuMs = cpuMs(ic);
const { chartBlock } = await import("../src/tui/core/dashboard.ts");
const { elapsedSeconds } = await import("../src/tui/core/series.ts");

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const TAIL_SECONDS = Number(process.env.BENCH_TAIL_SECONDS ?? 4);
const WATCH_RUNS = Number(process.env.BENCH_WATCH_RUNS ?? 9);

const root = mkdtempSync(join(tmpdir(), "bench-tui-"));
const dir = join(root, "big-run");
try {
  const { mkdirSync } = await import("node:fs");
  mkdirSync(dir);
  const lines: string[] = [];
  for (let i = 0; i < ROWS; i++) {
    lines.push(
      JSON.stringify({
        step: i,
        train_mean_nll: 2 * Math.exp(-i / 20_000) + 0.1 * Math.sin(i / 50),
        learning_rate: 1e-4 * (1 - i / ROWS),
        progress: (i + 1) / (ROWS * 2),
        num_tokens: 4096,
        "time/total": 0.5,
      }),
    );
  }
  writeFileSync(join(dir, "metrics.jsonl"), lines.join("\n") + "\n");
  writeFileSync(join(dir, "config.json"), JSON.stringify({ num_epochs: 1, model_name: "tiny-chat" }));
  const now = new Date().toISOString();
  writeFileSync(
    join(dir, "run.json"),
    JSON.stringify({ recipe: "bench", argv: [], pid: process.pid, host: hostname(), started_at: now, engine: "none", status: "running", heartbeat_at: now }),
  );

  const services = { logRoot: root, experimentRoots: [], recipes, processes: new ProcessManager(), engineLabel: "embedded", pollMs: 100, writeRaw: () => {} };
  const t0 = performance.now();
  const c0cpu = process.cpuUsage();
  // createElement rather than JSX: bench scripts are plain .ts.
  const inst = render(
    createElement(AppContainer, { services, first: { name: "dashboard", runDir: dir }, size: { columns: 160, rows: 50 }, children: createElement(App) }),
  );
  let firstFrameCpuMs = 0;
  const firstFrameMs = await new Promise<number>((resolve) => {
    const check = (): void => {
      if ((inst.lastFrame() ?? "").includes("train_mean_nll  last")) {
        firstFrameCpuMs = cpuMs(c0cpu);
        resolve(performance.now() - t0);
      } else setTimeout(check, 2);
    };
    check();
  });

  // Another process appends a row every 2 ms (500 rows/s) while we count frames.
  const writer = execa(
    process.execPath,
    [
      "-e",
      `const fs=require("fs");let i=${ROWS};const t=setInterval(()=>{fs.appendFileSync(${JSON.stringify(join(dir, "metrics.jsonl"))},JSON.stringify({step:i,train_mean_nll:1,learning_rate:1e-4,progress:0.6,"time/total":0.5})+"\\n");i++;},2);setTimeout(()=>{clearInterval(t);process.exit(0)},${TAIL_SECONDS * 1000});`,
    ],
    { stdin: "ignore", stdout: "ignore", stderr: "ignore", reject: false },
  );
  // Count from the moment the writer has started appending (process start-up is not the UI's).
  const { statSync } = await import("node:fs");
  const startSize = statSync(join(dir, "metrics.jsonl")).size;
  await new Promise<void>((resolve) => {
    const check = (): void => {
      if (statSync(join(dir, "metrics.jsonl")).size > startSize) resolve();
      else setTimeout(check, 5);
    };
    check();
  });
  const framesBefore = inst.frames.length;
  const tStart = performance.now();
  const tailCpu = process.cpuUsage();
  await writer;
  const tailSec = (performance.now() - tStart) / 1000;
  const tailCpuMs = cpuMs(tailCpu);
  const redraws = inst.frames.length - framesBefore;
  const lastFrame = inst.lastFrame() ?? "";
  inst.unmount();

  // The real thing: `cookbook watch <run>` (the installed command: the bundle when dist/ is built)
  // in a pseudo-terminal, timed from forking the process to the first frame with a chart, as a
  // shell in a terminal starts it: a small Python launcher forks with a pty (160 x 50) and execs
  // node straight away (`script` and a shell to size the terminal added their own start, and
  // forking this process, by now holding a gigabyte of heap, added more). The first start of a
  // build has no code cache and writes it after 1.5 s (bin/compiled.js): it is timed apart and
  // kept alive for that, then the median of WATCH_RUNS starts with the cache.
  const bundled = existsSync(join(import.meta.dirname, "..", "dist", ".built"));
  const ptyLauncher = `import json, os, pty, select, signal, struct, sys, time, fcntl, termios
node, bin, run_dir, runs, keep_first = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
times = []
for i in range(runs):
    t0 = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))
        os.environ.update(CI="0", TERM="xterm-256color")
        os.execv(node, [node, bin, "watch", run_dir])
    seen, took = b"", None
    while took is None and select.select([fd], [], [], 20)[0]:
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
        if b"train_mean_nll" in seen and "\u2524".encode() in seen:
            took = (time.perf_counter() - t0) * 1000
    if took is not None and i == 0 and keep_first > 0:
        deadline = time.perf_counter() + keep_first
        while time.perf_counter() < deadline and select.select([fd], [], [], deadline - time.perf_counter())[0]:
            try:
                if not os.read(fd, 1 << 16):
                    break
            except OSError:
                break
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(fd)
    if took is None:
        sys.exit("no chart within 20 s: " + seen[-500:].decode(errors="replace"))
    times.append(took)
print(json.dumps(times))`;
  const firstChartTimes = (runs: number, keepFirstSec: number): number[] => {
    const bin = join(import.meta.dirname, "..", "bin", "cookbook.js");
    const run = spawnSync("python3", ["-c", ptyLauncher, process.execPath, bin, dir, String(runs), String(keepFirstSec)], { encoding: "utf8" });
    if (run.error) throw new Error(`python3 starts the pty for the first-chart timing: ${run.error.message}`);
    if (run.status !== 0) throw new Error(`first-chart timing failed: ${run.stderr}`);
    return JSON.parse(run.stdout) as number[];
  };
  if (bundled) {
    const { id } = JSON.parse(readFileSync(join(import.meta.dirname, "..", "dist", ".built"), "utf8")) as { id: string };
    rmSync(join(import.meta.dirname, "..", "dist", ".cache", `${id}-watch.v8`), { force: true });
  }
  const coldMs = firstChartTimes(1, bundled ? 2.5 : 0)[0]!;
  const watchTimes = firstChartTimes(WATCH_RUNS, 0).sort((a, b) => a - b);
  const watchMedianMs = watchTimes[Math.floor(watchTimes.length / 2)]!;

  // Chart building alone for one frame (three charts at 160 columns over all rows).
  const { readJsonl } = await import("../src/log/jsonl.ts");
  const rows = readJsonl<Record<string, unknown>>(join(dir, "metrics.jsonl"));
  const elapsed = elapsedSeconds(rows);
  const c0 = performance.now();
  const chartCpu = process.cpuUsage();
  for (const key of ["train_mean_nll", "learning_rate", "num_tokens"])
    chartBlock([{ name: "b", rows, elapsed }], { key, width: 160, rows: 14, smoothing: 0.9, xAxis: "step", color: true });
  const chartMs = performance.now() - c0;
  const chartCpuMs = cpuMs(chartCpu);

  // `cookbook watch --once` as a whole process: on metrics.jsonl alone (a run written by the
  // Python cookbook or an older version), then with metrics.columns, which the run's writer keeps
  // (its first append here builds it from the whole file, as when a run resumes).
  // Timed from a small launcher process, as a shell starts it: spawning straight from this process
  // (a gigabyte of heap by now) adds the cost of forking it to every start.
  const onceMs = (): number => {
    const bin = join(import.meta.dirname, "..", "bin", "cookbook.js");
    const launcher = `const { spawnSync } = require("node:child_process");
const times = [];
for (let i = 0; i < ${WATCH_RUNS}; i++) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [${JSON.stringify(bin)}, "watch", ${JSON.stringify(dir)}, "--once", "--width", "160"], { stdio: ["ignore", "pipe", "ignore"] });
  if (r.status !== 0 || !r.stdout.toString().includes("train_mean_nll  last")) { console.error("watch --once failed (" + r.status + ")"); process.exit(1); }
  times.push(performance.now() - t0);
}
console.log(JSON.stringify(times));`;
    const run = spawnSync(process.execPath, ["-e", launcher], { encoding: "utf8" });
    if (run.status !== 0) throw new Error(run.stderr);
    const times = (JSON.parse(run.stdout) as number[]).sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)]!;
  };
  const { MetricsLogger } = await import("../src/log/metrics.ts");
  const onceJsonlMs = onceMs();
  new MetricsLogger(dir, { console: false }).logMetrics({ train_mean_nll: 1, learning_rate: 1e-4, progress: 0.6, "time/total": 0.5 }, 1_000_000);
  const onceColumnsMs = onceMs();

  const fmt = (n: number, d = 1): string => n.toFixed(d);
  const { loadavg, cpus } = await import("node:os");
  console.log(`machine                      ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)}`);
  console.log(`rows                         ${ROWS}`);
  console.log(`loading the TUI modules      ${fmt(importMs)} ms wall, ${fmt(importCpuMs)} ms CPU`);
  console.log(`time to first frame          ${fmt(firstFrameMs)} ms wall, ${fmt(firstFrameCpuMs)} ms CPU (after loading)`);
  console.log(
    `cookbook watch, first chart  ${fmt(watchMedianMs)} ms from process start, median of ${WATCH_RUNS} (${bundled ? "bundle" : "sources through tsx: run npm run build"}; goal < 300 ms); ${fmt(coldMs)} ms on the first start, without a code cache`,
  );
  console.log(
    `cookbook watch --once        ${fmt(onceColumnsMs)} ms from process start with metrics.columns (goal < 300 ms), ${fmt(onceJsonlMs)} ms from metrics.jsonl alone; median of ${WATCH_RUNS}`,
  );
  console.log(`redraws while tailing        ${redraws} in ${fmt(tailSec, 2)} s = ${fmt(redraws / tailSec)} /s`);
  console.log(
    `CPU while tailing            ${fmt(tailCpuMs)} ms = ${fmt(tailCpuMs / Math.max(1, redraws))} ms per redraw (this process, incl. ink-testing-library)`,
  );
  console.log(`rows appended while tailing  ${rows.length - ROWS}`);
  console.log(`chart strings for one frame  ${fmt(chartMs)} ms (3 charts, 160 cols, EMA on), ${fmt(chartCpuMs)} ms CPU`);
  console.log(`last frame shows step        ${/step (\d+)/.exec(lastFrame)?.[1] ?? "?"}`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
process.exit(0);
