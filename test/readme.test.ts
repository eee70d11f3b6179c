// README.md is the front page: everything it shows must work. Its recipes table is the registry,
// every command line it shows parses (recipes against their schemas, commands against their
// options), every key in its TUI table is bound, every linked doc exists, and its library example
// runs on the shipped model.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import yargs from "yargs";
import { recipes } from "../recipes/registry.ts";
import { anchors } from "./docs/anchors.ts";
import { loadAllCommands } from "../src/commands/index.ts";
import { parseConfigArgs } from "../src/config/parse.ts";
import { loadRecipe } from "../src/config/recipe.ts";
import { KEYMAP } from "../src/tui/ui/screens/registry.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");

function codeBlocks(lang: string): string[] {
  return [...README.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]!);
}

/** Splits a shell line into words, honouring double and single quotes. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const m of line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(m[1] ?? m[2] ?? m[3]!);
  return words;
}

function tableRows(header: string): string[][] {
  const lines = README.split("\n");
  const start = lines.findIndex((l) => l.startsWith(header));
  assert.ok(start >= 0, `README has a table starting with ${header}`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .split("|")
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  }
  return rows;
}

test("the recipes table lists exactly the registered recipes", () => {
  const listed = tableRows("| recipe |").map((r) => r[0]!.replace(/`/g, ""));
  assert.deepEqual([...listed].sort(), recipes.map((r) => r.name).sort());
});

test("every cookbook command line in the README parses", async () => {
  const lines = codeBlocks("sh")
    .flatMap((b) => b.split("\n"))
    .map((l) => l.replace(/#.*$/, "").trim())
    .filter((l) => l.startsWith("npx cookbook "));
  assert.ok(lines.length >= 8, `found ${lines.length} command lines`);
  for (const line of lines) {
    const [, , name, ...args] = shellWords(line);
    if (name === "run") {
      const recipe = await loadRecipe(recipes, args[0]!);
      // Flags of `cookbook run` itself (--dry-run, --help) are not config overrides.
      const flags = args.slice(1).filter((a) => a.startsWith("--"));
      for (const flag of flags) assert.ok(["--dry-run", "--help"].includes(flag), `${line}: unknown flag ${flag}`);
      assert.doesNotThrow(
        () =>
          parseConfigArgs(
            recipe.configSchema,
            args.slice(1).filter((a) => !a.startsWith("--")),
          ),
        line,
      );
      continue;
    }
    const command = (await loadAllCommands()).find((c) => String(c.command).split(" ")[0] === name);
    assert.ok(command !== undefined, `README shows an unknown command: ${line}`);
    let handled = false;
    await yargs([name!, ...args])
      .command({
        ...command,
        handler: () => {
          handled = true;
        },
      })
      .strict()
      .exitProcess(false)
      .fail((message, err) => {
        throw err ?? new Error(`${line}: ${message}`);
      })
      .parseAsync();
    assert.ok(handled, line);
  }
});

test("every key in the README's TUI table is bound in the keymap", () => {
  const bound = new Set(KEYMAP.table.flatMap((b) => b.keys));
  for (const [keys] of tableRows("| key |")) {
    for (const key of keys!.replace(/`/g, "").split(/\s+\/\s+|-(?=\d)/)) {
      const spec = key === "enter" ? "return" : key;
      assert.ok(bound.has(spec), `README lists key ${JSON.stringify(key)}, which no binding has`);
    }
  }
});

test("every doc the README links to exists, with the heading it points at", () => {
  const links = [...README.matchAll(/\]\((docs\/[^)#]+)(?:#([\w-]+))?\)/g)].map((m) => ({ file: m[1]!, anchor: m[2] }));
  assert.ok(links.length > 5);
  for (const { file, anchor } of links) {
    assert.ok(existsSync(join(ROOT, file)), file);
    if (anchor !== undefined) assert.ok(anchors(readFileSync(join(ROOT, file), "utf8")).has(anchor), `${file}#${anchor}: no heading with that anchor`);
  }
});

/** A measured number: a curve (`0.30 → 0.47`, `14 → 4`) or a wall time (`~40 s`, `3–5 min`, `26 min`). */
const MEASUREMENT = /\d(?:\.\d+)?\s*→\s*\d|(?:~|\b)\d+(?:[.–-]\d+)?\s*(?:s|min|minutes|seconds)\b/;

test("measured numbers live in each recipe's doc: the README table and the registry only point there", () => {
  const rows = tableRows("| recipe |");
  assert.equal(rows[0]?.length, 3);
  for (const [name, what, measured] of rows) {
    assert.doesNotMatch(what!, MEASUREMENT, `README row ${name} carries a measurement; it belongs in the recipe's doc`);
    assert.match(
      measured!,
      /^\[docs\/[\w.-]+\.md\]\(docs\/[\w.-]+\.md#[\w-]+\)$|^—$/,
      `README row ${name}: the third column links to the doc section with its measurements`,
    );
  }
  for (const r of recipes) {
    assert.doesNotMatch(r.description, MEASUREMENT, `recipe ${r.name}'s description carries a measurement`);
    // The header comment says what the recipe does and why; what its defaults reach is the doc's.
    const source = readFileSync(join(ROOT, "recipes", r.name, "index.ts"), "utf8");
    const header = source.slice(0, source.search(/^import /m));
    assert.doesNotMatch(header, MEASUREMENT, `recipes/${r.name}/index.ts: its header comment carries a measurement`);
  }
});

test("the library example runs on the shipped model", { timeout: 180_000 }, async () => {
  const [example] = codeBlocks("ts");
  assert.ok(example?.includes("tinker-cookbook-ts"));
  const dir = mkdtempSync(join(tmpdir(), "readme-example-"));
  const previous = process.env["COOKBOOK_HOME"];
  process.env["COOKBOOK_HOME"] = dir;
  try {
    const file = join(dir, "example.mts");
    writeFileSync(file, example.replace(/from "tinker-cookbook-ts"/, `from ${JSON.stringify(pathToFileURL(join(ROOT, "src", "index.ts")).href)}`));
    await import(pathToFileURL(file).href);
  } finally {
    if (previous === undefined) delete process.env["COOKBOOK_HOME"];
    else process.env["COOKBOOK_HOME"] = previous;
    rmSync(dir, { recursive: true, force: true });
  }
});
