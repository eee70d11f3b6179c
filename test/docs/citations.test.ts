// Reasons cited in comments must be readable from the repository: every `docs/<file>.md#<anchor>`
// citation (and every markdown link between docs) names a file and a heading that exist, and no
// file cites the background notes that live outside the repository.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { anchors, slug } from "./anchors.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SCANNED = ["src", "recipes", "test", "scripts", "bench", "bin", "docs"];
const TEXT = /\.(ts|tsx|mts|mjs|cjs|js|cc|cpp|h|hpp|proto|md|sh|py)$/;

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...files(path));
    else if (TEXT.test(name)) out.push(path);
  }
  return out;
}

const anchorCache = new Map<string, Set<string> | null>();
function anchorsOf(path: string): Set<string> | null {
  if (!anchorCache.has(path)) anchorCache.set(path, existsSync(path) ? anchors(readFileSync(path, "utf8")) : null);
  return anchorCache.get(path)!;
}

/** `file:line: problem` for every citation in `text` whose doc or heading is missing. */
export function brokenCitations(text: string, file: string, root = ROOT): string[] {
  const problems: string[] = [];
  const lines = text.split("\n");
  const isDoc = file.endsWith(".md");
  lines.forEach((line, i) => {
    const where = `${relative(root, file)}:${i + 1}`;
    const check = (target: string, anchor: string, label: string): void => {
      const found = anchorsOf(target);
      if (found === null) problems.push(`${where}: ${label}: no such file`);
      else if (anchor !== "" && !found.has(anchor)) problems.push(`${where}: ${label}: no heading with that anchor`);
    };
    for (const m of line.matchAll(/(?<![\w./-])docs\/([\w./-]+?\.md)#([\w-]+)/g)) {
      check(join(root, "docs", m[1]!), m[2]!, m[0]);
    }
    if (!isDoc) return;
    for (const m of line.matchAll(/\]\(([^)\s#:]*\.md)?#([\w-]+)\)/g)) {
      const target = m[1] === undefined ? file : join(dirname(file), m[1]);
      check(target, m[2]!, m[0]);
    }
  });
  return problems;
}

// Assembled from parts so this file does not cite them itself.
const OUTSIDE = [
  ["..", "/shared"],
  ["spec", " §"],
  ["engine-numerics", " §"],
  ["inventory", " §"],
  ["protocol", " §"],
  ["spec/", "(tinker-protocol|cookbook-inventory|engine-numerics|compute-backends|tui-guide)"],
  ["ARCHITECTURE", "\\.md"],
].map(([a, b]) => new RegExp(a!.replace(/\./g, "\\.") + b!));

export function outsideCitations(text: string, file: string, root = ROOT): string[] {
  const problems: string[] = [];
  text.split("\n").forEach((line, i) => {
    for (const re of OUTSIDE) {
      const m = re.exec(line);
      if (m) problems.push(`${relative(root, file)}:${i + 1}: cites "${m[0]}", which is not in the repository`);
    }
  });
  return problems;
}

const scanned = SCANNED.flatMap((dir) => files(join(ROOT, dir)));

test("slugs follow GitHub's anchors", () => {
  assert.equal(slug("Renderers (`src/renderers/`)"), "renderers-srcrenderers");
  assert.equal(slug("DPO, preference RL and distillation"), "dpo-preference-rl-and-distillation");
  assert.equal(slug("tml_v0"), "tml_v0");
  assert.equal(slug("Base-model role-colon format"), "base-model-role-colon-format");
  const found = anchors("# A\n## Same\n```\n## Not a heading\n```\n## Same\n");
  assert.deepEqual([...found], ["a", "same", "same-1"]);
});

test("the checker reports a missing doc and a missing heading", () => {
  const file = join(ROOT, "src", "example.ts");
  const docs = "docs"; // kept apart so the scan of this file does not see these citations
  const problems = brokenCitations(`// see ${docs}/protocol.md#no-such-heading and ${docs}/no-such-doc.md#x\n// fine: ${docs}/protocol.md#datum`, file);
  assert.deepEqual(problems, [
    `src/example.ts:1: ${docs}/protocol.md#no-such-heading: no heading with that anchor`,
    `src/example.ts:1: ${docs}/no-such-doc.md#x: no such file`,
  ]);
  assert.equal(outsideCitations(`// (${"spec"} §4.2) and ${".."}/shared/x`, file).length, 2);
});

test("every docs/<file>.md#<anchor> citation and docs link resolves", () => {
  const problems: string[] = [];
  let citations = 0;
  for (const file of scanned) {
    const text = readFileSync(file, "utf8");
    citations += [...text.matchAll(/docs\/[\w./-]+?\.md#[\w-]+/g)].length;
    problems.push(...brokenCitations(text, file));
  }
  const readme = join(ROOT, "README.md");
  problems.push(...brokenCitations(readFileSync(readme, "utf8"), readme));
  assert.deepEqual(problems, []);
  // The project's comments cite docs sections widely; far fewer means the scan missed them.
  assert.ok(citations > 100, `only ${citations} citations found`);
});

test("no file cites notes outside the repository", () => {
  const problems = scanned.flatMap((file) => outsideCitations(readFileSync(file, "utf8"), file));
  const readme = join(ROOT, "README.md");
  problems.push(...outsideCitations(readFileSync(readme, "utf8"), readme));
  assert.deepEqual(problems, []);
});
