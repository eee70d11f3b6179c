// A model that exists nowhere: its tokenizer (loaded before the weights by every recipe) fails with
// every place looked in, like the engine's model lookup, not with a bare "fetch failed".
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { getTokenizer, setTokenizerOffline } from "../../src/tokenizers/index.ts";

test("a missing hub model's tokenizer error lists the places looked in and the failed download", async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tokenizer-missing-"));
  const saved = { cache: process.env["HF_HUB_CACHE"], home: process.env["COOKBOOK_HOME"], endpoint: process.env["HF_ENDPOINT"] };
  const offline = ["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"].map((k) => [k, process.env[k]] as const);
  process.env["HF_HUB_CACHE"] = path.join(tmp, "hub");
  for (const [k] of offline) delete process.env[k];
  // Nothing listens on the discard port: the download fails at once, as offline.
  process.env["HF_ENDPOINT"] = "http://127.0.0.1:9";
  setTokenizerOffline(false);
  try {
    await assert.rejects(getTokenizer("acme/No-Such-Model"), (err: unknown) => {
      const message = (err as Error).message;
      assert.match(message, /^no tokenizer found for "acme\/No-Such-Model"\. Looked in:\n/);
      assert.match(message, /\n {2}- shipped models .*fixtures\/models\/acme\/No-Such-Model: does not exist\n/);
      assert.ok(message.includes(`Hugging Face cache ${path.join(tmp, "hub", "models--acme--No-Such-Model")}: does not exist`), message);
      assert.match(message, /download from http:\/\/127\.0\.0\.1:9\/acme\/No-Such-Model: /);
      assert.match(message, /To get it: run `hf download acme\/No-Such-Model`/);
      assert.doesNotMatch(message, /cannot download the tokenizer/);
      return true;
    });
    // A single name is also looked for under COOKBOOK_HOME/models, as the engine does.
    process.env["COOKBOOK_HOME"] = tmp;
    await assert.rejects(getTokenizer("no-such-tiny"), new RegExp(`cookbook models ${path.join(tmp, "models", "no-such-tiny")}: does not exist`));
  } finally {
    setTokenizerOffline(true);
    for (const [k, v] of [["HF_HUB_CACHE", saved.cache], ["COOKBOOK_HOME", saved.home], ["HF_ENDPOINT", saved.endpoint], ...offline] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
