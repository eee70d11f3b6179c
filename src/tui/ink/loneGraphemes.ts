// The characters Ink's hot paths can take one UTF-16 code unit at a time: each is a grapheme of
// its own whatever comes before or after it (test/tui/ansiTokenize.test.ts checks every one with
// Intl.Segmenter). Printable ASCII, Latin, punctuation, arrows, math, box drawing, blocks, shapes,
// dingbats, braille: what charts and tables are made of. Anything that can join its neighbours
// (combining marks, joiners, variation selectors, surrogates, Hangul jamo) is outside.
export const LONE_GRAPHEME_LIMIT = 0x2900;

/** The lone graphemes as inclusive ranges of code units, ascending. */
export const LONE_GRAPHEME_RANGES: readonly (readonly [number, number])[] = [
  [0x20, 0x7e],
  [0xa0, 0x2ff],
  [0x2010, 0x2027],
  [0x2030, 0x205e],
  [0x2190, 0x23ff],
  [0x2500, 0x27bf],
  [0x2800, LONE_GRAPHEME_LIMIT - 1],
];

const LONE = new Uint8Array(LONE_GRAPHEME_LIMIT);
for (const [from, to] of LONE_GRAPHEME_RANGES) LONE.fill(1, from, to + 1);

export function isLoneGrapheme(c: number): boolean {
  return LONE[c] === 1;
}
