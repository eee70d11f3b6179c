// Protobuf codecs of the forward_backward request: the hand-written codec in
// src/tinker/http/proto/ against protobufjs over the same messages written as a .proto schema.
// Both turn number arrays into packed little-endian bytes the same way (that part is shared), so
// the difference is the message framing. Prints ms per encode/decode of a large request.
// Usage: npm run bench:proto_codec [-- --datums 256 --tokens 2048 --reps 5]
import { loadavg } from "node:os";
import protobuf from "protobufjs";
import { encodeForwardBackwardRequest } from "../src/tinker/http/proto/messages.ts";
import { decodeForwardBackwardRequest } from "../src/tinker/http/proto/messages.ts";
import { readFloat32s, readInt32s, readInt64s, writeFloat32s, writeInt32s, writeInt64s } from "../src/tinker/http/proto/wire.ts";
import type { Datum } from "../src/tinker/types.ts";

const argv = process.argv.slice(2);
const arg = (name: string, fallback: number): number => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
};
const datums = arg("datums", 256);
const tokens = arg("tokens", 2048);
const reps = arg("reps", 5);

const SCHEMA = `
syntax = "proto3";
package tinker_public;
message ForwardBackwardRequest { string model_id = 1; int32 seq_id = 2; repeated Datum data = 3; string loss_fn = 4; map<string, double> loss_fn_config = 5; bool forward_only = 6; }
message Datum { repeated Chunk model_input = 1; map<string, Tensor> loss_fn_inputs = 2; }
message EncodedText { bytes tokens = 1; }
message Image { bytes data = 1; string format = 2; optional int32 expected_tokens = 3; }
message Chunk { oneof chunk { EncodedText encoded_text = 1; Image image = 2; } }
message SparseCsr { bytes values = 1; bytes crow_indices = 2; bytes col_indices = 3; }
message Tensor { oneof encoding { bytes dense = 1; SparseCsr sparse_csr = 2; } int32 dtype = 3; repeated int64 shape = 4; }
`;
const Request = protobuf.parse(SCHEMA).root.lookupType("tinker_public.ForwardBackwardRequest");

function makeData(): Datum[] {
  return Array.from({ length: datums }, (_, d) => {
    const ids = Array.from({ length: tokens + 1 }, (_, i) => (d * 31 + i * 7) % 50000);
    return {
      model_input: { chunks: [{ type: "encoded_text" as const, tokens: ids.slice(0, -1) }] },
      loss_fn_inputs: {
        target_tokens: { data: ids.slice(1), dtype: "int64" as const, shape: [tokens] },
        weights: { data: Array.from({ length: tokens }, (_, i) => (i % 3 === 0 ? 0 : 1)), dtype: "float32" as const, shape: [tokens] },
      },
    };
  });
}

function pbjsEncode(data: Datum[]): Uint8Array {
  const msg = {
    modelId: "model-1",
    seqId: 3,
    lossFn: "cross_entropy",
    data: data.map((d) => ({
      modelInput: d.model_input.chunks.map((c) => ({ encodedText: { tokens: writeInt32s((c as { tokens: number[] }).tokens) } })),
      lossFnInputs: Object.fromEntries(
        Object.entries(d.loss_fn_inputs).map(([k, t]) => [
          k,
          { dense: t.dtype === "int64" ? writeInt64s(t.data) : writeFloat32s(t.data), dtype: t.dtype === "int64" ? 2 : 1, shape: t.shape },
        ]),
      ),
    })),
  };
  return Request.encode(Request.fromObject(msg)).finish();
}

interface PbTensor {
  dense?: Uint8Array;
  dtype: number;
  shape: unknown[];
}
function pbjsDecode(bytes: Uint8Array): Datum[] {
  const m = Request.decode(bytes) as unknown as { data: { modelInput: { encodedText?: { tokens: Uint8Array } }[]; lossFnInputs: Record<string, PbTensor> }[] };
  return m.data.map((d) => ({
    model_input: { chunks: d.modelInput.map((c) => ({ type: "encoded_text" as const, tokens: readInt32s(c.encodedText!.tokens, "tokens") })) },
    loss_fn_inputs: Object.fromEntries(
      Object.entries(d.lossFnInputs).map(([k, t]) => [
        k,
        {
          data: t.dtype === 2 ? readInt64s(t.dense!, k) : readFloat32s(t.dense!, k),
          dtype: t.dtype === 2 ? ("int64" as const) : ("float32" as const),
          shape: t.shape.map(Number),
        },
      ]),
    ),
  }));
}

function time(fn: () => unknown): number {
  fn();
  const t: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    fn();
    t.push(performance.now() - t0);
  }
  return t.sort((a, b) => a - b)[Math.floor(t.length / 2)]!;
}

const data = makeData();
const hand = encodeForwardBackwardRequest({ modelId: "model-1", seqId: 3, data, lossFn: "cross_entropy" });
const pb = pbjsEncode(data);
if (!Buffer.from(hand).equals(Buffer.from(pb))) process.stderr.write(`note: the two encodings differ in bytes (${hand.length} vs ${pb.length})\n`);
const roundTrip = pbjsDecode(hand);
if (JSON.stringify(roundTrip[0]!.model_input) !== JSON.stringify(decodeForwardBackwardRequest(hand).data[0]!.model_input)) throw new Error("decoders disagree");
const rows = [
  ["encode", time(() => encodeForwardBackwardRequest({ modelId: "model-1", seqId: 3, data, lossFn: "cross_entropy" })), time(() => pbjsEncode(data))],
  ["decode", time(() => decodeForwardBackwardRequest(hand)), time(() => pbjsDecode(hand))],
] as const;
process.stdout.write(`forward_backward request: ${datums} datums × ${tokens} tokens, ${(hand.length / 1024 / 1024).toFixed(1)} MiB; median of ${reps}\n`);
for (const [what, a, b] of rows) process.stdout.write(`  ${what}: hand-written ${a.toFixed(1)} ms, protobufjs ${b.toFixed(1)} ms (${(b / a).toFixed(2)}×)\n`);
process.stdout.write(
  `  load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}\n`,
);
