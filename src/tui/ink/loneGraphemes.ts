// The characters Ink's hot paths can take one UTF-16 code unit at a time: each is a grapheme of
// its own whatever comes before or after it (test/tui/ansiTokenize.test.ts checks every one with
// Intl.Segmenter). Printable ASCII, Latin, punctuation, arrows, math, box drawing, blocks, shapes,
// dingbats, braille: what charts and tables are made of. Anything that can join its neighbours
// (combining marks, joiners, variation selectors, surrogates, Hangul jamo) is outside.
export const LONE_GRAPHEME_LIMIT = 0x2900;

export function isLoneGrapheme(c: number): boolean {
  return (
    (c >= 0x20 && c <= 0x7e) ||
    (c >= 0xa0 && c <= 0x2ff) ||
    (c >= 0x2010 && c <= 0x2027) ||
    (c >= 0x2030 && c <= 0x205e) ||
    (c >= 0x2190 && c <= 0x23ff) ||
    (c >= 0x2500 && c <= 0x27bf) ||
    (c >= 0x2800 && c < LONE_GRAPHEME_LIMIT)
  );
}
