// A request refused before its seq_id is read leaves a gap in the model's sequence (issue: the
// next request waited silently until the session expired). Bad JSON that still shows its model_id
// and seq_id consumes that seq_id at once; otherwise (a body over the size limit) the requests
// behind the gap fail after the grace time with an error naming it, and the model carries on.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { ceDatum, makeEnv, randomTokens, raw, rawModel, serve, waitFuture, type Env, type Served } from "./helpers.ts";

let env: Env;
let served: Served;
let url: string;
const DATA = [ceDatum(randomTokens(8, 1))];

before(async () => {
  env = makeEnv();
  served = await serve(env, { seqGapTimeoutSec: 0.5, maxBodyBytes: 64 * 1024 });
  url = served.server.url;
});

after(async () => {
  await served.server.close();
  env.cleanup();
});

const fb = (modelId: string, seq: number): unknown => ({ forward_backward_input: { data: DATA, loss_fn: "cross_entropy" }, model_id: modelId, seq_id: seq });

test("bad JSON that names its model and seq_id fails that seq_id at once; the next request runs", async () => {
  const { modelId } = await rawModel(url, env.modelDir);
  const broken = JSON.stringify(fb(modelId, 1)).replace('"cross_entropy"', '"cross_entropy",,');
  const bad = await raw(url, "/api/v1/forward_backward", { body: broken, headers: { "content-type": "application/json" } });
  assert.equal(bad.status, 400);
  const next = await raw(url, "/api/v1/forward_backward", { json: fb(modelId, 2) });
  assert.equal(next.status, 200);
  const r = await waitFuture(url, next.json["request_id"] as string);
  // Had seq_id 1 stayed a gap, seq_id 2 would have failed with the gap error after 0.5 s.
  assert.equal(r.json["error"], undefined, JSON.stringify(r.json));
});

test("a body over the size limit: the request behind it fails with an error naming the gap, then the model carries on", async () => {
  const { modelId } = await rawModel(url, env.modelDir);
  const huge = { ...(fb(modelId, 1) as object), padding: "x".repeat(100 * 1024) };
  const refused = await raw(url, "/api/v1/forward_backward", { json: huge });
  assert.equal(refused.status, 413);
  const waiting = await raw(url, "/api/v1/forward_backward", { json: fb(modelId, 2) });
  assert.equal(waiting.status, 200);
  const failed = await waitFuture(url, waiting.json["request_id"] as string);
  assert.equal(failed.json["category"], "user");
  assert.match(String(failed.json["error"]), new RegExp(`model ${modelId}: seq_id 1 never arrived within 0.5 s, so seq_id 2 waiting behind it did not run`));
  const after = await raw(url, "/api/v1/forward_backward", { json: fb(modelId, 3) });
  const ok = await waitFuture(url, after.json["request_id"] as string);
  assert.equal(ok.json["error"], undefined, JSON.stringify(ok.json));
  const late = await raw(url, "/api/v1/forward_backward", { json: fb(modelId, 1) });
  assert.equal(late.status, 409);
  assert.match(String(late.json["detail"]), /gave up waiting/);
});
