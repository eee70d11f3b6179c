// The protobuf module's two directions agree with each other, and the server speaks protobuf both ways:
// a forward_backward body sent as protobuf, and results returned as protobuf when asked for.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  decodeForwardBackwardOutput,
  decodeForwardBackwardRequest,
  decodeSampleResponse,
  encodeForwardBackwardOutput,
  encodeForwardBackwardRequest,
  encodeSampleResponse,
} from "../../src/tinker/http/proto/messages.ts";
import type { Datum, ForwardBackwardOutput, SampleResponse } from "../../src/tinker/types.ts";
import { ceDatum, makeEnv, randomTokens, raw, rawModel, serve, waitFuture } from "./helpers.ts";

const PROTO = "application/x-protobuf";

test("ForwardBackwardRequest: client encoding decodes to the same request, sparse tensors included", () => {
  const data: Datum[] = [
    {
      model_input: {
        chunks: [
          { type: "encoded_text", tokens: [5, 6, 7] },
          { type: "image", data: Buffer.from([1, 2, 3]).toString("base64"), format: "png", expected_tokens: 2 },
        ],
      },
      loss_fn_inputs: {
        target_tokens: { data: [6, 7, 8, 9, 10], dtype: "int64", shape: [5] },
        advantages: { data: [0.5, -1.25, 0, 2, 3], dtype: "float32", shape: [5] },
        mask: { data: [1.5, 2.5], dtype: "float32", shape: [2, 3], sparse_crow_indices: [0, 1, 2], sparse_col_indices: [0, 2] },
      },
    },
  ];
  const bytes = encodeForwardBackwardRequest({ modelId: "m-1", seqId: 42, data, lossFn: "ppo", lossFnConfig: { clip_low_threshold: 0.8 }, forwardOnly: true });
  const back = decodeForwardBackwardRequest(bytes);
  assert.equal(back.modelId, "m-1");
  assert.equal(back.seqId, 42);
  assert.equal(back.lossFn, "ppo");
  assert.deepEqual(back.lossFnConfig, { clip_low_threshold: 0.8 });
  assert.equal(back.forwardOnly, true);
  assert.deepEqual(back.data, data);
  const unset = decodeForwardBackwardRequest(encodeForwardBackwardRequest({ modelId: "m", seqId: 0, data, lossFn: "cross_entropy" }));
  assert.equal(unset.seqId, undefined);
  assert.equal(unset.forwardOnly, false);
  assert.equal(unset.lossFnConfig, undefined);
});

test("ForwardBackwardOutput and SampleResponse: server encodings decode to the same records", () => {
  const out: ForwardBackwardOutput = {
    loss_fn_output_type: "ArrayRecord",
    loss_fn_outputs: [
      { logprobs: { data: [-1.5, -0.25], dtype: "float32", shape: [2] }, elementwise_loss: { data: [1.5, 0.25], dtype: "float32", shape: [2] } },
      { logprobs: { data: [-3], dtype: "float32", shape: [1] }, elementwise_loss: { data: [3], dtype: "float32", shape: [1] } },
      { logprobs: { data: [-0.5, -0.5, -2], dtype: "float32", shape: [3] } },
    ],
    metrics: { "loss:sum": 5.25, "tokens:sum": 6 },
  };
  assert.deepEqual(decodeForwardBackwardOutput(encodeForwardBackwardOutput(out)), out);
  const sample: SampleResponse = {
    type: "sample",
    sequences: [
      { stop_reason: "stop", tokens: [1, 2, 3], logprobs: [-0.5, -1, -0.25] },
      { stop_reason: "length", tokens: [4], logprobs: [-2] },
    ],
    prompt_logprobs: [null, -1.5, -0.75],
    topk_prompt_logprobs: [
      null,
      [
        [3, -0.5],
        [9, -1.5],
      ],
      [[7, -0.25]],
    ],
    prompt_cache_hit_tokens: 2,
  };
  assert.deepEqual(decodeSampleResponse(encodeSampleResponse(sample)), sample);
});

test("a protobuf forward_backward body runs, and its result comes back as protobuf or JSON on request", async () => {
  const env = makeEnv();
  const { server } = await serve(env);
  try {
    const { modelId } = await rawModel(server.url, env.modelDir);
    const data = [ceDatum(randomTokens(8, 4)), ceDatum(randomTokens(5, 5))];
    const send = async (seqId: number, forwardOnly: boolean): Promise<string> => {
      const body = encodeForwardBackwardRequest({ modelId, seqId, data, lossFn: "cross_entropy", forwardOnly });
      const r = await raw(server.url, "/api/v1/forward_backward", { body, headers: { "content-type": PROTO } });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.equal(r.json["model_id"], modelId);
      return r.json["request_id"] as string;
    };
    const fwd = await send(1, true);
    const asProto = await waitFuture(server.url, fwd, {}, `${PROTO}, application/json`);
    assert.equal(asProto.status, 200);
    assert.equal(asProto.headers.get("content-type"), PROTO);
    const decoded = decodeForwardBackwardOutput(asProto.bytes);
    const asJson = await waitFuture(server.url, fwd, {}, "application/json");
    assert.match(asJson.headers.get("content-type") ?? "", /json/);
    const json = asJson.json as unknown as ForwardBackwardOutput;
    assert.deepEqual(decoded.metrics, json.metrics);
    assert.deepEqual(
      decoded.loss_fn_outputs.map((o) => o["logprobs"]!.data),
      json.loss_fn_outputs.map((o) => o["logprobs"]!.data),
    );
    assert.deepEqual(
      decoded.loss_fn_outputs.map((o) => o["logprobs"]!.shape),
      [[7], [4]],
    );
    // forward_only really was forward-only: a backward pass now gives the same loss.
    const fb = await send(2, false);
    const fbOut = decodeForwardBackwardOutput((await waitFuture(server.url, fb, {}, PROTO)).bytes);
    assert.equal(fbOut.metrics["loss:sum"], decoded.metrics["loss:sum"]);
    // A malformed protobuf body is a 400 and the server carries on.
    const bad = await raw(server.url, "/api/v1/forward_backward", { body: new Uint8Array([0x0a, 0xff, 0xff]), headers: { "content-type": PROTO } });
    assert.equal(bad.status, 400);
    assert.match(String(bad.json["detail"]), /malformed protobuf/);
    assert.equal((await raw(server.url, "/api/v1/healthz")).json["status"], "ok");
  } finally {
    await server.close();
    env.cleanup();
  }
});
