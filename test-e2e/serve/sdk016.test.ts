// End to end: `cookbook serve` in its own process takes SDK 0.16-style JSON bodies (untyped chunks,
// null = unset, omitted defaults) and our own HTTP client's ≥ 0.18 bodies for the same model and
// gives the same numbers; `cookbook download` then fetches the checkpoint the 0.16 client saved.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { serveEnv, startServe, type ServeProcess } from "./server.ts";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { HttpServiceClient } from "../../src/tinker/http/serviceClient.ts";
import type { Datum } from "../../src/tinker/types.ts";

const run = promisify(execFile);
const CLI = join(import.meta.dirname, "..", "..", "bin", "cookbook.js");

let root: string;
let env: NodeJS.ProcessEnv;
let serve: ServeProcess;
let url: string;

before(async () => {
  root = mkdtempSync(join(tmpdir(), "serve-sdk016-"));
  env = serveEnv({ COOKBOOK_HOME: join(root, "home"), HF_HUB_OFFLINE: "1" });
  serve = await startServe(join(root, "store"), env);
  url = serve.url;
});

after(async () => {
  await serve.stop();
  rmSync(root, { recursive: true, force: true });
});

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const json = (await res.json()) as Record<string, unknown>;
  assert.ok(res.ok, `${path} → ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function result(requestId: unknown): Promise<Record<string, unknown>> {
  for (;;) {
    const res = await fetch(`${url}/api/v1/retrieve_future`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ request_id: requestId, allow_metadata_only: true }),
    });
    if (res.status === 408) continue;
    const json = (await res.json()) as Record<string, unknown>;
    assert.equal(res.status, 200, JSON.stringify(json));
    assert.equal(json["error"], undefined, JSON.stringify(json));
    return json;
  }
}

const TOKENS = [1, 5, 9, 33, 40, 2, 44, 12, 8, 30, 3];
/** The datum as SDK 0.16 serialises it: no chunk type, shape set, nothing else. */
const LEGACY_DATUM = {
  loss_fn_inputs: {
    target_tokens: { data: TOKENS.slice(1), dtype: "int64", shape: [10] },
    weights: { data: Array(10).fill(1.0), dtype: "float32", shape: null },
  },
  model_input: { chunks: [{ tokens: TOKENS.slice(0, -1) }] },
};
const DATUM: Datum = {
  model_input: { chunks: [{ type: "encoded_text", tokens: TOKENS.slice(0, -1) }] },
  loss_fn_inputs: { target_tokens: { data: TOKENS.slice(1), dtype: "int64" }, weights: { data: Array(10).fill(1), dtype: "float32" } },
};

test("0.16-style bodies train a model that our HTTP client then loads and evaluates identically; cookbook download fetches its checkpoint", async () => {
  const { session_id } = await post("/api/v1/create_session", { tags: [], user_metadata: {}, sdk_version: "0.16.1", project_id: null });
  const created = await post("/api/v1/create_model", {
    session_id,
    model_seq_id: 0,
    base_model: "tiny-chat",
    user_metadata: null,
    lora_config: { rank: 8, seed: null, train_unembed: true, train_mlp: true, train_attn: true },
  });
  const modelId = (await result(created["request_id"]))["model_id"] as string;
  const fb = await post("/api/v1/forward_backward", {
    forward_backward_input: { data: [LEGACY_DATUM], loss_fn: "cross_entropy", loss_fn_config: null },
    model_id: modelId,
    seq_id: 1,
  });
  await result(fb["request_id"]);
  await result((await post("/api/v1/optim_step", { adam_params: { learning_rate: 0.01 }, model_id: modelId, seq_id: 2 }))["request_id"]);
  const fwd = await result(
    (await post("/api/v1/forward", { forward_input: { data: [LEGACY_DATUM], loss_fn: "cross_entropy", loss_fn_config: null }, model_id: modelId, seq_id: 3 }))[
      "request_id"
    ],
  );
  const saved = await result((await post("/api/v1/save_weights", { model_id: modelId, path: "legacy", seq_id: 4, ttl_seconds: null }))["request_id"]);
  const path = saved["path"] as string;
  assert.equal(path, `tinker://${modelId}/weights/legacy`);

  // Our client (≥ 0.18 bodies, protobuf forward) loads the checkpoint and sees the same logprobs.
  const ours = new HttpServiceClient({ baseUrl: url, env: {}, logger: { info: () => undefined, warn: () => undefined } });
  try {
    const tc = await ours.createTrainingClientFromState(path);
    const out = await (await tc.forward([DATUM], "cross_entropy")).result();
    const legacyLogprobs = (fwd["loss_fn_outputs"] as Record<string, { data: number[] }>[])[0]!["logprobs"]!.data;
    const ourLogprobs = out.loss_fn_outputs[0]!["logprobs"]!.data;
    assert.equal(ourLogprobs.length, 10);
    ourLogprobs.forEach((v, i) => assert.ok(Math.abs(v - legacyLogprobs[i]!) < 1e-5, `token ${i}: ${v} vs ${legacyLogprobs[i]}`));
    const info = await tc.getInfo();
    assert.equal(info.lora_rank, 8);
  } finally {
    await ours.close();
  }

  // `cookbook download` against the server, as a user would run it.
  const dest = join(root, "downloaded");
  const { stdout } = await run(process.execPath, [CLI, "download", path, "--output", dest], { env: { ...env, TINKER_BASE_URL: url }, timeout: 60_000 });
  assert.match(stdout, /→/);
  const storeDir = join(root, "store", modelId, "weights", "legacy");
  const files = readdirSync(storeDir).sort();
  assert.deepEqual(readdirSync(dest).sort(), files);
  for (const f of files) assert.ok(readFileSync(join(dest, f)).equals(readFileSync(join(storeDir, f))), f);
  // A second download to the same folder is refused with a usage error naming it.
  const again = await run(process.execPath, [CLI, "download", path, "--output", dest], { env: { ...env, TINKER_BASE_URL: url } }).then(
    () => ({ code: 0, stderr: "" }),
    (e: { code?: number; stderr?: string }) => ({ code: e.code ?? -1, stderr: e.stderr ?? "" }),
  );
  assert.equal(again.code, 2);
  assert.match(again.stderr, /already exists/);
});
