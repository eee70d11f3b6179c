// The compiled build (what `npm install` puts in dist/ and bin/cookbook.js runs when it is current):
// bundled here into a scratch folder inside the checkout, then run the way bin/cookbook.js runs it
// (bin/compiled.js: one script with a V8 code cache). `recipes` must print what the sources print;
// the second start must use the code cache the first one wrote (a damaged or foreign one is
// replaced, a failed command writes none); a stack must name src/ files; and
// a real training run must work — the engine worker starts from the bundled entry.js, and
// fixtures, tokenizers (transformers, imported at run time) and the native addon are found from
// the bundle's location.
import assert from "node:assert/strict";
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { isAscii } from "node:buffer";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { readMetrics } from "../../src/log/metrics.ts";
import { startFakeWandb } from "../log/fakeWandb.ts";
import { buildBundle, ROOT } from "./bundle.ts";

test("compiled bundle: same recipe list as the sources, code cache reused, stacks in src/, a training run works", async () => {
  const { out, id, runner, cleanup } = buildBundle();
  try {
    assert.match(id, /^[0-9a-f]{16}$/);
    assert.ok(existsSync(join(out, "cookbook.cjs.map")) && existsSync(join(out, "entry.js.map")), "source maps beside the bundles");
    const env = { ...process.env, COOKBOOK_HOME: join(out, "home"), HF_HUB_OFFLINE: "1", COOKBOOK_CODE_CACHE_DEBUG: "1" };
    // ASCII, so a start reads it without decoding UTF-8 (scripts/asciiBundle.mjs).
    assert.ok(isAscii(readFileSync(join(out, "cookbook.cjs"))), "the bundle is ASCII");

    // From another folder: a start that prints no stack never reads the source map.
    const first = spawnSync(process.execPath, [runner, "recipes"], { env, encoding: "utf8", cwd: tmpdir() });
    assert.equal(first.status, 0, first.stderr);
    assert.doesNotMatch(first.stderr, /source map read/);
    assert.match(first.stderr, /code cache absent/);
    assert.match(first.stderr, /code cache written/);
    assert.deepEqual(readdirSync(join(out, ".cache")), [`${id}-recipes.v8`]);

    // --version is ours, also from inside another project (yargs would report that project's).
    const elsewhere = mkdtempSync(join(tmpdir(), "cookbook-version-"));
    writeFileSync(join(elsewhere, "package.json"), JSON.stringify({ name: "someone-else", version: "9.9.9" }));
    const version = spawnSync(process.execPath, [runner, "--version"], { env, encoding: "utf8", cwd: elsewhere });
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout.trim(), JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version);
    const second = spawnSync(process.execPath, [runner, "recipes"], { env, encoding: "utf8" });
    assert.equal(second.status, 0, second.stderr);
    assert.match(second.stderr, /code cache used/);
    assert.doesNotMatch(second.stderr, /written/);
    const sources = execFileSync(process.execPath, [join(ROOT, "bin", "cookbook.js"), "recipes"], {
      env: { ...env, COOKBOOK_FROM_SOURCE: "1" },
      encoding: "utf8",
    });
    assert.equal(first.stdout, sources);
    assert.equal(second.stdout, sources);
    assert.match(sources, /^sl_basic\s/m);

    // A damaged cache (V8 would crash on it) is ignored and rewritten.
    const cacheFile = join(out, ".cache", `${id}-recipes.v8`);
    const bytes = readFileSync(cacheFile);
    for (let i = bytes.length >> 1; i < (bytes.length >> 1) + 64; i++) bytes[i] ^= 0x55;
    writeFileSync(cacheFile, bytes);
    const damaged = spawnSync(process.execPath, [runner, "recipes"], { env, encoding: "utf8" });
    assert.equal(damaged.status, 0, damaged.stderr);
    assert.equal(damaged.stdout, sources);
    assert.match(damaged.stderr, /code cache absent or damaged/);
    assert.match(damaged.stderr, /code cache written/);
    // One V8 made with other flags is rejected by V8 and rewritten.
    const otherFlags = spawnSync(process.execPath, ["--no-flush-bytecode", runner, "recipes"], { env, encoding: "utf8" });
    assert.match(otherFlags.stderr, /code cache rejected/);
    assert.match(otherFlags.stderr, /code cache written/);
    assert.match(spawnSync(process.execPath, ["--no-flush-bytecode", runner, "recipes"], { env, encoding: "utf8" }).stderr, /code cache used/);

    const failedAt = Date.now();
    const failed = spawnSync(process.execPath, [runner, "run", "no_such_recipe"], { env: { ...env, COOKBOOK_DEBUG: "1" }, encoding: "utf8" });
    assert.equal(failed.status, 2);
    assert.match(failed.stderr, /source map read to format a stack/);
    // Only a command that failed before the 1.5 s mark (bin/compiled.js CACHE_AFTER_MS) has run
    // too little to keep; on a loaded machine even this one may take longer, and then its cache is
    // written like any long command's.
    if (Date.now() - failedAt < 1500) assert.ok(!existsSync(join(out, ".cache", `${id}-run.v8`)), "a failed command leaves no cache");
    assert.match(
      failed.stderr,
      new RegExp(`at loadRecipeModule \\(${join(ROOT, "src", "config", "recipe.ts").replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:\\d+:\\d+\\)`),
    );

    // Node 20 refuses import() in a script compiled from a code cache, so the bundle's only
    // import() is src/runtimeImport.ts's fallback (comments aside: esbuild drops them here).
    const { transformSync } = await import("esbuild");
    const code = transformSync(readFileSync(join(out, "cookbook.cjs"), "utf8"), { minifyWhitespace: true, loader: "js" }).code;
    assert.equal(code.match(/(?<![\w$.])import\(/g)?.length, 1, "one import() in the bundle, the runtimeImport fallback");
    // Experiment files (TypeScript through tsx, an ES module) load in a start that used the cache
    // the previous one wrote, when a stray import() would fail.
    const experiments = join(out, "exp");
    mkdirSync(experiments);
    const overrides = "{ max_steps: 2, batch_size: 4, eval_every: 0, save_every: 0 }";
    writeFileSync(
      join(experiments, "typed.ts"),
      `const steps: number = 2;\nexport default { name: "typed", runs: [{ name: "fit", recipe: "sl_basic", overrides: { ...${overrides}, max_steps: steps } }], baselines: [] };\n`,
    );
    writeFileSync(
      join(experiments, "plain.mjs"),
      `export const experiment = { name: "plain", runs: [{ name: "fit", recipe: "sl_basic", overrides: ${overrides} }], baselines: [] };\n`,
    );
    for (const [file, says] of [
      ["typed.ts", /fit: done after/],
      ["typed.ts", /already finished: fit/],
      ["plain.mjs", /fit: done after/],
    ] as const) {
      const batch = spawnSync(process.execPath, [runner, "batch", join(experiments, file), "--no-eval", "--root", join(experiments, "root")], {
        env,
        encoding: "utf8",
      });
      assert.equal(batch.status, 0, batch.stderr);
      assert.match(batch.stdout, says);
    }
    assert.match(
      spawnSync(process.execPath, [runner, "batch", join(experiments, "plain.mjs"), "--no-eval", "--root", join(experiments, "root")], {
        env,
        encoding: "utf8",
      }).stderr,
      /code cache used/,
    );
    for (const name of ["typed", "plain"]) {
      assert.deepEqual(
        readMetrics(join(experiments, "root", name, "fit"))
          .filter((r) => typeof r["train_mean_nll"] === "number")
          .map((r) => r.step),
        [0, 1],
      );
    }

    const run = join(out, "run");
    execFileSync(
      process.execPath,
      [runner, "run", "sl_basic", `log_path=${run}`, "max_steps=2", "batch_size=4", "save_every=0", "eval_every=0", "behavior_if_log_dir_exists=delete"],
      { env, stdio: "pipe" },
    );
    const rows = readMetrics(run).filter((r) => typeof r["train_mean_nll"] === "number");
    assert.deepEqual(
      rows.map((r) => r.step),
      [0, 1],
    );

    // The W&B thread starts from the wandbWorker.js bundled beside the CLI.
    const wandb = await startFakeWandb();
    try {
      const wandbEnv = { ...env, WANDB_API_KEY: "compiled-test-key-0123", WANDB_BASE_URL: wandb.url };
      const args = [
        runner,
        "run",
        "sl_basic",
        `log_path=${run}`,
        "max_steps=2",
        "batch_size=4",
        "save_every=0",
        "eval_every=0",
        "behavior_if_log_dir_exists=delete",
        "wandb_project=compiled",
      ];
      // Asynchronously: the fake server answers from this process's event loop.
      const done = await promisify(execFile)(process.execPath, args, { env: wandbEnv, encoding: "utf8" });
      assert.doesNotMatch(done.stdout + done.stderr, /compiled-test-key-0123/);
      assert.equal(wandb.runs()[0]?.["project"], "compiled");
      assert.deepEqual(
        wandb
          .history()
          .map((r) => r["_step"])
          .filter((s) => s !== undefined)
          .slice(0, 2),
        [0, 1],
      );
    } finally {
      await wandb.close();
    }
  } finally {
    cleanup();
  }
});
