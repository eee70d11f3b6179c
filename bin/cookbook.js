#!/usr/bin/env node
// The `cookbook` command. It runs the compiled JavaScript in dist/ (built by `npm install` through
// the "prepare" script, with source maps) when that build is newer than every source file, and
// otherwise registers tsx and runs the TypeScript sources as they are, so an edited checkout never
// runs stale code. COOKBOOK_FROM_SOURCE=1 forces the sources. React's development build is several
// times slower at rendering the dashboard, so production is the default unless the user says otherwise.
import { readdirSync, statSync } from "node:fs";

process.env.NODE_ENV ??= "production";

const STAMP = new URL("../dist/.built", import.meta.url);
const COMPILED_CLI = new URL("../dist/src/cli.js", import.meta.url);
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

function compiledIsCurrent() {
  if (process.env.COOKBOOK_FROM_SOURCE === "1") return false;
  try {
    statSync(COMPILED_CLI);
    return statSync(STAMP).mtimeMs >= newestSourceMs();
  } catch {
    return false;
  }
}

if (compiledIsCurrent()) {
  process.setSourceMapsEnabled?.(true);
  await import(COMPILED_CLI.href);
} else {
  const { register } = await import("tsx/esm/api");
  // The project's tsconfig (react-jsx among others) whatever the working directory: tsx would
  // otherwise look for one from the cwd, and a cookbook started elsewhere failed on its first .tsx.
  register({ tsconfig: new URL("../tsconfig.json", import.meta.url).pathname });
  await import("../src/cli.ts");
}
