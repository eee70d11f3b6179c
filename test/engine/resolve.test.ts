import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ModelNotFoundError, listLocalModels, resolveModel } from "../../src/engine/resolve.ts";
import { loadModelDir } from "../../src/engine/storage/loadModel.ts";
import { tempDir, writeTinyModel } from "./helpers.ts";

function envFor(root: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { HF_HOME: join(root, "hf"), COOKBOOK_HOME: join(root, "home"), HF_HUB_OFFLINE: "1", ...extra };
}

/** Puts a model into the HF cache layout: models--org--name/snapshots/<rev>/ and refs/main. */
function cacheModel(root: string, repoId: string, rev: string, options: { ref?: boolean; seed?: number } = {}): string {
  const repoDir = join(root, "hf", "hub", `models--${repoId.replace("/", "--")}`);
  const snap = join(repoDir, "snapshots", rev);
  writeTinyModel(snap, { seed: options.seed ?? 1 });
  if (options.ref !== false) {
    mkdirSync(join(repoDir, "refs"), { recursive: true });
    writeFileSync(join(repoDir, "refs", "main"), rev);
  }
  return snap;
}

test("resolution order: local path, shipped fixtures, COOKBOOK_HOME/models, HF cache", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const fixturesDir = join(dir, "fixtures");
    writeTinyModel(join(fixturesDir, "tiny-chat"));
    writeTinyModel(join(dir, "home", "models", "homemade"));
    const snap = cacheModel(dir, "org/cached", "abc123");
    writeTinyModel(join(dir, "work", "org", "cached"));
    const env = envFor(dir);

    const local = await resolveModel(join(dir, "work", "org", "cached"), { env, fixturesDir });
    assert.equal(local.source, "local");
    // A relative name that exists below cwd wins over the cache entry of the same name.
    const relative = await resolveModel("org/cached", { env, fixturesDir, cwd: join(dir, "work") });
    assert.equal(relative.source, "local");
    assert.equal(relative.dir, join(dir, "work", "org", "cached"));

    for (const name of ["tiny-chat", "cookbook/tiny-chat"]) {
      const r = await resolveModel(name, { env, fixturesDir, cwd: dir });
      assert.equal(r.source, "fixture", name);
      assert.equal(r.dir, join(fixturesDir, "tiny-chat"));
    }
    const home = await resolveModel("homemade", { env, fixturesDir, cwd: dir });
    assert.equal(home.source, "cookbook-home");
    const cached = await resolveModel("org/cached", { env, fixturesDir, cwd: dir });
    assert.equal(cached.source, "hf-cache");
    assert.equal(cached.dir, snap);
    assert.equal(loadModelDir(cached.dir).config.hiddenSize, 32);

    const names = listLocalModels({ env, fixturesDir }).map((m) => `${m.source}:${m.name}`);
    assert.deepEqual(names, ["fixture:tiny-chat", "cookbook-home:homemade", "hf-cache:org/cached"]);
  } finally {
    cleanup();
  }
});

test("HF cache honours refs/main and falls back to a complete snapshot", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const env = envFor(dir);
    cacheModel(dir, "org/m", "old", { ref: false, seed: 1 });
    const newer = cacheModel(dir, "org/m", "new", { seed: 2 });
    assert.equal((await resolveModel("org/m", { env, cwd: dir })).dir, newer);
    // refs/main pointing at a missing snapshot: the complete one is used instead.
    writeFileSync(join(dir, "hf", "hub", "models--org--m", "refs", "main"), "gone");
    const r = await resolveModel("org/m", { env, cwd: dir });
    assert.ok(r.dir.endsWith("old") || r.dir.endsWith("new"));
    // HF_HUB_CACHE overrides HF_HOME.
    const other = join(dir, "elsewhere");
    await assert.rejects(resolveModel("org/m", { env: { ...env, HF_HUB_CACHE: other }, cwd: dir }), ModelNotFoundError);
  } finally {
    cleanup();
  }
});

test("not found: the error lists every place looked at and how to get the model", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const env = envFor(dir);
    const fixturesDir = join(dir, "fixtures");
    await assert.rejects(resolveModel("Qwen/Qwen3-0.6B", { env, fixturesDir, cwd: dir }), (err: unknown) => {
      assert.ok(err instanceof ModelNotFoundError);
      assert.equal(err.attempts.length, 2);
      assert.match(err.message, /Hugging Face cache .*models--Qwen--Qwen3-0\.6B: does not exist/);
      assert.match(err.message, /download from https:\/\/huggingface\.co\/Qwen\/Qwen3-0\.6B: skipped \(offline: HF_HUB_OFFLINE=1\)/);
      assert.match(err.message, /hf download Qwen\/Qwen3-0\.6B/);
      return true;
    });
    await assert.rejects(resolveModel("tiny-chat", { env, fixturesDir, cwd: dir }), (err: unknown) => {
      assert.ok(err instanceof ModelNotFoundError);
      const places = err.attempts.map((a) => a.split(" ")[0]);
      assert.deepEqual(places, ["shipped", "cookbook", "Hugging", "download"]);
      assert.ok(err.attempts[0]!.includes(join(fixturesDir, "tiny-chat")));
      return true;
    });
    // An explicit path that lacks weights says what is missing.
    mkdirSync(join(dir, "half"));
    writeFileSync(join(dir, "half", "config.json"), "{}");
    await assert.rejects(resolveModel("./half", { env, cwd: dir }), /local directory .*half: has no model\.safetensors or model\.safetensors\.index\.json/);
  } finally {
    cleanup();
  }
});

