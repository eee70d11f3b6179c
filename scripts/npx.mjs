// What the install scripts know of npx. `npx cookbook` in a checkout installs the checkout into
// npx's own cache (<npm cache>/_npx/<first 16 hex of sha512(checkout path)>/, a link to it) and
// reruns its install scripts there; an npx interrupted while doing so leaves that folder without
// its package.json, and every later `npx cookbook` then fails with ENOENT until it is removed.
import { createHash } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * True when npm runs the script for npx's cache install, not for `npm install`: the checkout's own
 * install already built everything, and a stale bundle is never run (bin/cookbook.js then takes
 * the sources), so npx builds nothing and its start stays short.
 */
export function ranForNpx() {
  return process.env.npm_command === "exec";
}

/** Removes this checkout's npx cache entry when an interrupted npx left it broken. */
export function repairNpxEntry(root) {
  const cache = process.env.npm_config_cache || join(homedir(), ".npm");
  const entry = join(cache, "_npx", createHash("sha512").update(root).digest("hex").slice(0, 16));
  if (existsSync(entry) && !existsSync(join(entry, "package.json"))) {
    rmSync(entry, { recursive: true, force: true });
    console.log(`cookbook: removed ${entry}, which an interrupted npx had left without its package.json`);
  }
}
