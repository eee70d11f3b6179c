// The protobuf messages of docs/protocol.md#protobuf-messages (package tinker_public), both directions, shared by the HTTP
// client and `cookbook serve` so the two ends agree byte for byte: ForwardBackwardRequest
// (client encodes, server decodes), ForwardBackwardOutput and SampleResponse (server encodes,
// client decodes). Field numbers are noted where they are used; tinker.proto beside this file
// states the same messages as a schema, and a test checks this codec against protobufjs reading it.
// Hand-written over wire.ts rather than generated: measured against protobufjs on an 8 MiB
// request (bench/protoCodec.ts) neither is clearly faster, and this keeps number arrays packed
// straight into the bytes fields without an intermediate message object.
import { InvalidArgumentError } from "../../errors.ts";
import type { Datum, ForwardBackwardOutput, LossFnName, ModelInputChunk, SampledSequence, SampleResponse, TensorData } from "../../types.ts";
import {
  getBytes,
  getDouble,
  getInt,
  getRepeatedInts,
  getRepeatedMessages,
  getString,
  parseMessage,
  ProtoWriter,
  readBFloat16s,
  readFloat32s,
  readInt32s,
  readInt64s,
  writeFloat32s,
  writeInt32s,
  writeInt64s,
  type ProtoMessage,
} from "./wire.ts";

export const PROTOBUF_CONTENT_TYPE = "application/x-protobuf";

/** DType enum: UNSPECIFIED=0, FLOAT32=1, INT64=2, INT32=3, BFLOAT16=4. */
const DTYPE_FLOAT32 = 1;
const DTYPE_INT64 = 2;
const DTYPE_INT32 = 3;
const DTYPE_BFLOAT16 = 4;
/** Empty cells of top-k prompt logprobs carry this logprob. */
const TOPK_SENTINEL = -99999.0;

export interface ForwardBackwardRequestFields {
  modelId: string;
  seqId: number;
  data: Datum[];
  lossFn: LossFnName;
  lossFnConfig?: Record<string, number>;
  forwardOnly?: boolean;
}

export function encodeForwardBackwardRequest(r: ForwardBackwardRequestFields): Uint8Array {
  const w = new ProtoWriter();
  if (r.modelId) w.string(1, r.modelId);
  if (r.seqId !== 0) w.varint(2, r.seqId);
  r.data.forEach((d, i) => w.message(3, encodeDatum(d, i)));
  if (r.lossFn) w.string(4, r.lossFn);
  for (const [k, v] of Object.entries(r.lossFnConfig ?? {})) {
    w.message(5, new ProtoWriter().string(1, k).double(2, v));
  }
  if (r.forwardOnly) w.varint(6, true);
  return w.finish();
}

function encodeDatum(d: Datum, index: number): ProtoWriter {
  const w = new ProtoWriter();
  d.model_input.chunks.forEach((c) => w.message(1, encodeChunk(c, index)));
  for (const [key, td] of Object.entries(d.loss_fn_inputs)) {
    w.message(2, new ProtoWriter().string(1, key).message(2, encodeTensor(td)));
  }
  return w;
}

function encodeChunk(c: ModelInputChunk, index: number): ProtoWriter {
  const w = new ProtoWriter();
  if (c.type === "encoded_text") return w.message(1, new ProtoWriter().bytes(1, writeInt32s(c.tokens)));
  if (c.type === "image") {
    const img = new ProtoWriter().bytes(1, Buffer.from(c.data, "base64")).string(2, c.format);
    if (c.expected_tokens !== undefined) img.varint(3, c.expected_tokens);
    return w.message(2, img);
  }
  throw new InvalidArgumentError(`datum ${index}: chunk type "${c.type}" cannot be sent in a protobuf forward_backward request; use JSON or inline the image`);
}

function encodeTensor(td: TensorData): ProtoWriter {
  const w = new ProtoWriter();
  const pack = (values: number[]): Uint8Array => (td.dtype === "int64" ? writeInt64s(values) : writeFloat32s(values));
  if (td.sparse_crow_indices !== undefined && td.sparse_col_indices !== undefined) {
    w.message(2, new ProtoWriter().bytes(1, pack(td.data)).bytes(2, writeInt64s(td.sparse_crow_indices)).bytes(3, writeInt64s(td.sparse_col_indices)));
  } else {
    w.bytes(1, pack(td.data));
  }
  w.varint(3, td.dtype === "int64" ? DTYPE_INT64 : DTYPE_FLOAT32);
  w.packedVarints(4, td.shape ?? [td.data.length]);
  return w;
}

