// What Ink's frame writer (ink/build/output.js) imports from @alcalzone/ansi-tokenize, with the
// same results and a fraction of the work; the bundle gives it to Ink instead of the library
// (scripts/bundlePatches.mjs), the sources through tsx keep the library. Every frame turns each
// line of text into one styled cell per character and back: the library finds characters with
// Intl.Segmenter and copies the style list into every cell, and the first frame of a dashboard
// (8,000 cells, mostly box-drawing characters in a few colours) spent ~100 ms there. Here a line
// whose characters are each their own grapheme (printable ASCII, Latin, punctuation, arrows, box
// drawing, blocks, shapes, braille: what charts and tables are made of) and whose escapes are
// colour/style codes is read one code unit at a time, cells of one run share their style list,
// and neighbouring cells with the same styles emit nothing between them. Anything else goes to
// the library as before. test/tui/ansiTokenize.test.ts checks results equal the library's.
import {
  type AnsiCode,
  type StyledChar,
  type Token,
  ansiCodesToString,
  diffAnsiCodes,
  reduceAnsiCodesIncremental,
  tokenize as libraryTokenize,
} from "@alcalzone/ansi-tokenize";
import { isLoneGrapheme } from "./loneGraphemes.ts";

const ESC = 0x1b;
/** `ESC [ digits/semicolons m`: the style codes the library splits into AnsiCode tokens. */
const SGR = /\x1b\[[0-9;]*m/y;

// Tokens are never mutated downstream (only read, spread or filtered), so one object per
// distinct escape or character serves every line.
const sgrTokens = new Map<string, Token[]>();
const charTokens = new Map<number, Token>();

function tokensOfSgr(code: string): Token[] {
  let tokens = sgrTokens.get(code);
  if (tokens === undefined) {
    tokens = libraryTokenize(code);
    sgrTokens.set(code, tokens);
  }
  return tokens;
}

function charToken(c: number): Token {
  let token = charTokens.get(c);
  if (token === undefined) {
    token = libraryTokenize(String.fromCharCode(c))[0]!;
    charTokens.set(c, token);
  }
  return token;
}

export function tokenize(str: string, endChar = Number.POSITIVE_INFINITY): Token[] {
  if (endChar !== Number.POSITIVE_INFINITY) return libraryTokenize(str, endChar);
  const out: Token[] = [];
  for (let i = 0; i < str.length; ) {
    const c = str.charCodeAt(i);
    if (c === ESC) {
      SGR.lastIndex = i;
      const m = SGR.exec(str);
      if (m === null) return libraryTokenize(str);
      for (const t of tokensOfSgr(m[0])) out.push(t);
      i += m[0].length;
    } else if (isLoneGrapheme(c)) {
      out.push(charToken(c));
      i++;
    } else {
      return libraryTokenize(str);
    }
  }
  return out;
}

export function styledCharsFromTokens(tokens: Token[]): StyledChar[] {
  let codes: AnsiCode[] = [];
  // Cells are only ever read (Ink places them in its grid and prints them), so one object per
  // character and style serves every place it occurs: a chart's rows repeat a few characters.
  const cells = new Map<Token, StyledChar>();
  const out: StyledChar[] = [];
  for (const token of tokens) {
    if (token.type === "ansi") {
      codes = reduceAnsiCodesIncremental(codes, [token]);
      cells.clear();
      continue;
    }
    let cell = cells.get(token);
    if (cell === undefined) {
      cell = { type: "char", value: token.value, fullWidth: token.fullWidth, styles: codes };
      cells.set(token, cell);
    }
    out.push(cell);
  }
  return out;
}

/** Same codes in the same order: the diff between the two is empty. */
function sameCodes(a: readonly AnsiCode[], b: readonly AnsiCode[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.code !== b[i]!.code) return false;
  return true;
}

export function styledCharsToString(chars: StyledChar[]): string {
  let out = "";
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i]!;
    if (i === 0) out += ansiCodesToString(char.styles);
    else if (!sameCodes(chars[i - 1]!.styles, char.styles)) out += ansiCodesToString(diffAnsiCodes(chars[i - 1]!.styles, char.styles));
    out += char.value;
    if (i === chars.length - 1 && char.styles.length > 0) out += ansiCodesToString(diffAnsiCodes(char.styles, []));
  }
  return out;
}
