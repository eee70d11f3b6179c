// The install path on a fresh clone of this checkout's last commit, as a new user meets it:
// `npm install` prints no warning of ours; a second `npm install` and the first `npx cookbook`
// rebuild neither the native addon nor the bundle when nothing changed; a rebuild interrupted by
// Ctrl-C (SIGINT to the whole process group, as a terminal sends it) leaves a working `cookbook`
// and is redone by the next install; and an npx cache entry that an interrupted npx left broken is
// repaired by `npm install`. Timings are printed by `npm run bench:install`, not asserted here.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";

const ROOT = resolve(import.meta.dirname, "../..");

interface Outcome {
  status: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/** Runs `command` in `cwd` as its own process group; with `interruptAfterMs`, sends it SIGINT then. */
function run(command: string, cwd: string, env: NodeJS.ProcessEnv, interruptAfterMs?: number): Promise<Outcome> {
  return new Promise((done, fail) => {
    const child = spawn("bash", ["-c", command], { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    const timer = interruptAfterMs === undefined ? undefined : setTimeout(() => process.kill(-child.pid!, "SIGINT"), interruptAfterMs);
    child.on("error", fail);
    child.on("close", (status, signal) => {
      clearTimeout(timer);
      done({ status, signal, output });
    });
  });
}

/** Lines of npm's output that warn, less the ones this machine's own npm configuration causes. */
function warnings(output: string): string[] {
  return output.split("\n").filter((l) => /warn|WARNING/i.test(l) && !/Unknown (user|global|env) config/.test(l));
}

const addonOf = (dir: string): string => join(dir, "build", "Release", "cookbook_kernels.node");
const bundleId = (dir: string): string => (JSON.parse(readFileSync(join(dir, "dist", ".built"), "utf8")) as { id: string }).id;

/** A start of the installed command that must use the native kernels: a two-step sl_basic run. */
async function trains(dir: string, env: NodeJS.ProcessEnv, name: string): Promise<void> {
  const out = await run(
    `node bin/cookbook.js run sl_basic max_steps=2 batch_size=4 save_every=0 eval_every=0 log_path=${join(env["COOKBOOK_HOME"]!, name)}`,
    dir,
    { ...env, COOKBOOK_KERNELS: "native" },
  );
  assert.equal(out.status, 0, out.output);
}

test("install: quiet, idempotent, fast when unchanged, and safe to interrupt", { timeout: 30 * 60_000 }, async () => {
  const tmp = mkdtempSync(join(tmpdir(), "install-e2e-"));
  const clone = join(tmp, "clone");
  const env: NodeJS.ProcessEnv = { ...process.env, COOKBOOK_HOME: join(tmp, "home"), HF_HUB_OFFLINE: "1" };
  delete env["COOKBOOK_FROM_SOURCE"];
  // npx's entry for the clone, in the user's npm cache (the clone's path makes it the test's own).
  const npmCache = spawnSync("npm", ["config", "get", "cache"], { encoding: "utf8" }).stdout.trim();
  const entry = join(npmCache, "_npx", createHash("sha512").update(clone).digest("hex").slice(0, 16));
  try {
    assert.equal(spawnSync("git", ["clone", "--quiet", ROOT, clone]).status, 0);

    const first = await run("npm install --no-audit --no-fund", clone, env);
    assert.equal(first.status, 0, first.output);
    assert.deepEqual(warnings(first.output), [], "npm install on a clean clone prints no warning");
    assert.ok(existsSync(addonOf(clone)), "the native addon was built");
    const addonMtime = statSync(addonOf(clone)).mtimeMs;
    const id = bundleId(clone);

    const second = await run("npm install --no-audit --no-fund", clone, env);
    assert.equal(second.status, 0, second.output);
    assert.match(second.output, /native kernels are up to date/);
    assert.match(second.output, /the bundle in .* is up to date/);
    assert.equal(statSync(addonOf(clone)).mtimeMs, addonMtime, "the addon was not rebuilt");

    // npx installs the checkout into its own cache and runs its install scripts there: nothing is built.
    const npx = await run("npx cookbook recipes", clone, env);
    assert.equal(npx.status, 0, npx.output);
    assert.match(npx.output, /^sl_basic\s/m);
    assert.equal(statSync(addonOf(clone)).mtimeMs, addonMtime, "npx did not rebuild the addon");
    assert.equal(bundleId(clone), id, "npx did not rebuild the bundle");

    // A change to the native sources, then Ctrl-C while the rebuild compiles: the previous addon
    // stays and works, and the next install builds the change.
    appendFileSync(join(clone, "src", "engine", "kernels", "native", "kernels.h"), "\n// changed by test-e2e/install\n");
    const interrupted = await run("npm install --no-audit --no-fund", clone, env, 8000);
    assert.notEqual(interrupted.status, 0, `the install was interrupted:\n${interrupted.output}`);
    assert.ok(existsSync(addonOf(clone)), "the previous addon is still there");
    await trains(clone, env, "after-interrupted-native");
    const redo = await run("npm install --no-audit --no-fund", clone, env);
    assert.equal(redo.status, 0, redo.output);
    assert.doesNotMatch(redo.output, /native kernels are up to date/, "the interrupted build is redone");
    assert.ok(statSync(addonOf(clone)).mtimeMs > addonMtime, "a new addon");
    await trains(clone, env, "after-rebuild");

    // A change to the TypeScript, then Ctrl-C during the bundling: the old bundle or the new one,
    // whole, never half of one; either way `cookbook` runs.
    appendFileSync(join(clone, "src", "display.ts"), "\n// changed by test-e2e/install\n");
    await run("node scripts/build.mjs", clone, env, 300);
    const recipes = await run("node bin/cookbook.js recipes", clone, env);
    assert.equal(recipes.status, 0, recipes.output);
    assert.match(recipes.output, /^sl_basic\s/m);
    assert.ok(!existsSync(join(clone, "dist", "cookbook.cjs")) || existsSync(join(clone, "dist", ".built")), "a bundle in dist/ always comes with its stamp");

    // An npx interrupted while installing into its cache leaves the entry without package.json,
    // and npm fails every later npx with ENOENT; `npm install` removes the broken entry.
    assert.ok(existsSync(join(entry, "package.json")), `npx made its entry ${entry}`);
    rmSync(join(entry, "package.json"), { force: true });
    rmSync(join(entry, "package-lock.json"), { force: true });
    assert.notEqual((await run("npx cookbook recipes", clone, env)).status, 0, "npm's own failure on a broken entry");
    const repair = await run("npm install --no-audit --no-fund", clone, env);
    assert.equal(repair.status, 0, repair.output);
    assert.match(repair.output, /removed .*_npx.* interrupted npx/);
    const afterRepair = await run("npx cookbook recipes", clone, env);
    assert.equal(afterRepair.status, 0, afterRepair.output);
  } finally {
    rmSync(entry, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
  }
});
