// The bundle's stand-in for @alcalzone/ansi-tokenize in Ink's frame writer must give exactly the
// library's results: tokens, styled cells, and the text of a row assembled the way Ink does it
// (cells from several writes next to blank cells).
import assert from "node:assert/strict";
import { test } from "node:test";
import * as library from "@alcalzone/ansi-tokenize";
import type { StyledChar } from "@alcalzone/ansi-tokenize";
import { styledCharsFromTokens, styledCharsToString, tokenize } from "../../src/tui/ink/ansiTokenize.ts";
import { isLoneGrapheme } from "../../src/tui/ink/loneGraphemes.ts";
import { renderChart } from "../../src/tui/core/chart.ts";

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const graphemes = (s: string): string[] => [...segmenter.segment(s)].map((g) => g.segment);

function sameAsLibrary(line: string): void {
  const tokens = tokenize(line);
  assert.deepEqual(tokens, library.tokenize(line), JSON.stringify(line));
  const styled = styledCharsFromTokens(tokens);
  assert.deepEqual(styled, library.styledCharsFromTokens(library.tokenize(line)), JSON.stringify(line));
  assert.equal(styledCharsToString(styled), library.styledCharsToString(styled), JSON.stringify(line));
}

test("every code unit taken as a grapheme of its own is one, next to itself and to letters", () => {
  let checked = 0;
  for (let c = 0; c <= 0xffff; c++) {
    if (!isLoneGrapheme(c)) continue;
    const ch = String.fromCharCode(c);
    assert.deepEqual(graphemes(`a${ch}${ch}a`), ["a", ch, ch, "a"], `U+${c.toString(16)}`);
    checked++;
  }
  assert.ok(checked > 2000, `${checked} code units`);
});

test("tokens, styled cells and text equal the library's on random lines", () => {
  const pieces = [
    "a",
    "Z",
    " ",
    "0",
    "~",
    "·",
    "é",
    "…",
    "│",
    "┤",
    "╭",
    "─",
    "╯",
    "█",
    "▲",
    "⠿",
    "→",
    "\x1b[31m",
    "\x1b[0m",
    "\x1b[1m",
    "\x1b[2m",
    "\x1b[22m",
    "\x1b[39m",
    "\x1b[90m",
    "\x1b[1;31m",
    "\x1b[38;5;123m",
    "\x1b[38;2;1;2;3m",
    "\x1b[48;5;4m",
    "\x1b[49m",
    "\x1b[m",
    // handed to the library: wide, emoji, combining, control, other escapes, links
    "中",
    "❤\uFE0F",
    "e\u0301",
    "\t",
    "\r\n",
    "\x1b[2J",
    "\x1b]8;;https://x.y\x07",
    "\x1b]8;;\x07",
    "\u200D",
    "👍🏽",
  ];
  let seed = 12345;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let i = 0; i < 3000; i++) {
    // Most lines from the fast alphabet only (the case that matters), some with anything.
    const alphabet = i % 3 === 0 ? pieces.length : 30;
    let line = "";
    for (let k = rand(40); k > 0; k--) line += pieces[rand(alphabet)];
    sameAsLibrary(line);
  }
});

test("a real chart's lines and a row assembled from several writes read the same", () => {
  const x = Array.from({ length: 500 }, (_, i) => i);
  const chart = renderChart(
    [
      { x, y: x.map((i) => Math.sin(i / 30)), color: "\x1b[36m" },
      { x, y: x.map((i) => Math.cos(i / 40)), color: "\x1b[33m" },
    ],
    { width: 120, rows: 14, smoothing: 0.9, color: true },
  );
  for (const line of chart.lines) sameAsLibrary(line);
  // Ink fills a row with blank cells (each its own empty style list) and overwrites spans.
  const blank = (): StyledChar => ({ type: "char", value: " ", fullWidth: false, styles: [] });
  const row: StyledChar[] = Array.from({ length: 140 }, blank);
  const a = styledCharsFromTokens(tokenize(chart.lines[3]!));
  const b = styledCharsFromTokens(tokenize("\x1b[1mtrain\x1b[22m \x1b[90m│\x1b[39m x"));
  row.splice(2, a.length, ...a);
  row.splice(130, b.length, ...b);
  assert.equal(styledCharsToString(row), library.styledCharsToString(row));
});
