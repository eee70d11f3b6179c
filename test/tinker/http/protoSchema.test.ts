// The hand-written codec (src/tinker/http/proto/messages.ts) against protobufjs reading
// tinker.proto: what one writes the other reads, field for field, in both directions.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import protobuf from "protobufjs";
import {
  decodeForwardBackwardOutput,
  decodeForwardBackwardRequest,
  decodeSampleResponse,
  encodeForwardBackwardOutput,
  encodeForwardBackwardRequest,
  encodeSampleResponse,
} from "../../../src/tinker/http/proto/messages.ts";
import type { Datum } from "../../../src/tinker/types.ts";

const root = protobuf.parse(readFileSync(join(import.meta.dirname, "..", "..", "..", "src", "tinker", "http", "proto", "tinker.proto"), "utf8")).root;
const Request = root.lookupType("tinker_public.ForwardBackwardRequest");
const Output = root.lookupType("tinker_public.ForwardBackwardOutput");
const Sample = root.lookupType("tinker_public.SampleResponse");

const ints32 = (b: Uint8Array): number[] => Array.from(new Int32Array(b.slice().buffer));
const floats32 = (b: Uint8Array): number[] => Array.from(new Float32Array(b.slice().buffer));
const ints64 = (b: Uint8Array): number[] => Array.from(new BigInt64Array(b.slice().buffer), Number);

const DATA: Datum[] = [
  {
    model_input: { chunks: [{ type: "encoded_text", tokens: [1, 70000, 3] }] },
    loss_fn_inputs: { target_tokens: { data: [70000, 3, 4], dtype: "int64", shape: [3] }, weights: { data: [0, 1, 0.5], dtype: "float32", shape: [3] } },
  },
];

test("ForwardBackwardRequest written by our codec reads back field for field in protobufjs, and the reverse", () => {
  const bytes = encodeForwardBackwardRequest({
    modelId: "m-1",
    seqId: 7,
    data: DATA,
    lossFn: "ppo",
    lossFnConfig: { clip_low_threshold: 0.8 },
    forwardOnly: true,
  });
  const m = Request.toObject(Request.decode(bytes), { longs: Number, enums: Number }) as {
    modelId: string;
    seqId: number;
    lossFn: string;
    forwardOnly: boolean;
    lossFnConfig: Record<string, number>;
    data: { modelInput: { encodedText: { tokens: Uint8Array } }[]; lossFnInputs: Record<string, { dense: Uint8Array; dtype: number; shape: number[] }> }[];
  };
  assert.equal(m.modelId, "m-1");
  assert.equal(m.seqId, 7);
  assert.equal(m.lossFn, "ppo");
  assert.equal(m.forwardOnly, true);
  assert.deepEqual(m.lossFnConfig, { clip_low_threshold: 0.8 });
  assert.deepEqual(ints32(m.data[0]!.modelInput[0]!.encodedText.tokens), [1, 70000, 3]);
  const t = m.data[0]!.lossFnInputs["target_tokens"]!;
  assert.deepEqual([ints64(t.dense), t.dtype, t.shape], [[70000, 3, 4], 2, [3]]);
  const w = m.data[0]!.lossFnInputs["weights"]!;
  assert.deepEqual([floats32(w.dense), w.dtype], [[0, 1, 0.5], 1]);

  // protobufjs writes, our server side reads.
  const other = Request.encode(
    Request.fromObject({
      modelId: "m-2",
      seqId: 3,
      lossFn: "cross_entropy",
      data: [
        {
          modelInput: [{ encodedText: { tokens: new Uint8Array(new Int32Array([5, 6]).buffer) } }],
          lossFnInputs: { weights: { dense: new Uint8Array(new Float32Array([1, 2]).buffer), dtype: 1, shape: [2] } },
        },
      ],
    }),
  ).finish();
  const d = decodeForwardBackwardRequest(other);
  assert.equal(d.modelId, "m-2");
  assert.equal(d.seqId, 3);
  assert.deepEqual(d.data[0]!.model_input.chunks, [{ type: "encoded_text", tokens: [5, 6] }]);
  assert.deepEqual(d.data[0]!.loss_fn_inputs["weights"], { data: [1, 2], dtype: "float32", shape: [2] });
});

test("ForwardBackwardOutput and SampleResponse: our encodings read in protobufjs; protobufjs encodings decode with ours", () => {
  const out = {
    loss_fn_output_type: "CrossEntropyLossReturn",
    loss_fn_outputs: [{ logprobs: { data: [-1, -2], dtype: "float32" as const } }, { logprobs: { data: [-3], dtype: "float32" as const } }],
    metrics: { "loss:sum": 6 },
  };
  const o = Output.toObject(Output.decode(encodeForwardBackwardOutput(out)), { longs: Number }) as {
    lossFnOutputType: string;
    metrics: Record<string, number>;
    lossFnOutputs: { numDatums: number; fields: Record<string, { data: Uint8Array; offsets: Uint8Array }> }[];
  };
  assert.equal(o.lossFnOutputType, "CrossEntropyLossReturn");
  assert.deepEqual(o.metrics, { "loss:sum": 6 });
  assert.equal(
    o.lossFnOutputs.reduce((n, r) => n + r.numDatums, 0),
    2,
  );
  assert.deepEqual(floats32(o.lossFnOutputs[0]!.fields["logprobs"]!.data), [-1, -2, -3]);
  assert.deepEqual(
    decodeForwardBackwardOutput(Output.encode(Output.fromObject(o)).finish()).loss_fn_outputs.map((r) => r["logprobs"]!.data),
    [[-1, -2], [-3]],
  );

  const sample = { sequences: [{ stop_reason: "length" as const, tokens: [4, 5], logprobs: [-0.5, -0.25] }], prompt_logprobs: [null, -1.5] };
  const s = Sample.toObject(Sample.decode(encodeSampleResponse(sample)), { enums: Number }) as {
    sequences: { stopReason: number; tokens: Uint8Array; logprobs: Uint8Array }[];
    promptLogprobs: Uint8Array;
  };
  assert.equal(s.sequences[0]!.stopReason, 1);
  assert.deepEqual(ints32(s.sequences[0]!.tokens), [4, 5]);
  assert.deepEqual(floats32(s.sequences[0]!.logprobs), [-0.5, -0.25]);
  assert.ok(Number.isNaN(floats32(s.promptLogprobs)[0]!));
  const back = decodeSampleResponse(Sample.encode(Sample.fromObject(s)).finish());
  assert.deepEqual(back.sequences, sample.sequences);
  assert.deepEqual(back.prompt_logprobs, [null, -1.5]);
});