interface Served {
  url: string;
  requests: { path: string; headers: IncomingHttpHeaders }[];
  close: () => Promise<void>;
}

async function fakeHub(files: Map<string, Buffer>, commit: string): Promise<Served> {
  const requests: Served["requests"] = [];
  const server = createServer((req, res) => {
    requests.push({ path: req.url ?? "", headers: req.headers });
    const body = files.get(req.url ?? "");
    if (body === undefined) {
      res.writeHead(404, { "content-type": "text/plain" }).end("Entry not found");
      return;
    }
    res.writeHead(200, { "content-length": String(body.length), "x-repo-commit": commit }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

test("downloads from the hub endpoint into the HF cache layout (sharded), then resolves offline", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const src = join(dir, "src");
    writeTinyModel(src, { sharded: true, seed: 5 });
    writeFileSync(join(src, "tokenizer.json"), JSON.stringify({ model: { type: "BPE" } }));
    const files = new Map<string, Buffer>();
    for (const f of readdirSync(src)) files.set(`/acme/tiny/resolve/main/${f}`, readFileSync(join(src, f)));
    const hub = await fakeHub(files, "0123abcd");
    try {
      const env: NodeJS.ProcessEnv = { HF_HOME: join(dir, "hf"), HF_ENDPOINT: hub.url, HF_TOKEN: "hf_secret", COOKBOOK_HOME: join(dir, "home") };
      const r = await resolveModel("acme/tiny", { env, cwd: dir, fixturesDir: join(dir, "none"), log: () => undefined });
      assert.equal(r.source, "download");
      assert.equal(r.dir, join(dir, "hf", "hub", "models--acme--tiny", "snapshots", "0123abcd"));
      assert.equal(readFileSync(join(dir, "hf", "hub", "models--acme--tiny", "refs", "main"), "utf8"), "0123abcd");
      assert.ok(
        hub.requests.every((q) => q.headers.authorization === "Bearer hf_secret"),
        "HF_TOKEN is sent",
      );
      assert.ok(hub.requests.some((q) => q.path.endsWith("/model.safetensors.index.json")));
      const { weights } = loadModelDir(r.dir);
      const { weights: original } = loadModelDir(src);
      for (const [name, w] of original) assert.deepEqual(weights.get(name), w, name);
      assert.ok(
        readdirSync(join(dir, "hf", "hub", "models--acme--tiny", "snapshots")).every((d) => !d.startsWith(".")),
        "no staging folder left",
      );

      const before = hub.requests.length;
      const again = await resolveModel("acme/tiny", { env: { ...env, HF_HUB_OFFLINE: "1" }, cwd: dir, fixturesDir: join(dir, "none") });
      assert.equal(again.source, "hf-cache");
      assert.equal(hub.requests.length, before, "a cached model needs no request");
      const tok = await resolveModel("acme/tiny", { env: { ...env, HF_HUB_OFFLINE: "1" }, need: "tokenizer", cwd: dir, fixturesDir: join(dir, "none") });
      assert.equal(tok.dir, r.dir);

      await assert.rejects(resolveModel("acme/missing", { env, cwd: dir, fixturesDir: join(dir, "none"), log: () => undefined }), (err: unknown) => {
        assert.ok(err instanceof ModelNotFoundError);
        assert.match(err.message, new RegExp(`download from ${hub.url.replace(/[.]/g, "\\.")}/acme/missing: HTTP 404`));
        return true;
      });
      assert.ok(!readdirSync(join(dir, "hf", "hub")).includes("models--acme--missing"), "a failed download leaves no cache folder behind");
      // The same for a tokenizer-only download, and for a repo folder that existed before (kept as it was).
      await assert.rejects(
        resolveModel("acme/missing", { env, need: "tokenizer", cwd: dir, fixturesDir: join(dir, "none"), log: () => undefined }),
        ModelNotFoundError,
      );
      assert.ok(!readdirSync(join(dir, "hf", "hub")).includes("models--acme--missing"), "a failed tokenizer download leaves no cache folder behind");
      mkdirSync(join(dir, "hf", "hub", "models--acme--missing", "refs"), { recursive: true });
      await assert.rejects(resolveModel("acme/missing", { env, cwd: dir, fixturesDir: join(dir, "none"), log: () => undefined }), ModelNotFoundError);
      assert.deepEqual(readdirSync(join(dir, "hf", "hub", "models--acme--missing")), ["refs"]);
    } finally {
      await hub.close();
    }
  } finally {
    cleanup();
  }
});
