// bin/compiled.js maps stack frames of the bundle through its own source-map lookup (node:module's
// SourceMap parses every mapping up front, a third of a second on the real bundle). It must answer
// exactly as node:module's does: checked on every position of a bundle of several sources, minified
// (many segments per line) and not.
import assert from "node:assert/strict";
import { SourceMap } from "node:module";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { buildSync } from "esbuild";
// @ts-expect-error: bin/ is plain JavaScript without declarations
import { lazySourceMap } from "../../bin/compiled.js";

interface Entry {
  generatedLine?: number;
  generatedColumn?: number;
  originalSource?: string;
  originalLine?: number;
  originalColumn?: number;
}
interface Lookup {
  findEntry(line: number, column: number): Entry;
}

const ROOT = resolve(import.meta.dirname, "../..");

for (const minify of [false, true]) {
  test(`the lazy source map answers as node:module's SourceMap (${minify ? "minified" : "plain"} bundle)`, () => {
    const result = buildSync({
      entryPoints: [join(ROOT, "src", "runs", "index.ts")],
      bundle: true,
      packages: "external",
      platform: "node",
      format: "cjs",
      sourcemap: "external",
      minify,
      write: false,
      outfile: join(ROOT, "out.cjs"),
    });
    const code = result.outputFiles.find((f) => f.path.endsWith(".cjs"))?.text ?? "";
    const map = JSON.parse(result.outputFiles.find((f) => f.path.endsWith(".map"))?.text ?? "{}") as { sources: string[] };
    assert.ok(map.sources.length > 5, "several sources");
    const lazy = lazySourceMap(map) as Lookup;
    const node = new SourceMap(map as ConstructorParameters<typeof SourceMap>[0]);
    let compared = 0;
    let mapped = 0;
    const lines = code.split("\n");
    lines.forEach((text, line) => {
      for (let column = 0; column <= text.length; column += minify ? 7 : 3) {
        const mine = lazy.findEntry(line, column);
        // node:module's falls back to a segment of an earlier line; a frame's position always has
        // a segment on its own line, and the lazy lookup answers {} otherwise.
        if (mine.generatedLine === undefined) continue;
        const theirs = node.findEntry(line, column) as Entry;
        assert.deepEqual(
          [mine.generatedLine, mine.generatedColumn, mine.originalSource, mine.originalLine, mine.originalColumn],
          [theirs.generatedLine, theirs.generatedColumn, theirs.originalSource, theirs.originalLine, theirs.originalColumn],
          `line ${line} column ${column}`,
        );
        compared++;
        if (mine.originalSource !== undefined) mapped++;
      }
    });
    assert.ok(compared > 5000 && mapped > compared / 2, `${compared} positions compared, ${mapped} mapped`);
    assert.deepEqual(lazy.findEntry(lines.length + 5, 0), {});
  });
}

test("a damaged source map is reported, not misread", () => {
  assert.throws(() => lazySourceMap({ sources: ["a.ts"], mappings: "AAAA;A!AA" }), /bad VLQ character at byte 6/);
});
