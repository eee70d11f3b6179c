// The protobuf messages of spec §4.7 (package tinker_public): ForwardBackwardRequest out,
// SampleResponse and ForwardBackwardOutput in. Field numbers are noted where they are used.
import { InvalidArgumentError } from "../../errors.ts";
import type {
  Datum,
  ForwardBackwardOutput,
  LossFnName,
  ModelInputChunk,
  SampledSequence,
  SampleResponse,
  TensorData,
} from "../../types.ts";
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
  throw new InvalidArgumentError(
    `datum ${index}: chunk type "${c.type}" cannot be sent in a protobuf forward_backward request; use JSON or inline the image`,
  );
}

function encodeTensor(td: TensorData): ProtoWriter {
  const w = new ProtoWriter();
  const pack = (values: number[]): Uint8Array => (td.dtype === "int64" ? writeInt64s(values) : writeFloat32s(values));
  if (td.sparse_crow_indices !== undefined && td.sparse_col_indices !== undefined) {
    w.message(
      2,
      new ProtoWriter()
        .bytes(1, pack(td.data))
        .bytes(2, writeInt64s(td.sparse_crow_indices))
        .bytes(3, writeInt64s(td.sparse_col_indices)),
    );
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
      throw new InvalidArgumentError(`${what}: unsupported dtype ${dtype}`);
  }
}
