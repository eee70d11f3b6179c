// How long `cookbook` takes to answer, from process start to exit: `cookbook recipes` and
// `cookbook --help` from the bundle (dist/, made by `npm install` / `npm run build`; the first
// start of a command has no code cache yet and writes it, reported apart) and from the TypeScript
// sources through tsx (COOKBOOK_FROM_SOURCE=1), next to a bare `node -e 0`.
// Goal (issue 19): `cookbook recipes` < 200 ms. Usage: npm run bench:startup [-- --runs 15]
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { cacheProfile } from "../bin/compiled.js";

const argv = process.argv.slice(2);
const runs = argv.includes("--runs") ? Number(argv[argv.indexOf("--runs") + 1]) : 11;
const root = join(import.meta.dirname, "..");
const bin = join(root, "bin", "cookbook.js");

function timeMs(args: string[], env: NodeJS.ProcessEnv = {}): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { env: { ...process.env, ...env }, stdio: "ignore" });
  if (r.status !== 0) throw new Error(`${args.join(" ")} exited with ${r.status}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

function medianMs(args: string[], env: NodeJS.ProcessEnv = {}): number {
  const times = Array.from({ length: runs }, () => timeMs(args, env)).sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

/** The first start without a code cache (it writes one), then the median with it. */
function compiled(args: string[]): [number, number] {
  const stamp = join(root, "dist", ".built");
  if (existsSync(stamp)) {
    const { id } = JSON.parse(readFileSync(stamp, "utf8")) as { id: string };
    rmSync(join(root, "dist", ".cache", `${id}-${cacheProfile(args)}.v8`), { force: true });
  }
  return [timeMs([bin, ...args]), medianMs([bin, ...args])];
}

if (!existsSync(join(root, "dist", ".built"))) {
  console.log("dist/ is not built: run `npm run build` (npm install does it) to measure the compiled start");
}
const [recipesCold, recipes] = compiled(["recipes"]);
const [helpCold, help] = compiled(["--help"]);
const rows: [string, number, string][] = [
  ["node -e 0 (Node itself)", medianMs(["-e", "0"]), `median of ${runs}`],
  ["cookbook recipes (bundle)", recipes, `median of ${runs}; ${recipesCold.toFixed(0)} ms on the first start, without a code cache`],
  ["cookbook --help (bundle)", help, `median of ${runs}; ${helpCold.toFixed(0)} ms on the first start`],
  ["cookbook recipes (sources, tsx)", medianMs([bin, "recipes"], { COOKBOOK_FROM_SOURCE: "1" }), `median of ${runs}`],
];
for (const [name, ms, note] of rows) console.log(`${name.padEnd(34)} ${ms.toFixed(0).padStart(5)} ms (${note})`);
console.log(
  `goal: cookbook recipes < 200 ms → ${recipes < 200 ? "OK" : "OVER"}; load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}`,
);
