// Runs the bundled command (dist/cookbook.cjs, made by scripts/build.mjs) with a V8 code cache.
// Compiling the bundle's JavaScript is most of what a start costs (Ink, React, zod and yargs
// alone are megabytes); V8 can instead take the bytecode a previous start produced. Node 20 has no
// compile cache for modules, so the bundle is one script compiled through vm.Script, whose
// `cachedData` is the cache: per build id (a rebuilt bundle never meets an old cache) and per
// command (`watch` caches the UI code it runs, `recipes` its own), written once in
// dist/.cache/ after the command has started (or at exit, for short commands). V8 checks its own
// version and flags and rejects a cache that does not match; the cache is then written again. V8
// does not check the bytes themselves (a damaged cache crashes it), so each file starts with the
// SHA-256 of the rest and a file that does not match is ignored and rewritten. Nothing is cached
// when dist/ is not writable; the command only starts slower.
//
// Stack traces name src/ files: frames in the bundle are mapped through its source map when a
// stack is first formatted (the map is not read at start-up).
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { SourceMap, createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import vm from "node:vm";

/** How long after start a long-running command (the UI, a training run) writes its cache. */
const CACHE_AFTER_MS = 1500;

/**
 * Which cache a command line uses: its first word and the names of its flags (`watch <dir>` runs
 * the UI, `watch <dir> --once` prints text), so one cache holds the code that kind of start runs.
 * Bare `cookbook` is "ui".
 */
export function cacheProfile(args) {
  const words = [
    args.find((a) => !a.startsWith("-")) ?? "ui",
    ...new Set(
      args
        .filter((a) => a.startsWith("--"))
        .map((a) => a.split("=")[0])
        .sort(),
    ),
  ];
  return words
    .join("")
    .replace(/[^A-Za-z0-9_-]/g, "_")
    .slice(0, 80);
}

const DIGEST_BYTES = 32;
const sha256 = (bytes) => createHash("sha256").update(bytes).digest();

/** The cache's bytes when the file is whole, else undefined. */
function readCache(cacheFile) {
  let file;
  try {
    file = readFileSync(cacheFile);
  } catch {
    return undefined;
  }
  const data = file.subarray(DIGEST_BYTES);
  return file.length > DIGEST_BYTES && sha256(data).equals(file.subarray(0, DIGEST_BYTES)) ? data : undefined;
}

function writeCache(script, cacheFile) {
  try {
    mkdirSync(dirname(cacheFile), { recursive: true });
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    const data = script.createCachedData();
    writeFileSync(tmp, Buffer.concat([sha256(data), data]));
    renameSync(tmp, cacheFile);
    if (process.env.COOKBOOK_CODE_CACHE_DEBUG === "1") process.stderr.write(`cookbook: code cache written to ${cacheFile}\n`);
  } catch {
    // A read-only install: every start compiles, nothing else changes.
  }
}

/** Maps bundle frames of formatted stacks to the TypeScript sources (lazily: on the first stack). */
function mapStacks(bundleFile) {
  let map;
  const sourceMap = () => {
    if (map === undefined) {
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${bundleFile}.map`, "utf8")));
      } catch {
        map = null;
      }
    }
    return map;
  };
  const mapDir = dirname(bundleFile);
  const frame = (site) => {
    const text = String(site);
    if (site.getFileName() !== bundleFile) return text;
    const line = site.getLineNumber();
    const column = site.getColumnNumber();
    const entry = sourceMap()?.findEntry(line - 1, column - 1);
    if (!entry?.originalSource) return text;
    return text.replace(`${bundleFile}:${line}:${column}`, `${resolve(mapDir, entry.originalSource)}:${entry.originalLine + 1}:${entry.originalColumn + 1}`);
  };
  Error.prepareStackTrace = (error, sites) => {
    let head;
    try {
      head = Error.prototype.toString.call(error);
    } catch {
      head = "Error";
    }
    return head + sites.map((s) => `\n    at ${frame(s)}`).join("");
  };
}

/** Runs dist/cookbook.cjs of `distDir` with process.argv as its command line. */
export function runBundle(distDir, buildId) {
  const bundleFile = join(distDir, "cookbook.cjs");
  const source = readFileSync(bundleFile, "utf8");
  const cacheFile = join(distDir, ".cache", `${buildId}-${cacheProfile(process.argv.slice(2))}.v8`);
  const cachedData = readCache(cacheFile);
  // The wrapper stands on its own line (lineOffset -1), so positions in stacks are the bundle's.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname, __cookbookUrl) {\n${source}\n})`, {
    filename: bundleFile,
    lineOffset: -1,
    cachedData,
  });
  if (process.env.COOKBOOK_CODE_CACHE_DEBUG === "1") {
    process.stderr.write(
      `cookbook: code cache ${cachedData === undefined ? "absent or damaged" : script.cachedDataRejected ? "rejected" : "used"}: ${cacheFile}\n`,
    );
  }
  if (cachedData === undefined || script.cachedDataRejected) {
    // Once the command has run its start-up code (so that code is in the cache), or at exit.
    let written = false;
    const write = () => {
      if (written) return;
      written = true;
      writeCache(script, cacheFile);
    };
    setTimeout(write, CACHE_AFTER_MS).unref();
    // A command that failed early (a wrong path, a usage error) ran too little to be worth keeping.
    process.on("exit", (code) => {
      if (code === 0) write();
    });
  }
  mapStacks(bundleFile);
  // Node 20 refuses import() inside a script compiled from a code cache, so the bundle imports
  // external packages and experiment files through this module's import() (src/runtimeImport.ts).
  globalThis[Symbol.for("tinker-cookbook-ts.runtimeImport")] = (specifier) => import(specifier);
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(bundleFile), module, bundleFile, distDir, pathToFileURL(bundleFile).href);
}
