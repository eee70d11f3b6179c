// Checkpoint archives and the session listing: the archive URL the REST API hands out serves a tar
// of the checkpoint folder that `downloadCheckpoint` (behind `cookbook download`) unpacks to the
// same bytes; the URL's signature is its only credential, so a forged one is refused.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import { downloadCheckpoint } from "../../src/tinker/http/download.ts";
import { parseTinkerPath } from "../../src/tinker/paths.ts";
import { ceDatum, client, makeEnv, randomTokens, raw, serve, type Env, type Served } from "./helpers.ts";

let env: Env;
let served: Served;
const KEY = "archive-test-key-123";

before(async () => {
  env = makeEnv();
  served = await serve(env, { apiKey: KEY });
});

after(async () => {
  await served.server.close();
  env.cleanup();
});

test("a checkpoint downloads through its archive URL and unpacks to the files the store holds", async () => {
  const remote = client(served.server.url, { apiKey: KEY });
  try {
    const tc = await remote.createLoraTrainingClient(env.modelDir, { rank: 4, seed: 1 });
    await (await tc.forwardBackward([ceDatum(randomTokens(8, 1))], "cross_entropy")).result();
    await (await tc.optimStep({ learning_rate: 1e-2 })).result();
    const saved = await (await tc.saveState("arch")).result();
    const sampler = await (await tc.saveWeightsForSampler("arch-s")).result();
    const rest = remote.createRestClient();

    for (const path of [saved.path, sampler.path]) {
      const p = parseTinkerPath(path);
      const storeDir = served.server.core.service.store.checkpointDir(p.modelId, p.kind, p.name);
      const dest = join(env.root, "downloads", p.kind);
      const r = await downloadCheckpoint(rest, path, dest);
      assert.equal(r.dir, dest);
      const files = readdirSync(storeDir).sort();
      assert.deepEqual(readdirSync(dest).sort(), files, path);
      for (const f of files) assert.ok(readFileSync(join(dest, f)).equals(readFileSync(join(storeDir, f))), `${path}: ${f} differs`);
      assert.ok(r.bytes > files.length * 512, `${path}: the archive holds the files (${r.bytes} bytes)`);
    }
    assert.ok(
      readdirSync(join(env.root, "downloads", "weights")).some((f) => f.includes("optim")),
      "the training checkpoint carries its optimizer state",
    );

    // An existing destination is refused unless overwriting, and nothing is left half-written.
    const dest = join(env.root, "downloads", "weights");
    await assert.rejects(downloadCheckpoint(rest, saved.path, dest), /already exists/);
    const again = await downloadCheckpoint(rest, saved.path, dest, { overwrite: true });
    assert.equal(again.dir, dest);
    assert.deepEqual(
      readdirSync(join(env.root, "downloads")).filter((f) => f.startsWith(".")),
      [],
    );

    // A missing checkpoint is a 404 naming it.
    await assert.rejects(rest.getCheckpointArchiveUrlFromTinkerPath(`tinker://${tc.modelId}/weights/nope`), /404|not found/);
  } finally {
    await remote.close();
  }
});

test("the archive URL needs no API key but a valid signature; the archive endpoint needs the key", async () => {
  const remote = client(served.server.url, { apiKey: KEY });
  try {
    const tc = await remote.createLoraTrainingClient(env.modelDir, { rank: 4, seed: 2 });
    const saved = await (await tc.saveState("signed")).result();
    const p = parseTinkerPath(saved.path);
    const archivePath = `/api/v1/training_runs/${p.modelId}/checkpoints/weights/signed/archive`;
    assert.equal((await raw(served.server.url, archivePath)).status, 401);
    const ok = await raw(served.server.url, archivePath, { headers: { "x-api-key": KEY, accept: "application/json" } });
    assert.equal(ok.status, 200);
    const url = String(ok.json["url"]);
    assert.ok(Date.parse(String(ok.json["expires"])) > Date.now());
    const tar = await fetch(url);
    assert.equal(tar.status, 200);
    assert.equal(tar.headers.get("content-type"), "application/x-tar");
    await tar.arrayBuffer();
    // Change one character of the signature: refused.
    const forged = url.slice(0, -2) + (url.endsWith("AA") ? "BB" : "AA");
    const bad = await fetch(forged);
    assert.equal(bad.status, 403);
    // A token for another path cannot be made by editing the payload either.
    const [base, token] = [url.slice(0, url.lastIndexOf("/") + 1), url.slice(url.lastIndexOf("/") + 1)];
    const payload = JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()) as { p: string; e: number };
    const other = Buffer.from(JSON.stringify({ ...payload, p: `tinker://${p.modelId}/weights/other` })).toString("base64url");
    assert.equal((await fetch(`${base}${other}.${token.split(".")[1]}`)).status, 403);
    // An expired token (signed by the server's own signer) is refused.
    const expired = served.server.core.archives.sign(saved.path, Date.now() - 1000);
    const exp = await fetch(`${base}${expired}`);
    assert.equal(exp.status, 403);
    assert.match(await exp.text(), /expired/);
  } finally {
    await remote.close();
  }
});

test("GET /api/v1/sessions lists live sessions, newest first, with limit/offset", async () => {
  const h = { "x-api-key": KEY };
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const s = await raw(served.server.url, "/api/v1/create_session", {
      json: { tags: [], user_metadata: null, sdk_version: "0.16.1", project_id: null },
      headers: h,
    });
    assert.equal(s.status, 200);
    ids.push(String(s.json["session_id"]));
    await new Promise((r) => setTimeout(r, 3));
  }
  const all = await raw(served.server.url, "/api/v1/sessions?limit=100&offset=0&access_scope=owned", { headers: h });
  assert.equal(all.status, 200);
  const listed = all.json["sessions"] as string[];
  for (const id of ids) assert.ok(listed.includes(id), id);
  assert.ok(listed.indexOf(ids[2]!) < listed.indexOf(ids[0]!), "newest first");
  const page = await raw(served.server.url, "/api/v1/sessions?limit=1&offset=0", { headers: h });
  assert.deepEqual(page.json["sessions"], [listed[0]]);
  assert.equal((await raw(served.server.url, "/api/v1/sessions?limit=-1", { headers: h })).status, 400);
});

test("an archive cut short is an error and leaves no folder behind", async () => {
  const remote = client(served.server.url, { apiKey: KEY });
  const dest = join(env.root, "cut");
  const rest = remote.createRestClient();
  const tc = await remote.createLoraTrainingClient(env.modelDir, { rank: 4, seed: 3 });
  const saved = await (await tc.saveState("cut")).result();
  try {
    // A fetch that serves only the first 1000 bytes of the real archive but announces the full size.
    const cutFetch: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const bytes = new Uint8Array(await res.arrayBuffer());
      return new Response(bytes.subarray(0, 1000), { status: 200, headers: { "content-length": String(bytes.length) } });
    };
    await assert.rejects(downloadCheckpoint(rest, saved.path, dest, { fetch: cutFetch }), /ended after|unpacking|archive/);
    assert.equal(existsSync(dest), false);
    assert.deepEqual(
      readdirSync(env.root).filter((f) => f.startsWith(".download-")),
      [],
    );
  } finally {
    await remote.close();
  }
});
