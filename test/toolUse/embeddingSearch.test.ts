// The embedding index of search_tool: transformers.js feature extraction on the shipped tiny-embed
// model gives the vectors PyTorch gives on the same weights (fixtures/models/tiny-embed/
// reference.json, written by scripts/makeEmbeddingFixture.py), alone and padded in a batch; the
// index ranks by cosine with an injected embedder exactly as the arithmetic says; the search tool
// serves it like BM25; and a hub id that is not cached is not downloaded offline.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fixtureDataPath } from "../../src/data/fixtures.ts";
import { PROJECT_ROOT } from "../../src/projectRoot.ts";
import { readDocuments, documentSearchTool, type SearchDocument } from "../../src/toolUse/tools/documentSearch.ts";
import { EmbeddingIndex, type Embedder, transformersEmbedder } from "../../src/toolUse/tools/embeddingSearch.ts";
import { runToolCall } from "../../src/toolUse/tool.ts";

interface Reference {
  texts: { text: string; embedding: number[] }[];
}
const reference = JSON.parse(readFileSync(join(PROJECT_ROOT, "fixtures", "models", "tiny-embed", "reference.json"), "utf8")) as Reference;

test("tiny-embed through transformers.js: PyTorch's mean-pooled, normalised vectors, alone and in a padded batch", async () => {
  const embed = await transformersEmbedder("tiny-embed", { allowDownload: false });
  const batch = await embed(reference.texts.map((r) => r.text));
  for (const [i, r] of reference.texts.entries()) {
    const [alone] = await embed([r.text]);
    for (const got of [alone!, batch[i]!]) {
      assert.equal(got.length, r.embedding.length);
      const worst = Math.max(...r.embedding.map((x, j) => Math.abs(x - got[j]!)));
      assert.ok(worst < 1e-5, `${r.text}: max difference ${worst}`);
    }
  }
});

/** Each text's vector counts its words from a fixed list (so cosine is easy to work out by hand). */
function wordCountEmbedder(words: readonly string[]): { embed: Embedder; calls: number[] } {
  const calls: number[] = [];
  return {
    calls,
    embed: async (texts) => {
      calls.push(texts.length);
      return texts.map((t) =>
        Float32Array.from(
          words.map(
            (w) =>
              t
                .toLowerCase()
                .split(/\W+/)
                .filter((x) => x === w).length,
          ),
        ),
      );
    },
  };
}

test("EmbeddingIndex ranks by cosine (ties in document order), embeds documents in batches, and refuses mixed widths", async () => {
  const docs: SearchDocument[] = [
    { id: "a", text: "red red" },
    { id: "b", text: "red blue" },
    { id: "c", text: "blue" },
    { id: "d", title: "green", text: "blue" },
    { id: "e", text: "nothing here" },
  ];
  const { embed, calls } = wordCountEmbedder(["red", "blue", "green"]);
  const index = await EmbeddingIndex.build(docs, embed, 2);
  assert.deepEqual(calls, [2, 2, 1], "five documents in batches of two");
  // Query "red": a = (2,0,0) → 1, b = (1,1,0) → 0.707, c, d, e → 0.
  assert.deepEqual(
    (await index.scores("red")).map((s) => +s.toFixed(6)),
    [1, +Math.SQRT1_2.toFixed(6), 0, 0, 0],
  );
  assert.deepEqual(
    (await index.search("red", 3)).map((d) => d.id),
    ["a", "b", "c"],
  );
  // "blue": c = (0,1,0) → 1, d = (0,1,1) with its title → 0.707 ties b.
  assert.deepEqual(
    (await index.search("blue", 4)).map((d) => d.id),
    ["c", "b", "d", "a"],
  );
  const ragged: Embedder = async (texts) => texts.map((t) => new Float32Array(t.length % 2 === 0 ? 2 : 3));
  await assert.rejects(EmbeddingIndex.build(docs, ragged), /vector of 2 for document b, 3 for the first/);
});

test("the search tool serves the embedding index; each shipped document, searched by its own text, comes back first", async () => {
  const documents = readDocuments(fixtureDataPath("search_corpus.jsonl"));
  const index = await EmbeddingIndex.build(documents, await transformersEmbedder("tiny-embed", { allowDownload: false }));
  for (const d of documents.filter((_, i) => i % 40 === 0)) assert.equal((await index.search(d.text, 1))[0]?.id, d.id, d.text);
  const tool = documentSearchTool(index, { k: 2, maxChars: 200 });
  const out = await runToolCall(tool, JSON.stringify({ query: documents[7]!.text }), 5000);
  assert.equal(out.isError, false, out.content);
  const lines = out.content.split("\n");
  assert.equal(lines.length, 2);
  assert.equal(lines[0], `[${documents[7]!.id}] ${documents[7]!.text}`);
});

test("an embedding model that is nowhere local is not downloaded when downloads are off, and the error names what a folder needs", async () => {
  await assert.rejects(
    transformersEmbedder("acme/no-such-embedder", { allowDownload: false, env: { ...process.env, HF_HOME: "/nonexistent-hf-home" } }),
    (err: Error) => {
      assert.match(err.message, /download from .*acme\/no-such-embedder: skipped/);
      assert.match(err.message, /onnx\/model\.onnx/);
      return true;
    },
  );
});
