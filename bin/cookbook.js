#!/usr/bin/env node
// The `cookbook` command. It runs the bundle in dist/ (built by `npm install` through the
// "prepare" script; bin/compiled.js loads it with a code cache and maps stacks to src/) when that
// build is newer than every source file, and otherwise registers tsx and runs the TypeScript
// sources as they are, so an edited checkout never runs stale code. COOKBOOK_FROM_SOURCE=1 forces
// the sources. React's development build is several times slower at rendering the dashboard, so
// production is the default unless the user says otherwise (the bundle holds only production).
import { readFileSync, readdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

process.env.NODE_ENV ??= "production";

const DIST = new URL("../dist/", import.meta.url);
const SOURCE_DIRS = ["../src/", "../recipes/"].map((d) => new URL(d, import.meta.url));

function newestSourceMs() {
  let newest = 0;
  for (const dir of SOURCE_DIRS) {
    for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !/\.(ts|tsx|mjs|json)$/.test(entry.name)) continue;
      newest = Math.max(newest, statSync(`${entry.parentPath ?? entry.path}/${entry.name}`).mtimeMs);
    }
  }
  return newest;
}

/** The build id when dist/ holds a bundle at least as new as the sources, else undefined. */
function currentBuild() {
  if (process.env.COOKBOOK_FROM_SOURCE === "1") return undefined;
  try {
    const stamp = new URL(".built", DIST);
    statSync(new URL("cookbook.cjs", DIST));
    if (statSync(stamp).mtimeMs < newestSourceMs()) return undefined;
    const { id } = JSON.parse(readFileSync(stamp, "utf8"));
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}

const build = currentBuild();
if (build !== undefined) {
  const { runBundle } = await import("./compiled.js");
  runBundle(fileURLToPath(DIST), build);
} else {
  const { register } = await import("tsx/esm/api");
  // The project's tsconfig (react-jsx among others) whatever the working directory: tsx would
  // otherwise look for one from the cwd, and a cookbook started elsewhere failed on its first .tsx.
  register({ tsconfig: new URL("../tsconfig.json", import.meta.url).pathname });
  await import("../src/cli.ts");
}