export function decodeSampleResponse(bytes: Uint8Array): SampleResponse {
  const m = parseMessage(bytes, "SampleResponse");
  const sequences = getRepeatedMessages(m, 1).map((b, i): SampledSequence => {
    const s = parseMessage(b, `SampleResponse.sequences[${i}]`);
    const stop = getInt(s, 1);
    const seq: SampledSequence = {
      stop_reason: stop === 1 ? "length" : "stop",
      tokens: readInt32s(getBytes(s, 2) ?? new Uint8Array(), "sequence tokens"),
    };
    const lp = getBytes(s, 3);
    if (lp !== undefined) seq.logprobs = readFloat32s(lp, "sequence logprobs");
    return seq;
  });
  const out: SampleResponse = { type: "sample", sequences };
  const plp = getBytes(m, 2);
  if (plp !== undefined) out.prompt_logprobs = readFloat32s(plp, "prompt_logprobs").map((x) => (Number.isNaN(x) ? null : x));
  const topk = getBytes(m, 3);
  if (topk !== undefined) out.topk_prompt_logprobs = decodeTopk(parseMessage(topk, "TopkPromptLogprobs"));
  const hits = getInt(m, 4);
  if (hits !== 0) out.prompt_cache_hit_tokens = hits;
  return out;
}

function decodeTopk(m: ProtoMessage): ([number, number][] | null)[] {
  const ids = readInt32s(getBytes(m, 1) ?? new Uint8Array(), "topk token_ids");
  const lps = readFloat32s(getBytes(m, 2) ?? new Uint8Array(), "topk logprobs");
  const k = getInt(m, 3);
  const n = getInt(m, 4);
  if (ids.length !== n * k || lps.length !== n * k) {
    throw new InvalidArgumentError(`malformed TopkPromptLogprobs: ${ids.length} ids and ${lps.length} logprobs for ${n}×${k}`);
  }
  const rows: ([number, number][] | null)[] = [];
  for (let r = 0; r < n; r++) {
    if (k === 0 || lps[r * k] === TOPK_SENTINEL) {
      rows.push(null);
      continue;
    }
    const row: [number, number][] = [];
    for (let c = 0; c < k; c++) {
      const lp = lps[r * k + c]!;
      if (lp !== TOPK_SENTINEL) row.push([ids[r * k + c]!, lp]);
    }
    rows.push(row);
  }
  return rows;
}

export function decodeForwardBackwardOutput(bytes: Uint8Array): ForwardBackwardOutput {
  const m = parseMessage(bytes, "ForwardBackwardOutput");
  const type = getString(m, 1);
  const outputs: Record<string, TensorData>[] = [];
  for (const rec of getRepeatedMessages(m, 2)) outputs.push(...decodeArrayRecord(parseMessage(rec, "ArrayRecord")));
  const metrics: Record<string, number> = {};
  for (const entry of getRepeatedMessages(m, 3)) {
    const e = parseMessage(entry, "metrics entry");
    const v = e.get(2);
    metrics[getString(e, 1)] = v === undefined ? 0 : getDouble(v[v.length - 1]!);
  }
  return { loss_fn_output_type: type.slice(type.lastIndexOf(":") + 1), loss_fn_outputs: outputs, metrics };
}

function decodeArrayRecord(m: ProtoMessage): Record<string, TensorData>[] {
  const n = getInt(m, 3);
  const records: Record<string, TensorData>[] = Array.from({ length: n }, () => ({}));
  for (const entry of getRepeatedMessages(m, 2)) {
    const e = parseMessage(entry, "ArrayRecord.fields entry");
    const key = getString(e, 1);
    const bt = parseMessage(getBytes(e, 2) ?? new Uint8Array(), `BatchedTensor "${key}"`);
    const data = getBytes(bt, 1) ?? new Uint8Array();
    const offsets = readInt64s(getBytes(bt, 2) ?? new Uint8Array(), `BatchedTensor "${key}" offsets`);
    const dtype = getInt(bt, 3);
    const trailing = getRepeatedInts(bt, 4, `BatchedTensor "${key}" trailing_shape`);
    if (offsets.length !== n + 1) {
      throw new InvalidArgumentError(`malformed BatchedTensor "${key}": ${offsets.length} offsets for ${n} datums (expected ${n + 1})`);
    }
    const inner = trailing.reduce((a, b) => a * b, 1);
    for (let i = 0; i < n; i++) {
      const slice = data.subarray(offsets[i]!, offsets[i + 1]!);
      const what = `BatchedTensor "${key}" datum ${i}`;
      const { values, isInt } = decodeValues(slice, dtype, what);
      if (inner === 0 || values.length % inner !== 0) {
        throw new InvalidArgumentError(`${what}: ${values.length} values do not fit trailing shape ${JSON.stringify(trailing)}`);
      }
      records[i]![key] = { data: values, dtype: isInt ? "int64" : "float32", shape: [values.length / inner, ...trailing] };
    }
  }
  return records;
}

