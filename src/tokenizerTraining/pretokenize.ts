// The pre-tokenizer split, shared by the trainer, our encoder and the tokenizer.json we write
// (so training sees exactly the pieces Hugging Face tokenizers will later see).
//
// Compared with GPT-2's pattern:
// - digits are split one per piece (an optional leading space stays attached: " 5", "8"), which
//   makes column arithmetic learnable by a tiny model;
// - newline runs form their own piece ("\n\n"), and a punctuation run keeps the newlines that
//   follow it. Both keep a role_colon conversation's pieces identical whether it is encoded as
//   one string or chunk by chunk (header "User:" / output " …⏎⏎" / "User:"), which is what the
//   renderer does.
// The pattern uses only syntax that Rust's onig, JavaScript's `u` regexes and
// @huggingface/tokenizers all read the same way.
export const PRETOKENIZE_PATTERN = "[^\\r\\n\\p{L}\\p{N}]?\\p{L}+| ?\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const PRETOKENIZE_REGEX = new RegExp(PRETOKENIZE_PATTERN, "gu");

/**
 * Splits text into pieces the way a `Split` pre-tokenizer with behavior "Isolated" does: every
 * match is a piece and so is any unmatched gap between matches (the pattern matches every
 * character class, so gaps do not occur in practice).
 */
export function pretokenize(text: string): string[] {
  const pieces: string[] = [];
  let prev = 0;
  for (const m of text.matchAll(PRETOKENIZE_REGEX)) {
    const start = m.index ?? 0;
    if (prev < start) pieces.push(text.slice(prev, start));
    if (m[0].length > 0) pieces.push(m[0]);
    prev = start + m[0].length;
  }
  if (prev < text.length) pieces.push(text.slice(prev));
  return pieces;
}
