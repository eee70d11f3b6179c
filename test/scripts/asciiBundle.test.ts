// scripts/asciiBundle.mjs: non-ASCII characters become \uXXXX where that means the same thing
// (comments, regular expressions, strings, untagged templates) and stay where it would not
// (tagged templates see their raw text; white space and line terminators are syntax).
import assert from "node:assert/strict";
import { test } from "node:test";
import vm from "node:vm";
// @ts-expect-error: a build script in plain JavaScript, without declarations.
import { asciiBundle } from "../../scripts/asciiBundle.mjs";

const toAscii = asciiBundle as (text: string) => { text: string; kept: number };

/** What a script's body returns, run as the bundle is run (the body of a function), as JSON. */
function run(source: string): unknown {
  return JSON.parse(vm.runInNewContext(`JSON.stringify((function () {\n${source}\n})())`) as string);
}

test("escapes comments, regular expressions, strings and untagged templates without changing what the code does", () => {
  const source = [
    "// a comment — with an em dash and ▁",
    "/** Fisher–Yates */",
    "const money = /[¢€£]/g;",
    "const wide = /^[😀-😂]$/u;",
    "const tool = /<｜tool▁call▁begin｜>(\\w+)/;",
    'const s = "×÷";',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of an untagged template
    "const t = `a…b${1}c→`;",
    "return [money.test('5€'), wide.test('😁'), wide.test('a'), tool.exec('<｜tool▁call▁begin｜>go')[1], s, t, '½'.length];",
  ].join("\n");
  const { text, kept } = toAscii(source);
  assert.equal(kept, 0);
  assert.match(text, /^[\x00-\x7f]*$/);
  assert.deepEqual(run(text), run(source));
  assert.deepEqual(run(text), [true, true, false, "go", "×÷", "a…b1c→", 1]);
});

test("leaves tagged templates and white space as they are, and says how many it kept", () => {
  const source = ["const raw = String.raw`x…y`;", "const nbsp = 'a\u00a0b';", "return [raw, raw.length, nbsp];"].join("\n");
  // The non-breaking space sits inside a string here; as syntax it would be white space, so it is kept wherever it is.
  const { text, kept } = toAscii(source);
  assert.equal(kept, 2);
  assert.ok(text.includes("String.raw`x…y`"));
  assert.deepEqual(run(text), ["x…y", 3, "a\u00a0b"]);
});

test("a line separator inside a line comment stays (escaping it would swallow the next statement)", () => {
  const source = "let n = 1; // comment\u2028n = 2;\nreturn n;";
  assert.equal(run(source), 2);
  const { text, kept } = toAscii(source);
  assert.equal(kept, 1);
  assert.equal(run(text), 2);
});

test("ASCII text is returned as it is", () => {
  const source = "return 1 + 1; // plain";
  assert.deepEqual(toAscii(source), { text: source, kept: 0 });
});
