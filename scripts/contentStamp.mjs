// Content stamps for the install steps (scripts/installNative.mjs, scripts/build.mjs): a digest of
// every input file's path and bytes plus the facts that change the output (Node's ABI, the CPU,
// build settings). A step whose stamp matches what it recorded after its last success does
// nothing, so a second `npm install`, and the install npx reruns on its first `npx cookbook`, take
// a second instead of a rebuild. Stamps are written only after a step succeeded, so an
// interrupted step is redone next time.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, renameSync, writeFileSync, openSync, fsyncSync, closeSync } from "node:fs";
import { join, relative } from "node:path";

/** Files under `dir` (recursively) whose names pass `keep`, sorted. */
export function filesUnder(dir, keep = () => true) {
  const out = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && keep(entry.name)) out.push(join(entry.parentPath ?? entry.path, entry.name));
  }
  return out.sort();
}

/** The digest of `files` (paths relative to `root`, and contents) and `facts` (any JSON). */
export function contentStamp(root, files, facts) {
  const hash = createHash("sha256");
  hash.update(JSON.stringify(facts));
  for (const file of files) {
    hash.update(`\0${relative(root, file)}\0`);
    hash.update(readFileSync(file));
  }
  return hash.digest("hex");
}

/** The stamp recorded in `file`, or undefined. */
export function readStamp(file) {
  try {
    const value = JSON.parse(readFileSync(file, "utf8")).inputs;
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Writes `record` as JSON to `file` through a fsynced temporary file and a rename. */
export function writeStampFile(file, record) {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(record)}\n`);
  const fd = openSync(tmp, "r");
  fsyncSync(fd);
  closeSync(fd);
  renameSync(tmp, file);
}
