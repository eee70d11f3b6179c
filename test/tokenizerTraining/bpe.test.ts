import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AutoTokenizer } from "@huggingface/transformers";
import {
  BYTE_TO_CHAR,
  ByteLevelBpeEncoder,
  ENDOFTEXT,
  fromByteChars,
  mergeWord,
  pretokenize,
  readTrainedBpe,
  toByteChars,
  trainBpeOnTexts,
  writeHfTokenizer,
} from "../../src/tokenizerTraining/index.ts";
import { Prng } from "../../src/data/synthetic/prng.ts";

test("byte-level table is a bijection onto printable characters", () => {
  assert.equal(new Set(BYTE_TO_CHAR).size, 256);
  assert.equal(BYTE_TO_CHAR[0x20], "Ġ");
  assert.equal(BYTE_TO_CHAR[0x0a], "Ċ");
  assert.equal(BYTE_TO_CHAR[0x41], "A");
  const text = "héllo 🎉\n\t\u0000end";
  assert.equal(fromByteChars(toByteChars(text)), text);
});

test("pretokenize: digits one per piece, newline runs isolated, pieces cover the text", () => {
  assert.deepEqual(pretokenize("What is 123 + 45?"), ["What", " is", " 1", "2", "3", " +", " 4", "5", "?"]);
  assert.deepEqual(pretokenize("Assistant: 81\n\nUser:"), ["Assistant", ":", " 8", "1", "\n\n", "User", ":"]);
  assert.deepEqual(pretokenize("ok?\n\nUser"), ["ok", "?\n\n", "User"]);
  const rng = new Prng(5);
  const alphabet = ["a", "Z", " ", "  ", "\n", "\n\n", "7", "42", "?", "é", "🎉", "\t", ":", "'s", "ü"];
  for (let i = 0; i < 200; i++) {
    const s = Array.from({ length: rng.int(0, 20) }, () => rng.pick(alphabet)).join("");
    assert.equal(pretokenize(s).join(""), s);
  }
});

test("trainer: merges on a tiny corpus are the hand-computed ones", () => {
  // Pieces: "ab" ×1, " ab" ×2, " abc" ×1. Pair counts: (a,b)=4, (Ġ,a)=3, (b,c)=1 → merge a+b;
  // then (Ġ,ab)=3, (ab,c)=1 → merge Ġ+ab; then only (Ġab,c)=1 < minFrequency 2 → stop.
  const bpe = trainBpeOnTexts(["ab ab ab abc"], { vocabSize: 1000, specialTokens: [ENDOFTEXT] });
  assert.deepEqual(bpe.merges, [
    ["a", "b"],
    ["Ġ", "ab"],
  ]);
  assert.equal(bpe.vocab.size, 1 + 256 + 2);
  assert.equal(bpe.vocab.get(ENDOFTEXT), 0);
  assert.equal(bpe.vocab.get("ab"), 257);
  assert.equal(bpe.vocab.get("Ġab"), 258);
  // vocabSize caps the number of merges.
  const capped = trainBpeOnTexts(["ab ab ab abc"], { vocabSize: 258, specialTokens: [ENDOFTEXT] });
  assert.deepEqual(capped.merges, [["a", "b"]]);
  // Ties break on the pair's strings. Pieces "xy", " yx" ×2, " xy": (x,y), (y,x) and (Ġ,y) all
  // occur twice; "x" (U+0078) sorts before "y" and "Ġ" (U+0120).
  const tie = trainBpeOnTexts(["xy yx xy yx"], { vocabSize: 258, specialTokens: ["<s>"] });
  assert.deepEqual(tie.merges, [["x", "y"]]);
  assert.throws(() => trainBpeOnTexts(["a"], { vocabSize: 100, specialTokens: [] }), /below/);
});

test("mergeWord replaces non-overlapping occurrences left to right", () => {
  assert.deepEqual(mergeWord([1, 1, 1, 2, 1, 1], 1, 1, 9), [9, 1, 2, 9]);
});

test("trainer is deterministic and the encoder round-trips arbitrary text", () => {
  const rng = new Prng(1);
  const words = ["the", "cat", "sat", "on", "mat", "What", "is", "Assistant", "User", "12", "+", "=", "?", "héllo"];
  const corpus = Array.from({ length: 300 }, () => Array.from({ length: 8 }, () => rng.pick(words)).join(" "));
  const a = trainBpeOnTexts(corpus, { vocabSize: 320, specialTokens: [ENDOFTEXT] });
  const b = trainBpeOnTexts(corpus, { vocabSize: 320, specialTokens: [ENDOFTEXT] });
  assert.deepEqual(a.merges, b.merges);
  assert.ok(a.vocab.size > 280 && a.vocab.size <= 320, `vocab ${a.vocab.size}`);
  const enc = new ByteLevelBpeEncoder(a);
  for (const text of ["the cat sat", "🎉 emoji ünïcödé 中文 0123456789", "a<|endoftext|>b", "", "\n\n\t  x  "]) {
    assert.equal(enc.decode(enc.encode(text)), text);
  }
  assert.deepEqual(enc.encode("<|endoftext|>"), [0]);
  // Every merge the trainer made is used by the encoder on the merged string itself.
  for (const [l, r] of a.merges.slice(0, 40)) {
    const text = fromByteChars(l + r);
    if (pretokenize(text).length === 1) assert.deepEqual(enc.encode(text), [a.vocab.get(l + r)]);
  }
});

test("written tokenizer.json loads in @huggingface/transformers and agrees with our encoder", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bpe-test-"));
  try {
    const rng = new Prng(2);
    const words = ["User", "Assistant", "What", "is", "hello", "world", "7", "+", "?", ":", "Zorbia"];
    const corpus = Array.from({ length: 400 }, () => Array.from({ length: 6 }, () => rng.pick(words)).join(" ") + "\n\n");
    const bpe = trainBpeOnTexts(corpus, { vocabSize: 400, specialTokens: [ENDOFTEXT] });
    writeHfTokenizer(dir, bpe, { modelMaxLength: 128 });
    const reread = readTrainedBpe(dir);
    assert.deepEqual(reread.merges, bpe.merges);
    const byId = (m: Map<string, number>) => [...m].sort((x, y) => x[1] - y[1]);
    assert.deepEqual(byId(reread.vocab), byId(bpe.vocab));
    const tok = await AutoTokenizer.from_pretrained(dir, { local_files_only: true });
    const enc = new ByteLevelBpeEncoder(bpe);
    const samples = [
      "User: What is 3 + 4?\n\nAssistant: 7\n\nUser:",
      "Hello world! 🎉🙂 naïve café 12345 6.78",
      "  leading spaces and trailing  ",
      "tabs\tand\r\nwindows newlines\n\n\n",
      "special<|endoftext|>inside",
    ];
    for (const s of samples) {
      const ours = enc.encode(s);
      const theirs = tok.encode(s, { add_special_tokens: false });
      assert.deepEqual(theirs, ours, `encode ${JSON.stringify(s)}`);
      assert.equal(tok.decode(theirs), s, `decode ${JSON.stringify(s)}`);
    }
    // Encode with special tokens prepends BOS (Llama-style); skip_special_tokens drops it again.
    const withBos = tok.encode("hello");
    assert.equal(withBos[0], 0);
    assert.equal(tok.decode(withBos, { skip_special_tokens: true }), "hello");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
