// string-width for Ink and its text helpers in the bundle (scripts/bundlePatches.mjs wraps each
// copy of the package with this). string-width segments graphemes and tests each against an
// emoji regular expression whose construction alone takes ~30 ms, at load. Text made only of
// lone graphemes (loneGraphemes.ts) and colour escapes has the sum of its characters' widths;
// those widths are measured with the very same function when the bundle is built, so the answer
// is the library's. Other text, or a call with options, goes to the library.
import { LONE_GRAPHEME_LIMIT, LONE_GRAPHEME_RANGES } from "./loneGraphemes.ts";

export type StringWidth = (input: string, options?: object) => number;

/** One digit per lone grapheme below LONE_GRAPHEME_LIMIT, in code order: its width. */
export function widthTable(width: StringWidth): string {
  let table = "";
  for (const [from, to] of LONE_GRAPHEME_RANGES) for (let c = from; c <= to; c++) table += String(width(String.fromCharCode(c)));
  return table;
}

const ESC = 0x1b;
const SGR = /\x1b\[[0-9;]*m/y;

/** Width + 1 per code unit below LONE_GRAPHEME_LIMIT; 0: not a lone grapheme. */
function widthsOf(table: string): Uint8Array {
  const widths = new Uint8Array(LONE_GRAPHEME_LIMIT);
  let k = 0;
  for (const [from, to] of LONE_GRAPHEME_RANGES) for (let c = from; c <= to; c++) widths[c] = table.charCodeAt(k++) - 0x30 + 1;
  return widths;
}

export function withWidthTable(width: StringWidth, table: string): StringWidth {
  const expected = LONE_GRAPHEME_RANGES.reduce((n, [from, to]) => n + to - from + 1, 0);
  if (table.length !== expected) throw new Error(`string-width table has ${table.length} entries, expected ${expected}`);
  // Made at the first call: the bundle holds several copies of string-width, most never called
  // by a given command, and each table is 10k entries to fill at start-up.
  let widths: Uint8Array | undefined;
  return (input, options) => {
    if (options !== undefined || typeof input !== "string") return width(input, options);
    widths ??= widthsOf(table);
    let total = 0;
    for (let i = 0; i < input.length; ) {
      const c = input.charCodeAt(i);
      if (c === ESC) {
        SGR.lastIndex = i;
        const m = SGR.exec(input);
        if (m === null) return width(input);
        i += m[0].length;
        continue;
      }
      const w = c < LONE_GRAPHEME_LIMIT ? widths[c]! : 0;
      if (w === 0) return width(input);
      total += w - 1;
      i++;
    }
    return total;
  };
}
