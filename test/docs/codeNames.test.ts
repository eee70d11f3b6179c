// The docs name functions, types and fields of the code in backticks (`computeLogprobs`,
// `frozenStartingWeights`); a rename that forgets the docs leaves them describing code that no
// longer exists. Every camelCase name in backticks in README.md and docs/ must occur in the
// sources, unless it is one of the few names that belong to something outside the project.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SOURCES = ["src", "recipes", "test", "test-e2e", "test-skyrl", "scripts", "bench", "bin"];

/** Names the docs quote from outside the project: what they are, so nobody "fixes" them. */
const OUTSIDE: Record<string, string> = {
  cachedData: "the option of Node's vm.Script that takes V8's code cache",
  isEqual: "a method of @cortex-js/compute-engine's expressions",
  dX: "notation in a formula (the gradient of X)",
};

function files(dir: string, ext: RegExp): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...files(path, ext));
    else if (ext.test(name)) out.push(path);
  }
  return out;
}

/** camelCase names in backticks, optionally called: `fooBar`, `fooBar()`. */
export function quotedCodeNames(markdown: string): string[] {
  return [...markdown.matchAll(/`([a-z][a-zA-Z0-9]*[A-Z][a-zA-Z0-9]*)(?:\(\))?`/g)].map((m) => m[1]!);
}

test("quotedCodeNames finds camelCase names in backticks, with or without a call", () => {
  assert.deepEqual(quotedCodeNames("use `runEvaluators()` and `epochSeed`, not `sl_basic`, `Foo` or `x`"), ["runEvaluators", "epochSeed"]);
});

test("every code name the README and docs/ quote exists in the sources", () => {
  const source = SOURCES.flatMap((d) => files(join(ROOT, d), /\.(ts|tsx|mts|mjs|js|cc|h|py)$/))
    .map((f) => readFileSync(f, "utf8"))
    .join("\n");
  const docs = [join(ROOT, "README.md"), ...files(join(ROOT, "docs"), /\.md$/)];
  const missing: string[] = [];
  for (const doc of docs) {
    for (const name of new Set(quotedCodeNames(readFileSync(doc, "utf8")))) {
      if (name in OUTSIDE) continue;
      if (!new RegExp(`\\b${name}\\b`).test(source)) missing.push(`${relative(ROOT, doc)}: \`${name}\``);
    }
  }
  assert.deepEqual(missing, [], "the docs quote names no source file has (renamed or removed?)");
});
