// bin/cookbook.js runs the bundle only while it is current: scripts/build.mjs records the source
// tree in dist/.built, and the launcher stats it at each start. Checked in a scratch checkout whose
// src/cli.ts says which of the two ran it (in the bundle, import.meta.url is the bundle's file).
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";

const ROOT = resolve(import.meta.dirname, "../..");

function scratchCheckout(): string {
  const dir = mkdtempSync(join(tmpdir(), "cookbook-launcher-"));
  for (const sub of ["bin", "scripts"]) cpSync(join(ROOT, sub), join(dir, sub), { recursive: true });
  for (const file of ["package.json", "tsconfig.json"]) cpSync(join(ROOT, file), join(dir, file));
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  // What the build injects into every bundle, and the two worker scripts it bundles beside it.
  mkdirSync(join(dir, "src", "tui", "ink"), { recursive: true });
  for (const file of ["segmenter.ts", "loneGraphemes.ts"]) cpSync(join(ROOT, "src", "tui", "ink", file), join(dir, "src", "tui", "ink", file));
  for (const worker of [join("log", "wandb", "worker.ts"), join("engine", "worker", "entry.ts")]) {
    mkdirSync(join(dir, "src", worker, ".."), { recursive: true });
    writeFileSync(join(dir, "src", worker), "export {};\n");
  }
  writeFileSync(
    join(dir, "src", "cli.ts"),
    'import { answer } from "./sub/answer.ts";\nconsole.log(import.meta.url.endsWith("/dist/cookbook.cjs") ? "bundle" : "sources", answer);\n',
  );
  mkdirSync(join(dir, "src", "sub"));
  writeFileSync(join(dir, "src", "sub", "answer.ts"), "export const answer = 42;\n");
  mkdirSync(join(dir, "recipes", "demo"), { recursive: true });
  writeFileSync(join(dir, "recipes", "demo", "index.ts"), "export {};\n");
  return dir;
}

// A clock that each edit and build moves a minute on, so that file times order them whatever the
// file system's time resolution.
let clock = Date.now();
const tick = (path: string): void => {
  clock += 60_000;
  utimesSync(path, new Date(clock), new Date(clock));
};

/** Builds, as if after every edit so far. */
const build = (dir: string): void => {
  const log = execFileSync(process.execPath, [join(dir, "scripts", "build.mjs")], { cwd: dir, encoding: "utf8", stdio: "pipe" });
  assert.doesNotMatch(log, /failed/);
  tick(join(dir, "dist", ".built"));
};

function whichRan(dir: string, env: NodeJS.ProcessEnv = {}): string {
  const out = spawnSync(process.execPath, [join(dir, "bin", "cookbook.js")], {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, COOKBOOK_FROM_SOURCE: "", ...env },
  });
  assert.equal(out.status, 0, out.stderr);
  return out.stdout.trim();
}

/** Dates a path after the last build (a file written since). */
const later = tick;

test("the bundle runs while no source changed; an edit, a new or a removed source runs the sources", () => {
  const dir = scratchCheckout();
  try {
    build(dir);
    const built = JSON.parse(readFileSync(join(dir, "dist", ".built"), "utf8")) as { sources: Record<string, string[]> };
    assert.deepEqual(built.sources["src"], ["cli.ts", "engine/", "log/", "sub/", "tui/"]);
    assert.deepEqual(built.sources["recipes/demo"], ["index.ts"]);
    assert.equal(whichRan(dir), "bundle 42");
    assert.equal(whichRan(dir, { COOKBOOK_FROM_SOURCE: "1" }), "sources 42");

    // An edited source: the sources run, with the edit, until a build.
    writeFileSync(join(dir, "src", "sub", "answer.ts"), "export const answer = 43;\n");
    later(join(dir, "src", "sub", "answer.ts"));
    assert.equal(whichRan(dir), "sources 43");
    build(dir);
    assert.equal(whichRan(dir), "bundle 43");

    // Only touched (same bytes): the build finds its inputs unchanged and renews the stamp.
    later(join(dir, "recipes", "demo", "index.ts"));
    assert.equal(whichRan(dir), "sources 43");
    build(dir);
    assert.equal(whichRan(dir), "bundle 43");

    // An editor's swap file changes the folder, not its sources.
    writeFileSync(join(dir, "src", "sub", ".answer.ts.swp"), "");
    later(join(dir, "src", "sub"));
    assert.equal(whichRan(dir), "bundle 43");

    // A new source file, then a new folder of sources, then a removed one.
    writeFileSync(join(dir, "src", "sub", "extra.ts"), "export {};\n");
    later(join(dir, "src", "sub"));
    assert.equal(whichRan(dir), "sources 43");
    build(dir);
    assert.equal(whichRan(dir), "bundle 43");
    mkdirSync(join(dir, "recipes", "other"));
    writeFileSync(join(dir, "recipes", "other", "index.ts"), "export {};\n");
    later(join(dir, "recipes"));
    assert.equal(whichRan(dir), "sources 43");
    build(dir);
    rmSync(join(dir, "src", "sub", "extra.ts"));
    assert.equal(whichRan(dir), "sources 43");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a build stamped without its source tree is checked by walking the tree", () => {
  const dir = scratchCheckout();
  try {
    build(dir);
    const stamp = join(dir, "dist", ".built");
    const { sources: _dropped, ...older } = JSON.parse(readFileSync(stamp, "utf8")) as Record<string, unknown>;
    writeFileSync(stamp, `${JSON.stringify(older)}\n`);
    assert.equal(whichRan(dir), "bundle 42");
    later(join(dir, "src", "cli.ts"));
    assert.equal(whichRan(dir), "sources 42");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
