// How long `cookbook` takes to answer, from process start to exit: `cookbook recipes` and
// `cookbook --help` from the compiled build (dist/, made by `npm install` / `npm run build`) and
// from the TypeScript sources through tsx (COOKBOOK_FROM_SOURCE=1), next to a bare `node -e 0`.
// Goal (issue 19): `cookbook recipes` < 200 ms. Usage: npm run bench:startup [-- --runs 15]
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";

const argv = process.argv.slice(2);
const runs = argv.includes("--runs") ? Number(argv[argv.indexOf("--runs") + 1]) : 11;
const root = join(import.meta.dirname, "..");
const bin = join(root, "bin", "cookbook.js");

function medianMs(args: string[], env: NodeJS.ProcessEnv = {}): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { env: { ...process.env, ...env }, stdio: "ignore" });
    if (r.status !== 0) throw new Error(`${args.join(" ")} exited with ${r.status}`);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

if (!existsSync(join(root, "dist", ".built"))) {
  console.log("dist/ is not built: run `npm run build` (npm install does it) to measure the compiled start");
}
const rows: [string, number][] = [
  ["node -e 0 (Node itself)", medianMs(["-e", "0"])],
  ["cookbook recipes (compiled)", medianMs([bin, "recipes"])],
  ["cookbook --help (compiled)", medianMs([bin, "--help"])],
  ["cookbook recipes (sources, tsx)", medianMs([bin, "recipes"], { COOKBOOK_FROM_SOURCE: "1" })],
];
for (const [name, ms] of rows) console.log(`${name.padEnd(34)} ${ms.toFixed(0).padStart(5)} ms (median of ${runs})`);
const compiled = rows[1]![1];
console.log(`goal: cookbook recipes < 200 ms → ${compiled < 200 ? "OK" : "OVER"}; load average ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
