// The compiled build (what `npm install` puts in dist/ and bin/cookbook.js runs when it is current):
// compiled here into a scratch folder inside the checkout, then `recipes` must print what the
// sources print, and a real training run must work compiled — the engine worker starts from
// entry.js, and fixtures, tokenizers and the native addon are found from dist's location.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { readMetrics } from "../../src/log/metrics.ts";

const ROOT = resolve(import.meta.dirname, "../..");

test("compiled JavaScript: same recipe list as the sources, and a training run works", () => {
  const out = mkdtempSync(join(ROOT, ".cookbook-test-dist-"));
  try {
    execFileSync(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(ROOT, "tsconfig.build.json"), "--outDir", out, "--tsBuildInfoFile", join(out, ".tsbuildinfo")], { stdio: "pipe" });
    const cli = join(out, "src", "cli.js");
    assert.ok(existsSync(cli), "tsc emitted src/cli.js");
    const env = { ...process.env, COOKBOOK_HOME: join(out, "home"), HF_HUB_OFFLINE: "1" };
    const compiled = execFileSync(process.execPath, [cli, "recipes"], { env, encoding: "utf8" });
    const sources = execFileSync(process.execPath, [join(ROOT, "bin", "cookbook.js"), "recipes"], { env: { ...env, COOKBOOK_FROM_SOURCE: "1" }, encoding: "utf8" });
    assert.equal(compiled, sources);
    assert.match(compiled, /^sl_basic\s/m);
    const run = join(out, "run");
    execFileSync(process.execPath, [cli, "run", "sl_basic", `log_path=${run}`, "max_steps=2", "batch_size=4", "save_every=0", "eval_every=0", "behavior_if_log_dir_exists=delete"], { env, stdio: "pipe" });
    const rows = readMetrics(run).filter((r) => typeof r["train_mean_nll"] === "number");
    assert.deepEqual(rows.map((r) => r.step), [0, 1]);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
