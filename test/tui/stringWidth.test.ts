// The bundle's string-width wrapper must answer what each wrapped copy of string-width answers.
import assert from "node:assert/strict";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { type StringWidth, widthTable, withWidthTable } from "../../src/tui/ink/stringWidth.ts";

const ROOT = join(import.meta.dirname, "..", "..");
// The copies the bundle holds: Ink's (and widest-line's, cli-truncate's), wrap-ansi's, cliui's.
const COPIES = [
  "node_modules/string-width/index.js",
  "node_modules/wrap-ansi/node_modules/string-width/index.js",
  "node_modules/cliui/node_modules/string-width/index.js",
];

const pieces = [
  "a",
  " ",
  "~",
  "é",
  "·",
  "…",
  "│",
  "┤",
  "╭",
  "█",
  "▲",
  "⠿",
  "⌚",
  "✓",
  "❤",
  "→",
  "\x1b[31m",
  "\x1b[0m",
  "\x1b[1;31m",
  "\x1b[38;5;123m",
  "\x1b[m",
  // answered by the library
  "中",
  "❤\uFE0F",
  "e\u0301",
  "\t",
  "\x1b[2J",
  "\x1b]8;;https://x.y\x07",
  "👍🏽",
  "\u00ad",
  "\u200b",
];

for (const copy of COPIES) {
  test(`string-width wrapper answers as ${copy}`, async () => {
    const real = (await import(pathToFileURL(join(ROOT, copy)).href)).default as StringWidth;
    const fast = withWidthTable(real, widthTable(real));
    let seed = 99;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let i = 0; i < 2000; i++) {
      const alphabet = i % 3 === 0 ? pieces.length : 21;
      let s = "";
      for (let k = rand(30); k > 0; k--) s += pieces[rand(alphabet)];
      assert.equal(fast(s), real(s), JSON.stringify(s));
    }
    assert.equal(fast("\x1b[31m│\x1b[0m", { countAnsiEscapeCodes: true }), real("\x1b[31m│\x1b[0m", { countAnsiEscapeCodes: true }));
  });
}

test("a table of the wrong length is refused", () => {
  const real = (s: string): number => s.length;
  assert.throws(() => withWidthTable(real, "11"), /table has 2 entries/);
});
