// Makes a bundle's text ASCII where that keeps its meaning. One character above U+00FF anywhere
// in a 4.5 MB script makes V8 hold all of it as two-byte text: reading it decodes UTF-8 into 9 MB
// (about 25 ms of every start on a 2.5 GHz core, more than the code cache saves on some commands),
// where ASCII text is copied byte for byte. esbuild escapes strings and untagged templates itself
// but leaves non-ASCII characters in comments, regular expressions and tagged templates.
//
// A \uXXXX escape means the same character in a comment (nothing), a regular expression (with or
// without the u flag, where an escaped surrogate pair is one code point), a string, an untagged
// template and an identifier. A tagged template sees its raw text (String.raw`…` would see the
// six characters), and a white-space or line-terminator character (U+2028 ends a // comment) is
// syntax, so those are left as they are and counted; the bundle then stays non-ASCII and
// bin/compiled.js decodes it as UTF-8 as before. Escaping lengthens only the lines
// it touches (comments and a few regular expressions), so the source map's columns after an
// escape on such a line are off by a few characters, nowhere else.
import { createRequire } from "node:module";
import vm from "node:vm";

const NON_ASCII = /[^\x00-\x7f]/g;

/** Offsets of the characters of `text` that lie inside the raw text of a tagged template. */
function taggedTemplateSpans(text, ts) {
  const file = ts.createSourceFile("bundle.js", text, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  const spans = [];
  const visit = (node) => {
    if (node.kind === ts.SyntaxKind.TaggedTemplateExpression) spans.push([node.template.getStart(file), node.template.end]);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return spans;
}

/**
 * `text` with every non-ASCII UTF-16 unit written as \uXXXX, except inside tagged templates.
 * Returns the text and the number of characters left unescaped (0: the result is ASCII).
 * `typescript` parses the bundle to find tagged templates; without it (an install without dev
 * dependencies) the text is returned unchanged.
 */
export function asciiBundle(text) {
  if (!/[^\x00-\x7f]/.test(text)) return { text, kept: 0 };
  let ts;
  try {
    ts = createRequire(import.meta.url)("typescript");
  } catch {
    return { text, kept: text.match(NON_ASCII)?.length ?? 0 };
  }
  const spans = taggedTemplateSpans(text, ts);
  const inTagged = (offset) => spans.some(([from, to]) => offset >= from && offset < to);
  let kept = 0;
  const out = text.replace(NON_ASCII, (ch, offset) => {
    if (/\s/.test(ch) || inTagged(offset)) {
      kept++;
      return ch;
    }
    return `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
  // A parse of the result (V8 pre-parses every function) catches an escape in a place where the
  // grammar has no escapes.
  new vm.Script(`(function () {\n${out}\n})`, { filename: "escaped bundle" });
  return { text: out, kept };
}
