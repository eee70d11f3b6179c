#!/usr/bin/env node
// The `cookbook` command. It runs the bundle in dist/ (built by `npm install` through the
// "prepare" script; bin/compiled.js loads it with a code cache and maps stacks to src/) when that
// build is newer than every source file, and otherwise registers tsx and runs the TypeScript
// sources as they are, so an edited checkout never runs stale code. COOKBOOK_FROM_SOURCE=1 forces
// the sources. React's development build is several times slower at rendering the dashboard, so
// production is the default unless the user says otherwise (the bundle holds only production).
//
// Plain CommonJS (bin/package.json), as is compiled.js: Node's ES module loader cost a start
// ~10 ms before its first line ran. The build records the source tree (dist/.built "sources":
// each folder's source files and subfolders), so a start stats those ~630 paths instead of
// listing the tree, which took longer than the stats.
"use strict";
const { readdirSync, readFileSync, statSync } = require("node:fs");
const { join } = require("node:path");
const { pathToFileURL } = require("node:url");

process.env.NODE_ENV ??= "production";

const ROOT = join(__dirname, "..");
const DIST = join(ROOT, "dist");
const SOURCE_DIRS = ["src", "recipes"].map((d) => join(ROOT, d));
const SOURCE_FILE = /\.(ts|tsx|mjs|json)$/;

/** Source files and subfolders ("name/") of a folder, sorted, as scripts/build.mjs records them. */
function sourceEntries(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() || (e.isFile() && SOURCE_FILE.test(e.name)))
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    .sort();
}

/**
 * Whether a source changed after `builtMs`: a source file written since, or a folder whose entries
 * changed since (its mtime) and that now holds other source files or subfolders (an editor's swap
 * file beside the sources changes the folder, not the sources). A missing path throws.
 */
function changedSince(builtMs, tree) {
  for (const [dir, names] of Object.entries(tree)) {
    const path = join(ROOT, dir);
    if (statSync(path).mtimeMs > builtMs && sourceEntries(path).join("/") !== names.join("/")) return true;
    for (const name of names) if (!name.endsWith("/") && statSync(join(path, name)).mtimeMs > builtMs) return true;
  }
  return false;
}

/** The whole tree walked, for a build recorded before it kept its source tree. */
function newestSourceMs() {
  let newest = 0;
  for (const dir of SOURCE_DIRS) {
    for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !SOURCE_FILE.test(entry.name)) continue;
      newest = Math.max(newest, statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
    }
  }
  return newest;
}

/** The build id when dist/ holds a bundle at least as new as the sources, else undefined. */
function currentBuild() {
  if (process.env.COOKBOOK_FROM_SOURCE === "1") return undefined;
  try {
    const stamp = join(DIST, ".built");
    statSync(join(DIST, "cookbook.cjs"));
    const builtMs = statSync(stamp).mtimeMs;
    const { id, sources } = JSON.parse(readFileSync(stamp, "utf8"));
    if (typeof id !== "string") return undefined;
    const stale = sources !== null && typeof sources === "object" ? changedSince(builtMs, sources) : newestSourceMs() > builtMs;
    return stale ? undefined : id;
  } catch {
    return undefined;
  }
}

async function main() {
  const build = currentBuild();
  if (build !== undefined) return require("./compiled.js").runBundle(DIST, build);
  const { register } = await import("tsx/esm/api");
  // The project's tsconfig (react-jsx among others) whatever the working directory: tsx would
  // otherwise look for one from the cwd, and a cookbook started elsewhere failed on its first .tsx.
  register({ tsconfig: join(ROOT, "tsconfig.json") });
  await import(pathToFileURL(join(ROOT, "src", "cli.ts")).href);
}

main().catch((err) => {
  // As an uncaught error at top level would: printed with its stack, exit code 1.
  process.nextTick(() => {
    throw err;
  });
});