function decodeValues(b: Uint8Array, dtype: number, what: string): { values: number[]; isInt: boolean } {
  switch (dtype) {
    case DTYPE_FLOAT32:
      return { values: readFloat32s(b, what), isInt: false };
    case DTYPE_INT64:
      return { values: readInt64s(b, what), isInt: true };
    case DTYPE_INT32:
      return { values: readInt32s(b, what), isInt: true };
    case DTYPE_BFLOAT16:
      return { values: readBFloat16s(b, what), isInt: false };
    default:
      throw new InvalidArgumentError(`${what}: unsupported or missing dtype ${dtype} (expected FLOAT32=1, INT64=2, INT32=3 or BFLOAT16=4)`);
  }
}

// ---- The server side: requests in, results out. ----

export interface DecodedForwardBackwardRequest {
  modelId: string;
  /** undefined when the field was absent (proto3 0 = unset). */
  seqId: number | undefined;
  data: Datum[];
  lossFn: string;
  lossFnConfig: Record<string, number> | undefined;
  forwardOnly: boolean;
}

export function decodeForwardBackwardRequest(bytes: Uint8Array): DecodedForwardBackwardRequest {
  const m = parseMessage(bytes, "ForwardBackwardRequest");
  const seq = getInt(m, 2);
  const data = getRepeatedMessages(m, 3).map((b, i) => decodeDatum(parseMessage(b, `Datum ${i}`), i));
  const config: Record<string, number> = {};
  let hasConfig = false;
  for (const entry of getRepeatedMessages(m, 5)) {
    const e = parseMessage(entry, "loss_fn_config entry");
    const v = e.get(2);
    config[getString(e, 1)] = v === undefined ? 0 : getDouble(v[v.length - 1]!);
    hasConfig = true;
  }
  return {
    modelId: getString(m, 1),
    seqId: seq === 0 ? undefined : seq,
    data,
    lossFn: getString(m, 4),
    lossFnConfig: hasConfig ? config : undefined,
    forwardOnly: getInt(m, 6) !== 0,
  };
}

function decodeDatum(m: ProtoMessage, index: number): Datum {
  const chunks = getRepeatedMessages(m, 1).map((b, j) => decodeChunk(parseMessage(b, `datum ${index} chunk ${j}`), index, j));
  const inputs: Record<string, TensorData> = {};
  for (const entry of getRepeatedMessages(m, 2)) {
    const e = parseMessage(entry, `datum ${index} loss_fn_inputs entry`);
    const key = getString(e, 1);
    inputs[key] = decodeTensor(parseMessage(getBytes(e, 2) ?? new Uint8Array(), `datum ${index} tensor "${key}"`), `datum ${index}: loss_fn_inputs.${key}`);
  }
  return { model_input: { chunks }, loss_fn_inputs: inputs };
}

function decodeChunk(m: ProtoMessage, index: number, j: number): ModelInputChunk {
  const text = getBytes(m, 1);
  if (text !== undefined) {
    const t = parseMessage(text, `datum ${index} chunk ${j} encoded_text`);
    return { type: "encoded_text", tokens: readInt32s(getBytes(t, 1) ?? new Uint8Array(), `datum ${index} chunk ${j} tokens`) };
  }
  const image = getBytes(m, 2);
  if (image !== undefined) {
    const im = parseMessage(image, `datum ${index} chunk ${j} image`);
    const format = getString(im, 2);
    if (format !== "png" && format !== "jpeg") {
      throw new InvalidArgumentError(`datum ${index} chunk ${j}: image format ${JSON.stringify(format)}; expected "png" or "jpeg"`);
    }
    const chunk: ModelInputChunk = { type: "image", data: Buffer.from(getBytes(im, 1) ?? new Uint8Array()).toString("base64"), format };
    if (im.has(3)) chunk.expected_tokens = getInt(im, 3);
    return chunk;
  }
  if (m.has(3)) throw new InvalidArgumentError(`datum ${index} chunk ${j}: dmel (audio) chunks are not supported`);
  throw new InvalidArgumentError(`datum ${index} chunk ${j}: empty chunk (expected encoded_text or image)`);
}

