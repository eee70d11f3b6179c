// The import graph tells the truth about the layers: inside any folder, its entries (files and
// sub-folders) must not import each other in a cycle. An import a/x.ts → b/y.ts counts as an
// edge between the two entries of their nearest common folder that contain them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SOURCE_ROOTS = ["src", "recipes"];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(name) && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** Relative specifiers of static imports, re-exports and literal dynamic imports. */
export function importSpecifiers(text: string): string[] {
  const specs: string[] = [];
  const patterns = [/\bfrom\s+["'](\.{1,2}\/[^"']+)["']/g, /\bimport\s*\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g, /^\s*import\s+["'](\.{1,2}\/[^"']+)["']/gm];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) specs.push(match[1]!);
  return specs;
}

/** The two sibling entries of the nearest common folder that contain `from` and `to`. */
export function folderEdge(from: string, to: string): [string, string] | null {
  const a = from.split(sep);
  const b = to.split(sep);
  let i = 0;
  while (i < a.length - 1 && i < b.length - 1 && a[i] === b[i]) i++;
  // Same folder: files import each other freely.
  if (i === a.length - 1 && i === b.length - 1) return null;
  const parent = a.slice(0, i).join("/");
  return [`${parent}/${a[i]}`, `${parent}/${b[i]}`];
}

/** Every cycle of the graph, as the list of its strongly connected components with >1 node. */
export function stronglyConnected(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let top: string;
      do {
        top = stack.pop()!;
        onStack.delete(top);
        component.push(top);
      } while (top !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return components;
}

/** Every relative import of src/ and recipes/, as [importing file, imported file] from the repo root. */
function importsOfSources(): [string, string][] {
  const out: [string, string][] = [];
  for (const root of SOURCE_ROOTS) {
    for (const file of sourceFiles(join(ROOT, root))) {
      for (const spec of importSpecifiers(readFileSync(file, "utf8"))) out.push([relative(ROOT, file), relative(ROOT, resolve(dirname(file), spec))]);
    }
  }
  return out;
}

/** The front ends sit above the recipes (they list and launch them); the library below never imports one. */
const FRONT_ENDS = ["src/cli.ts", "src/commands/", "src/tui/"];

function folderGraph(): { edges: Map<string, Set<string>>; witnesses: Map<string, string> } {
  const edges = new Map<string, Set<string>>();
  const witnesses = new Map<string, string>();
  for (const [from, to] of importsOfSources()) {
    // src ↔ recipes is a layer boundary, checked by its own rule.
    if (from.split(sep)[0] !== to.split(sep)[0]) continue;
    const edge = folderEdge(from, to);
    if (edge === null) continue;
    if (!edges.has(edge[0])) edges.set(edge[0], new Set());
    edges.get(edge[0])!.add(edge[1]);
    witnesses.set(`${edge[0]} -> ${edge[1]}`, `${from} imports ${to}`);
  }
  return { edges, witnesses };
}

test("folder-level edges and cycle detection find a planted cycle", () => {
  assert.deepEqual(folderEdge("src/rl/train.ts", "src/rl/loop/sync.ts"), ["src/rl/train.ts", "src/rl/loop"]);
  assert.deepEqual(folderEdge("src/a/x.ts", "src/b/c/y.ts"), ["src/a", "src/b"]);
  assert.equal(folderEdge("src/a/x.ts", "src/a/y.ts"), null);
  const edges = new Map([
    ["a", new Set(["b"])],
    ["b", new Set(["c"])],
    ["c", new Set(["a"])],
    ["d", new Set(["a"])],
  ]);
  assert.deepEqual(stronglyConnected(edges), [["a", "b", "c"]]);
  assert.deepEqual(importSpecifiers(`import { x } from "./x.ts";\nexport * from '../y.ts';\nawait import("./z.ts");\nimport "./side.ts";`).sort(), [
    "../y.ts",
    "./side.ts",
    "./x.ts",
    "./z.ts",
  ]);
});

test("recipes import only the library; of src/, only the front ends import recipes/", () => {
  const offenders = importsOfSources().filter(([from, to]) => {
    if (from.startsWith("src/") && to.startsWith("recipes/")) return !FRONT_ENDS.some((f) => from.startsWith(f));
    return from.startsWith("recipes/") && !to.startsWith("recipes/") && !to.startsWith("src/");
  });
  assert.deepEqual(
    offenders.map(([from, to]) => `${from} imports ${to}`),
    [],
  );
});

test("no folder imports another folder that imports it back (inside src/ and inside recipes/)", () => {
  const { edges, witnesses } = folderGraph();
  const cycles = stronglyConnected(edges);
  const described = cycles.map((members) => {
    const inside = new Set(members);
    const lines = members.flatMap((m) => [...(edges.get(m) ?? [])].filter((n) => inside.has(n)).map((n) => `    ${witnesses.get(`${m} -> ${n}`)}`));
    return `  cycle between ${members.join(", ")}:\n${lines.join("\n")}`;
  });
  assert.equal(cycles.length, 0, `folder-level import cycles:\n${described.join("\n")}`);
});

test("the engine's worker reads the store and the loader from engine/storage/, never from the engine's own files that start it", () => {
  const upward = importsOfSources().filter(([from, to]) => from.startsWith("src/engine/worker/") && /^src\/engine\/[^/]+$/.test(to));
  assert.deepEqual(upward, []);
  assert.ok(
    importsOfSources().some(([from, to]) => from.startsWith("src/engine/worker/") && to.startsWith("src/engine/storage/")),
    "the worker imports engine/storage/",
  );
});
