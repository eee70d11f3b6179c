// What bounds one request's share of the server: a cap on num_samples × (prompt + max_tokens) with
// a 400 that says how to fit, and finished results that are forgotten soon after they were handed out.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { makeEnv, raw, rawModel, serve, waitFuture, type Env, type Served } from "./helpers.ts";

let env: Env;
let served: Served;
let url: string;

before(async () => {
  env = makeEnv();
  served = await serve(env, { maxSampleTokens: 100, deliveredRetentionSec: 0.2, futureRetentionSec: 30 });
  url = served.server.url;
});

after(async () => {
  await served.server.close();
  env.cleanup();
});

async function sampler(): Promise<string> {
  const { sessionId } = await rawModel(url, env.modelDir);
  const s = await raw(url, "/api/v1/create_sampling_session", { json: { session_id: sessionId, sampling_session_seq_id: 0, base_model: env.modelDir } });
  assert.equal(s.status, 200, JSON.stringify(s.json));
  return String(s.json["sampling_session_id"]);
}

test("a sample request above samples × tokens cap is a 400 naming the numbers; one within it runs", async () => {
  const id = await sampler();
  const prompt = { chunks: [{ tokens: [1, 2, 3, 4] }] };
  const big = await raw(url, "/api/v1/asample", { json: { sampling_session_id: id, seq_id: 0, num_samples: 10, prompt, sampling_params: { max_tokens: 20 } } });
  assert.equal(big.status, 400);
  assert.match(String(big.json["detail"]), /10 × \(4 \+ 20\) = 240 tokens, above this server's limit of 100/);
  assert.match(String(big.json["detail"]), /--max-sample-tokens/);
  const ok = await raw(url, "/api/v1/asample", {
    json: { sampling_session_id: id, seq_id: 1, num_samples: 2, prompt, sampling_params: { max_tokens: 5, seed: 1 } },
  });
  assert.equal(ok.status, 200);
  const r = await waitFuture(url, String(ok.json["request_id"]));
  assert.equal((r.json["sequences"] as unknown[]).length, 2);
});

test("a result is forgotten shortly after it was handed out; one nobody fetched stays", async () => {
  const id = await sampler();
  const prompt = { chunks: [{ tokens: [1, 2, 3] }] };
  const ask = async (seq: number): Promise<string> => {
    const r = await raw(url, "/api/v1/asample", {
      json: { sampling_session_id: id, seq_id: seq, num_samples: 1, prompt, sampling_params: { max_tokens: 2, seed: seq } },
    });
    return String(r.json["request_id"]);
  };
  const fetched = await ask(0);
  const unfetched = await ask(1);
  assert.equal((await waitFuture(url, fetched)).status, 200);
  // The unfetched one finishes too (same sampler, later in line).
  for (let i = 0; i < 100 && served.server.core.futures.size > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    if ((await raw(url, "/api/v1/retrieve_future", { json: { request_id: fetched } })).status === 404) break;
  }
  assert.equal((await raw(url, "/api/v1/retrieve_future", { json: { request_id: fetched } })).status, 404, "handed-out result dropped after the grace time");
  const later = await waitFuture(url, unfetched);
  assert.equal(later.status, 200, "a result nobody fetched is still there");
});
