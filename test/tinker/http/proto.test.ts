import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeForwardBackwardOutput, decodeSampleResponse, encodeForwardBackwardRequest } from "../../../src/tinker/http/proto/messages.ts";
import { hex } from "./fakeServer.ts";

// Expected bytes are derived by hand from the field numbers in docs/protocol.md#protobuf-messages. A tag byte is
// (field_number << 3) | wire_type, with wire types 0 = varint, 1 = 64-bit, 2 = length-delimited.

test("encode ForwardBackwardRequest", () => {
  const bytes = encodeForwardBackwardRequest({
    modelId: "m",
    seqId: 3,
    data: [
      {
        model_input: { chunks: [{ type: "encoded_text", tokens: [1, 2] }] },
        loss_fn_inputs: { w: { data: [1], dtype: "float32", shape: [1] } },
      },
    ],
    lossFn: "ppo",
    lossFnConfig: { a: 0.5 },
    forwardOnly: true,
  });
  const expected = hex(
    `
    0a 01 6d                      # 1 model_id (LEN 1) "m"
    10 03                         # 2 seq_id varint 3
    1a 20                         # 3 data: Datum, 32 bytes
      0a 0c                       #   Datum.1 model_input: Chunk, 12 bytes
        0a 0a                     #     Chunk.1 encoded_text, 10 bytes
          0a 08 01000000 02000000 #       EncodedText.1 tokens: int32 LE [1, 2]
      12 10                       #   Datum.2 loss_fn_inputs map entry, 16 bytes
        0a 01 77                  #     entry.1 key "w"
        12 0b                     #     entry.2 value: Tensor, 11 bytes
          0a 04 0000803f          #       Tensor.1 dense: float32 LE 1.0
          18 01                   #       Tensor.3 dtype FLOAT32 = 1
          22 01 01                #       Tensor.4 shape, packed [1]
    22 03 70706f                  # 4 loss_fn "ppo"
    2a 0c                         # 5 loss_fn_config map entry, 12 bytes
      0a 01 61                    #   entry.1 key "a"
      11 000000000000e03f         #   entry.2 (wire type 1) double 0.5
    30 01                         # 6 forward_only true
  `.replace(/#.*$/gm, ""),
  );
  assert.equal(Buffer.from(bytes).toString("hex"), Buffer.from(expected).toString("hex"));
});

test("encode omits proto3 defaults and writes int64 tensors as 8-byte values", () => {
  const bytes = encodeForwardBackwardRequest({
    modelId: "",
    seqId: 0,
    data: [{ model_input: { chunks: [] }, loss_fn_inputs: { t: { data: [2], dtype: "int64" } } }],
    lossFn: "ppo",
  });
  const expected = hex(
    `
    1a 16                       # 3 data: Datum, 22 bytes (no model_id, no seq_id)
      12 14                     #   Datum.2 map entry, 20 bytes
        0a 01 74                #     key "t"
        12 0f                   #     Tensor, 15 bytes
          0a 08 0200000000000000 #      dense int64 LE 2
          18 02                 #       dtype INT64 = 2
          22 01 01              #       shape [1] (data length when absent)
    22 03 70706f                # 4 loss_fn "ppo"; no config, no forward_only
  `.replace(/#.*$/gm, ""),
  );
  assert.equal(Buffer.from(bytes).toString("hex"), Buffer.from(expected).toString("hex"));
});

test("image_asset_pointer chunks cannot be encoded", () => {
  assert.throws(
    () =>
      encodeForwardBackwardRequest({
        modelId: "m",
        seqId: 1,
        data: [{ model_input: { chunks: [{ type: "image_asset_pointer", location: "a.png", format: "png" }] }, loss_fn_inputs: {} }],
        lossFn: "ppo",
      }),
    /datum 0: chunk type "image_asset_pointer"/,
  );
});

test("decode SampleResponse", () => {
  const bytes = hex(
    `
    0a 12                         # 1 sequences: SampledSequence, 18 bytes
      08 01                       #   1 stop_reason LENGTH = 1
      12 08 05000000 06000000     #   2 tokens int32 LE [5, 6]
      1a 04 000000bf              #   3 logprobs float32 LE [-0.5]
    12 08 0000c07f 000080bf       # 2 prompt_logprobs float32 [NaN, -1.0]; NaN means null
    1a 28                         # 3 topk_prompt_logprobs, 40 bytes
      0a 10 00000000 00000000 07000000 08000000  # 1 token_ids int32, 2×2 row-major
      12 10 804fc3c7 804fc3c7 000080be 804fc3c7  # 2 logprobs float32; 804fc3c7 = -99999 (empty cell)
      18 02                       #   3 k = 2
      20 02                       #   4 prompt_length = 2
    20 03                         # 4 prompt_cache_hit_tokens = 3
  `.replace(/#.*$/gm, ""),
  );
  assert.deepEqual(decodeSampleResponse(bytes), {
    type: "sample",
    sequences: [{ stop_reason: "length", tokens: [5, 6], logprobs: [-0.5] }],
    prompt_logprobs: [null, -1],
    topk_prompt_logprobs: [null, [[7, -0.25]]],
    prompt_cache_hit_tokens: 3,
  });
});

test("decode ForwardBackwardOutput with a BatchedTensor", () => {
  const bytes = hex(
    `
    0a 04 6d3a4345                # 1 loss_fn_output_type "m:CE" → keep "CE"
    12 34                         # 2 loss_fn_outputs: ArrayRecord, 52 bytes
      12 30                       #   2 fields map entry, 48 bytes
        0a 02 6c70                #     key "lp"
        12 2a                     #     BatchedTensor, 42 bytes
          0a 0c 000080bf 000000c0 000040c0           # 1 data float32 [-1, -2, -3]
          12 18 0000000000000000 0400000000000000 0c00000000000000  # 2 offsets int64 [0, 4, 12] (bytes)
          18 01                   #       3 dtype FLOAT32
      18 02                       #   3 num_datums = 2
    1a 13                         # 3 metrics map entry, 19 bytes
      0a 08 6c6f73733a73756d      #   key "loss:sum"
      11 0000000000001840         #   double 6.0
  `.replace(/#.*$/gm, ""),
  );
  assert.deepEqual(decodeForwardBackwardOutput(bytes), {
    loss_fn_output_type: "CE",
    loss_fn_outputs: [{ lp: { data: [-1], dtype: "float32", shape: [1] } }, { lp: { data: [-2, -3], dtype: "float32", shape: [2] } }],
    metrics: { "loss:sum": 6 },
  });
});

test("decode int32 / bfloat16 batched tensors, trailing shapes, concatenated records", () => {
  const first = `
    12 2a                         # 2 ArrayRecord, 42 bytes
      12 26                       #   fields entry, 38 bytes
        0a 01 74                  #     key "t"
        12 21                     #     BatchedTensor, 33 bytes
          0a 08 01000000 02000000 #       1 data int32 [1, 2]
          12 10 0000000000000000 0800000000000000  # 2 offsets [0, 8]: one datum
          18 03                   #       3 dtype INT32 (widened to int64)
          22 01 02                #       4 trailing_shape [2] → datum shape [1, 2]
      18 01                       #   3 num_datums = 1`;
  const second = `
    12 21                         # 2 a second ArrayRecord, 33 bytes (records are concatenated)
      12 1d                       #   fields entry, 29 bytes
        0a 01 62                  #     key "b"
        12 18                     #     BatchedTensor, 24 bytes
          0a 02 803f              #       1 data bf16 0x3f80 = 1.0 (upper half of a float32)
          12 10 0000000000000000 0200000000000000 # 2 offsets [0, 2]
          18 04                   #       3 dtype BFLOAT16 (widened to float32)
      18 01                       #   3 num_datums = 1`;
  const strip = (s: string): string => s.replace(/#.*$/gm, "");
  assert.deepEqual(decodeForwardBackwardOutput(hex(strip(first) + strip(second))).loss_fn_outputs, [
    { t: { data: [1, 2], dtype: "int64", shape: [1, 2] } },
    { b: { data: [1], dtype: "float32", shape: [1] } },
  ]);
  // The same record claiming two datums has one offset too few.
  const bad = strip(first).replace(/18 01\s*$/, "18 02");
  assert.throws(() => decodeForwardBackwardOutput(hex(bad)), /2 offsets for 2 datums \(expected 3\)/);
  assert.throws(() => decodeForwardBackwardOutput(hex("12 05 12")), /malformed protobuf/);
});
