// Runs the bundled command (dist/cookbook.cjs, made by scripts/build.mjs) with a V8 code cache.
// Compiling the bundle's JavaScript is most of what a start costs (Ink, React, zod and yargs
// alone are megabytes); V8 can instead take the bytecode a previous start produced. Node 20 has no
// compile cache for modules, so the bundle is one script compiled through vm.Script, whose
// `cachedData` is the cache: per build id (a rebuilt bundle never meets an old cache) and per
// command (`watch` caches the UI code it runs, `recipes` its own), written once in
// dist/.cache/ after the command has started (or at exit, for short commands). V8 checks its own
// version and flags and rejects a cache that does not match; the cache is then written again. V8
// does not check the bytes themselves (a damaged cache crashes it), so each file starts with the
// CRC-32 of the rest and a file that does not match is ignored and rewritten. The check guards
// against torn and damaged files, not tampering (whoever can write dist/.cache can write the
// bundle), so a CRC is enough; SHA-256 cost a start 5 ms. Nothing is cached when dist/ is not
// writable; the command only starts slower.
//
// Stack traces name src/ files: frames in the bundle are mapped through its source map when a
// stack is first formatted (the map is not read at start-up).
"use strict";
const { isAscii } = require("node:buffer");
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require("node:fs");
const { createRequire } = require("node:module");
const { dirname, join, resolve } = require("node:path");
const { pathToFileURL } = require("node:url");
const vm = require("node:vm");
const { crc32 } = require("node:zlib");

/** How long after start a long-running command (the UI, a training run) writes its cache. */
const CACHE_AFTER_MS = 1500;

/**
 * Which cache a command line uses: its first word and the names of its flags (`watch <dir>` runs
 * the UI, `watch <dir> --once` prints text), so one cache holds the code that kind of start runs.
 * Bare `cookbook` is "ui".
 */
function cacheProfile(args) {
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

/** A cache file is the CRC-32 of its data (4 bytes, little-endian) and then the data. */
const CHECK_BYTES = 4;

/** The cache's bytes when the file is whole, else undefined. */
function readCache(cacheFile) {
  let file;
  try {
    file = readFileSync(cacheFile);
  } catch {
    return undefined;
  }
  const data = file.subarray(CHECK_BYTES);
  return file.length > CHECK_BYTES && crc32(data) === file.readUInt32LE(0) ? data : undefined;
}

function writeCache(script, cacheFile) {
  try {
    mkdirSync(dirname(cacheFile), { recursive: true });
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    const data = script.createCachedData();
    const check = Buffer.alloc(CHECK_BYTES);
    check.writeUInt32LE(crc32(data));
    writeFileSync(tmp, Buffer.concat([check, data]));
    renameSync(tmp, cacheFile);
    if (process.env.COOKBOOK_CODE_CACHE_DEBUG === "1") process.stderr.write(`cookbook: code cache written to ${cacheFile}\n`);
  } catch {
    // A read-only install: every start compiles, nothing else changes.
  }
}

const BASE64 = new Int8Array(128).fill(-1);
for (const [i, c] of [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"].entries()) BASE64[c.charCodeAt(0)] = i;
const SEMICOLON = 59;
const COMMA = 44;

/**
 * Walks the VLQ segments of `mappings` (bytes) from `start`, carrying the running source, line and
 * column in `state` (fields 1–3 of each segment are deltas to them; field 0, the generated column,
 * restarts at each line). With `oneLine` it stops at the line's end and calls
 * `onSegment(generatedColumn, namesSource)` after each segment, stopping early when it returns
 * false; otherwise it runs to the end and calls `onLine(line, offset)` where each line starts.
 */
function walkMappings(mappings, start, state, oneLine, onSegment, onLine) {
  let field = 0;
  let value = 0;
  let shift = 0;
  let column = 0;
  let line = 0;
  for (let i = start; i < mappings.length; i++) {
    const c = mappings[i];
    if (c === SEMICOLON || c === COMMA) {
      if (field > 0 && oneLine && onSegment(column, field > 1) === false) return;
      field = 0;
      if (c === SEMICOLON) {
        if (oneLine) return;
        column = 0;
        onLine(++line, i + 1);
      }
      continue;
    }
    const digit = c < 128 ? BASE64[c] : -1;
    if (digit < 0) throw new Error(`source map: bad VLQ character at byte ${i}`);
    // Offsets in a map stay far below 2^31, so 32-bit arithmetic holds them.
    value |= (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    const delta = value & 1 ? -(value >>> 1) : value >>> 1;
    value = 0;
    shift = 0;
    if (field === 0) column += delta;
    else if (field <= 3) state[field - 1] += delta;
    field++;
  }
  if (field > 0 && oneLine) onSegment(column, field > 1);
}

/**
 * A source map's position lookup that decodes only what a lookup needs. node:module's SourceMap
 * builds an object per mapping (the bundle has over a million), which cost a start a third of a
 * second whenever any stack was formatted — and libraries format stacks of errors they catch
 * (yargs' package.json probe makes an AssertionError, whose constructor reads its stack). Here one
 * pass over the VLQ bytes notes where each generated line starts and the running source, line and
 * column there; a lookup decodes that line's segments alone.
 * `findEntry(line, column)` (0-based) answers as node:module's SourceMap's does when the line has
 * a segment at or before the column, and with {} otherwise.
 */
function lazySourceMap(map) {
  const mappings = Buffer.from(map.mappings, "latin1");
  const starts = [0];
  const states = [0, 0, 0];
  const state = new Int32Array(3);
  walkMappings(mappings, 0, state, false, undefined, (_line, offset) => {
    starts.push(offset);
    states.push(state[0], state[1], state[2]);
  });
  return {
    findEntry(line, column) {
      if (!(line >= 0 && line < starts.length)) return {};
      state.set(states.slice(line * 3, line * 3 + 3));
      let found = {};
      walkMappings(mappings, starts[line], state, true, (generatedColumn, namesSource) => {
        if (generatedColumn > column) return false;
        found = namesSource
          ? { generatedLine: line, generatedColumn, originalSource: map.sources[state[0]], originalLine: state[1], originalColumn: state[2] }
          : { generatedLine: line, generatedColumn };
        return true;
      });
      return found;
    },
  };
}

/** Maps bundle frames of formatted stacks to the TypeScript sources (lazily: on the first stack). */
function mapStacks(bundleFile) {
  let map;
  const sourceMap = () => {
    if (map === undefined) {
      try {
        map = lazySourceMap(JSON.parse(readFileSync(`${bundleFile}.map`, "utf8")));
        if (process.env.COOKBOOK_CODE_CACHE_DEBUG === "1") process.stderr.write("cookbook: source map read to format a stack\n");
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
function runBundle(distDir, buildId) {
  const bundleFile = join(distDir, "cookbook.cjs");
  // An ASCII bundle (scripts/asciiBundle.mjs) becomes a one-byte string without UTF-8 decoding.
  const bytes = readFileSync(bundleFile);
  const source = isAscii(bytes) ? bytes.latin1Slice() : bytes.toString("utf8");
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

module.exports = { cacheProfile, lazySourceMap, runBundle };
