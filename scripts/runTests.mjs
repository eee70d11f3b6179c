#!/usr/bin/env node
// Collects every *.test.ts / *.test.tsx under the given folder and runs them with node's test
// runner through tsx. Node 20's --test cannot glob TypeScript files itself.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { spawn } from "node:child_process";

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
// TAP output streams through unchanged; its closing counts are repeated as one plain
// "N passed, N failed" line so any CI reader finds the summary as the last line.
const child = spawn(process.execPath, ["--import", "tsx", "--test", "--test-reporter=tap", "--test-concurrency=2", "--test-timeout=600000", ...files], {
  stdio: ["ignore", "pipe", "inherit"],
  env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? "0" },
});
const counts = { pass: 0, fail: 0, cancelled: 0, skipped: 0 };
let pending = "";
child.stdout.on("data", (chunk) => {
  process.stdout.write(chunk);
  pending += chunk.toString("utf8");
  const lines = pending.split("\n");
  pending = lines.pop() ?? "";
  for (const line of lines) {
    const match = /^# (pass|fail|cancelled|skipped) (\d+)$/.exec(line.trim());
    if (match) counts[match[1]] = Number(match[2]);
  }
});
child.on("close", (code) => {
  const skipped = counts.skipped > 0 ? `, ${counts.skipped} skipped` : "";
  // A test cancelled by its file (a promise left pending, a timeout) did not pass: count it as failed.
  console.log(`\ntests: ${counts.pass} passed, ${counts.fail + counts.cancelled} failed${skipped}`);
  process.exit(code ?? 1);
});
