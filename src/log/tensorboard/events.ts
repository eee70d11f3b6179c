// TensorBoard event files written by hand: TFRecord framing (length, masked CRC of the length,
// payload, masked CRC of the payload) around `tensorflow.Event` protobuf messages — the version
// record first, then one event per step whose summary holds a `simple_value` per scalar metric.
// Only the few protobuf fields TensorBoard reads for scalars are encoded.
import { maskedCrc32c } from "./crc32c.ts";

export const FILE_VERSION = "brain.Event:2";

class ProtoWriter {
  private readonly parts: Uint8Array[] = [];

  private push(bytes: Uint8Array): void {
    this.parts.push(bytes);
  }

  varint(value: number | bigint): this {
    let v = BigInt.asUintN(64, BigInt(value));
    const out: number[] = [];
    while (v >= 0x80n) {
      out.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    out.push(Number(v));
    this.push(Uint8Array.from(out));
    return this;
  }

  key(field: number, wireType: number): this {
    return this.varint((field << 3) | wireType);
  }

  double(field: number, value: number): this {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, value, true);
    this.key(field, 1).push(b);
    return this;
  }

  float(field: number, value: number): this {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    this.key(field, 5).push(b);
    return this;
  }

  int64(field: number, value: number): this {
    return this.key(field, 0).varint(value);
  }

  bytes(field: number, value: Uint8Array): this {
    this.key(field, 2).varint(value.length).push(value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  finish(): Uint8Array {
    const total = this.parts.reduce((n, p) => n + p.length, 0);
    const out = new Uint8Array(total);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

/** Event{wall_time = 1, step = 2, file_version = 3}. */
export function versionEvent(wallTime: number): Uint8Array {
  return new ProtoWriter().double(1, wallTime).int64(2, 0).string(3, FILE_VERSION).finish();
}

/** Event{wall_time = 1, step = 2, summary = 5 {value = 1 {tag = 1, simple_value = 2}}}. */
export function scalarsEvent(wallTime: number, step: number, scalars: ReadonlyArray<readonly [string, number]>): Uint8Array {
  const summary = new ProtoWriter();
  for (const [tag, value] of scalars) summary.bytes(1, new ProtoWriter().string(1, tag).float(2, value).finish());
  return new ProtoWriter().double(1, wallTime).int64(2, step).bytes(5, summary.finish()).finish();
}

/** One TFRecord: u64 length, masked CRC32C of those 8 bytes, the payload, masked CRC32C of it (all little-endian). */
export function tfRecord(payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + 4 + payload.length + 4);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(payload.length), true);
  view.setUint32(8, maskedCrc32c(out.subarray(0, 8)), true);
  out.set(payload, 12);
  view.setUint32(12 + payload.length, maskedCrc32c(payload), true);
  return out;
}
