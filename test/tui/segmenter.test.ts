// The bundle's Intl.Segmenter (src/tui/ink/segmenter.ts) must split text exactly as ICU does, and
// must not make ICU's segmenter for text it splits itself (that construction is what it saves).
import assert from "node:assert/strict";
import { test } from "node:test";

const RealSegmenter = Intl.Segmenter;
let constructed = 0;
class CountingSegmenter extends RealSegmenter {
  constructor(...args: ConstructorParameters<typeof Intl.Segmenter>) {
    super(...args);
    constructed++;
  }
}
// The module reads the global when it loads: count the real segmenters it makes from then on.
const intl = globalThis.Intl as { Segmenter: typeof Intl.Segmenter };
intl.Segmenter = CountingSegmenter;
const { FastSegmenter } = await import("../../src/tui/ink/segmenter.ts");
intl.Segmenter = RealSegmenter;

// Lone graphemes and controls (split here), then what only ICU splits: CR LF, wide, emoji,
// combining marks, joiners, surrogates, Hangul jamo.
const pieces = [
  ..."aZ 0~é…│┤─█⠿→\t\n\x7f\x85",
  ...["\x1b[31m", "\x1b[0m", "\x1b[38;2;1;2;3m"],
  ...["\r", "\r\n", "中", "❤\uFE0F", "e\u0301", "\u200D", "👍🏽", "🇫🇷", "\u1100\u1161"],
];

function randomLines(count: number): string[] {
  let seed = 4242;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const lines: string[] = ["", "plain ascii", "\r", "a\rb", "a\r\nb"];
  for (let i = 0; i < count; i++) {
    const alphabet = i % 2 === 0 ? pieces.length : 20;
    let line = "";
    for (let k = rand(30); k > 0; k--) line += pieces[rand(alphabet)];
    lines.push(line);
  }
  return lines;
}

const asData = (segments: Iterable<Intl.SegmentData>) => [...segments].map((s) => ({ ...s }));

test("graphemes, indices and containing() equal ICU's on random text", () => {
  const fast = new FastSegmenter();
  const real = new RealSegmenter();
  for (const line of randomLines(3000)) {
    const mine = fast.segment(line);
    const theirs = real.segment(line);
    assert.deepEqual(asData(mine), asData(theirs), JSON.stringify(line));
    for (const at of [-1, 0, 1, Math.floor(line.length / 2), line.length - 1, line.length, 2.7, Number.NaN]) {
      const a = mine.containing(at);
      const b = theirs.containing(at);
      assert.deepEqual(a === undefined ? a : { ...a }, b === undefined ? b : { ...b }, `${JSON.stringify(line)} at ${at}`);
    }
  }
});

test("word granularity, options and locales go to ICU unchanged", () => {
  const text = "Hello, wörld! 中文 text";
  const words = new FastSegmenter("en", { granularity: "word" });
  assert.deepEqual(asData(words.segment(text)), asData(new RealSegmenter("en", { granularity: "word" }).segment(text)));
  assert.deepEqual(words.resolvedOptions(), new RealSegmenter("en", { granularity: "word" }).resolvedOptions());
  assert.deepEqual(FastSegmenter.supportedLocalesOf(["en", "tlh", "fr-CA"]), RealSegmenter.supportedLocalesOf(["en", "tlh", "fr-CA"]));
});

test("text split one code unit at a time never makes ICU's segmenter; the first other text does, once", () => {
  const before = constructed;
  const fast = new FastSegmenter(undefined, { granularity: "grapheme" });
  for (const line of ["\x1b[1mtrain\x1b[22m │ loss 0.25 ┤", "é…→⠿█", "tab\there\nnewline"]) [...fast.segment(line)];
  assert.equal(constructed, before, "segmenting lone graphemes and controls constructed a real segmenter");
  assert.deepEqual(
    [...fast.segment("e\u0301x")].map((s) => s.segment),
    ["e\u0301", "x"],
  );
  [...fast.segment("\r\n")];
  assert.equal(constructed, before + 1);
});
