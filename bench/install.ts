// What installing costs a user when nothing changed, as whole processes: `npm install` again (both
// install steps find their content stamps current), the first `npx cookbook recipes` (npx links
// the checkout into its cache; the scripts build nothing for npx) and a later one, next to
// `npm --version` (npm's own start). Goal (issue 28): the first `npx cookbook recipes` < 2 s.
// Usage: npm run bench:install [-- --runs 5]   (run after `npm install`)
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";

const argv = process.argv.slice(2);
const runs = argv.includes("--runs") ? Number(argv[argv.indexOf("--runs") + 1]) : 5;
const root = join(import.meta.dirname, "..");
const npxEntry = join(
  spawnSync("npm", ["config", "get", "cache"], { encoding: "utf8" }).stdout.trim(),
  "_npx",
  createHash("sha512").update(root).digest("hex").slice(0, 16),
);

function seconds(command: string, before?: () => void): number {
  before?.();
  const t0 = process.hrtime.bigint();
  const r = spawnSync("bash", ["-c", command], { cwd: root, stdio: "ignore" });
  if (r.status !== 0) throw new Error(`${command} exited with ${r.status}`);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

function median(command: string, before?: () => void): number {
  const times = Array.from({ length: runs }, () => seconds(command, before)).sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const forgetNpx = (): void => rmSync(npxEntry, { recursive: true, force: true });
const rows: [string, number][] = [
  ["npm --version (npm itself)", median("npm --version")],
  ["npm install, nothing changed", median("npm install --no-audit --no-fund")],
  ["first npx cookbook recipes", median("npx cookbook recipes", forgetNpx)],
  ["npx cookbook recipes, again", median("npx cookbook recipes")],
];
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}; medians of ${runs}`,
);
for (const [name, s] of rows) console.log(`${name.padEnd(32)} ${s.toFixed(2).padStart(6)} s`);
