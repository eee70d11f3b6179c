// GPT-2's byte-to-character table: every byte 0–255 gets a printable Unicode character, so a
// byte-level BPE vocabulary can be stored as ordinary strings in tokenizer.json. Printable
// Latin-1 bytes map to themselves; the rest (controls, space, etc.) are moved to U+0100 onward.

function buildByteToChar(): string[] {
  const printable: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) printable.push(b);
  for (let b = 0xa1; b <= 0xac; b++) printable.push(b);
  for (let b = 0xae; b <= 0xff; b++) printable.push(b);
  const table = new Array<string>(256);
  const isPrintable = new Set(printable);
  let next = 0;
  for (let b = 0; b < 256; b++) {
    if (isPrintable.has(b)) table[b] = String.fromCodePoint(b);
    else table[b] = String.fromCodePoint(256 + next++);
  }
  return table;
}

/** BYTE_TO_CHAR[b] is the one-character string standing for byte b. */
export const BYTE_TO_CHAR: readonly string[] = buildByteToChar();

export const CHAR_TO_BYTE: ReadonlyMap<string, number> = new Map(BYTE_TO_CHAR.map((c, b) => [c, b]));

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder("utf-8", { fatal: false });

/** UTF-8 bytes of `text`, each written as its byte-level character. */
export function toByteChars(text: string): string {
  let out = "";
  for (const b of utf8.encode(text)) out += BYTE_TO_CHAR[b];
  return out;
}

/** Inverse of toByteChars (invalid UTF-8 becomes U+FFFD, as in the HF decoder). */
export function fromByteChars(chars: string): string {
  const bytes: number[] = [];
  for (const c of chars) {
    const b = CHAR_TO_BYTE.get(c);
    if (b === undefined) throw new Error(`fromByteChars: ${JSON.stringify(c)} is not a byte-level character`);
    bytes.push(b);
  }
  return utf8Decoder.decode(new Uint8Array(bytes));
}
