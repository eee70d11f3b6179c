#!/usr/bin/env node
// Collects every *.test.ts / *.test.tsx under the given folder and runs them with node's test
// runner through tsx. Node 20's --test cannot glob TypeScript files itself.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

const root = process.argv[2] ?? "test";
const filter = process.argv.slice(3);
function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...collect(path));
    else if (/\.test\.tsx?$/.test(name)) out.push(path);
  }
  return out;
}
let files = collect(root);
if (filter.length > 0) files = files.filter((f) => filter.some((part) => f.includes(part)));
if (files.length === 0) {
  console.error(`no test files found under ${root}${filter.length ? ` matching ${filter.join(", ")}` : ""}`);
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ["--import", "tsx", "--test", "--test-concurrency=2", "--test-timeout=600000", ...files],
  { stdio: "inherit", env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? "0" } },
);
process.exit(result.status ?? 1);