function decodeTensor(m: ProtoMessage, what: string): TensorData {
  const dtype = getInt(m, 3);
  const shape = getRepeatedInts(m, 4, `${what} shape`);
  const values = (b: Uint8Array): { data: number[]; isInt: boolean } => {
    const v = decodeValues(b, dtype, what);
    return { data: v.values, isInt: v.isInt };
  };
  const dense = getBytes(m, 1);
  const sparse = getBytes(m, 2);
  if (sparse !== undefined) {
    const s = parseMessage(sparse, `${what} sparse_csr`);
    const v = values(getBytes(s, 1) ?? new Uint8Array());
    return {
      data: v.data,
      dtype: v.isInt ? "int64" : "float32",
      shape,
      sparse_crow_indices: readInt64s(getBytes(s, 2) ?? new Uint8Array(), `${what} crow_indices`),
      sparse_col_indices: readInt64s(getBytes(s, 3) ?? new Uint8Array(), `${what} col_indices`),
    };
  }
  const v = values(dense ?? new Uint8Array());
  return { data: v.data, dtype: v.isInt ? "int64" : "float32", shape: shape.length > 0 ? shape : [v.data.length] };
}

/**
 * ForwardBackwardOutput with its per-datum outputs as ArrayRecords. Consecutive datums with the
 * same keys, dtypes and trailing shapes share one record (clients concatenate records).
 */
export function encodeForwardBackwardOutput(out: ForwardBackwardOutput): Uint8Array {
  const w = new ProtoWriter();
  if (out.loss_fn_output_type) w.string(1, out.loss_fn_output_type);
  let start = 0;
  const outputs = out.loss_fn_outputs;
  while (start < outputs.length) {
    const sig = recordSignature(outputs[start]!);
    let end = start + 1;
    while (end < outputs.length && recordSignature(outputs[end]!) === sig) end++;
    w.message(2, encodeArrayRecord(outputs.slice(start, end)));
    start = end;
  }
  for (const [k, v] of Object.entries(out.metrics)) w.message(3, new ProtoWriter().string(1, k).double(2, v));
  return w.finish();
}

function trailingShape(td: TensorData): number[] {
  return (td.shape ?? [td.data.length]).slice(1);
}

function recordSignature(rec: Record<string, TensorData>): string {
  return JSON.stringify(
    Object.keys(rec)
      .sort()
      .map((k) => [k, rec[k]!.dtype, trailingShape(rec[k]!)]),
  );
}

function encodeArrayRecord(recs: Record<string, TensorData>[]): ProtoWriter {
  const w = new ProtoWriter().string(1, "ArrayRecord");
  for (const key of Object.keys(recs[0]!).sort()) {
    const first = recs[0]![key]!;
    const parts = recs.map((r) => {
      const td = r[key]!;
      if (td.sparse_crow_indices !== undefined) throw new InvalidArgumentError(`output "${key}" is sparse; outputs must be dense`);
      return td.dtype === "int64" ? writeInt64s(td.data) : writeFloat32s(td.data);
    });
    const offsets = [0];
    for (const p of parts) offsets.push(offsets[offsets.length - 1]! + p.length);
    const data = new Uint8Array(offsets[offsets.length - 1]!);
    parts.forEach((p, i) => data.set(p, offsets[i]!));
    const bt = new ProtoWriter()
      .bytes(1, data)
      .bytes(2, writeInt64s(offsets))
      .varint(3, first.dtype === "int64" ? DTYPE_INT64 : DTYPE_FLOAT32);
    const trailing = trailingShape(first);
    if (trailing.length > 0) bt.packedVarints(4, trailing);
    w.message(2, new ProtoWriter().string(1, key).message(2, bt));
  }
  return w.varint(3, recs.length);
}

export function encodeSampleResponse(r: SampleResponse): Uint8Array {
  const w = new ProtoWriter();
  for (const s of r.sequences) {
    const sw = new ProtoWriter();
    if (s.stop_reason === "length") sw.varint(1, 1);
    sw.bytes(2, writeInt32s(s.tokens));
    if (s.logprobs !== undefined) sw.bytes(3, writeFloat32s(s.logprobs));
    w.message(1, sw);
  }
  if (r.prompt_logprobs !== undefined) w.bytes(2, writeFloat32s(r.prompt_logprobs.map((x) => (x === null ? Number.NaN : x))));
  if (r.topk_prompt_logprobs !== undefined) {
    const rows = r.topk_prompt_logprobs;
    const k = Math.max(0, ...rows.map((row) => (row === null ? 0 : row.length)));
    const ids = new Array<number>(rows.length * k).fill(0);
    const lps = new Array<number>(rows.length * k).fill(TOPK_SENTINEL);
    rows.forEach((row, i) => {
      row?.forEach(([id, lp], c) => {
        ids[i * k + c] = id;
        lps[i * k + c] = lp;
      });
    });
    w.message(3, new ProtoWriter().bytes(1, writeInt32s(ids)).bytes(2, writeFloat32s(lps)).varint(3, k).varint(4, rows.length));
  }
  if (r.prompt_cache_hit_tokens !== undefined && r.prompt_cache_hit_tokens !== 0) w.varint(4, r.prompt_cache_hit_tokens);
  return w.finish();
}
