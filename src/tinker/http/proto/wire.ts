// Minimal protobuf wire format (proto3): enough to write the request and read the responses of
// docs/protocol.md#protobuf-messages without a protobuf library. Wire types: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32.
import { InvalidArgumentError } from "../../errors.ts";

export class ProtoWriter {
  private readonly parts: Uint8Array[] = [];
  private size = 0;

  private push(bytes: Uint8Array): void {
    this.parts.push(bytes);
    this.size += bytes.length;
  }

  private rawVarint(value: bigint): void {
    // Negative numbers are written as their 64-bit two's complement (10 bytes), as proto does.
    let v = BigInt.asUintN(64, value);
    const out: number[] = [];
    while (v >= 0x80n) {
      out.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    out.push(Number(v));
    this.push(Uint8Array.from(out));
  }

  private tag(field: number, wireType: number): void {
    this.rawVarint(BigInt((field << 3) | wireType));
  }

  varint(field: number, value: number | bigint | boolean): this {
    this.tag(field, 0);
    this.rawVarint(typeof value === "boolean" ? (value ? 1n : 0n) : BigInt(value));
    return this;
  }

  double(field: number, value: number): this {
    this.tag(field, 1);
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, value, true);
    this.push(b);
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.tag(field, 2);
    this.rawVarint(BigInt(value.length));
    this.push(value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  message(field: number, sub: ProtoWriter): this {
    return this.bytes(field, sub.finish());
  }

  /** A packed repeated varint field (proto3's default for repeated scalars). */
  packedVarints(field: number, values: ArrayLike<number>): this {
    const sub = new ProtoWriter();
    for (let i = 0; i < values.length; i++) sub.rawVarint(BigInt(values[i]!));
    return this.bytes(field, sub.finish());
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.size);
    let o = 0;
    for (const p of this.parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }
}

export type ProtoField =
  | { wireType: 0; value: bigint }
  | { wireType: 1; value: Uint8Array }
  | { wireType: 2; value: Uint8Array }
  | { wireType: 5; value: Uint8Array };

/** Every field of a message by number, in the order they appeared. */
export type ProtoMessage = Map<number, ProtoField[]>;

export function parseMessage(buf: Uint8Array, what: string): ProtoMessage {
  const out: ProtoMessage = new Map();
  let pos = 0;
  const fail = (why: string): never => {
    throw new InvalidArgumentError(`malformed protobuf ${what} at byte ${pos}: ${why}`);
  };
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= buf.length) fail("truncated varint");
      const b = buf[pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 63n) fail("varint too long");
    }
  };
  const take = (n: number): Uint8Array => {
    if (pos + n > buf.length) fail(`field needs ${n} bytes, ${buf.length - pos} left`);
    const v = buf.subarray(pos, pos + n);
    pos += n;
    return v;
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const field = key >>> 3;
    const wireType = key & 7;
    let f: ProtoField;
    if (wireType === 0) f = { wireType, value: varint() };
    else if (wireType === 1) f = { wireType, value: take(8) };
    else if (wireType === 2) f = { wireType, value: take(Number(varint())) };
    else if (wireType === 5) f = { wireType, value: take(4) };
    else return fail(`unsupported wire type ${wireType} for field ${field}`);
    const list = out.get(field);
    if (list) list.push(f);
    else out.set(field, [f]);
  }
  return out;
}

// Accessors: proto3 takes the last occurrence of a scalar field; absent fields read as defaults.
function last(m: ProtoMessage, field: number): ProtoField | undefined {
  const l = m.get(field);
  return l === undefined ? undefined : l[l.length - 1];
}

export function getVarint(m: ProtoMessage, field: number): bigint | undefined {
  const f = last(m, field);
  return f?.wireType === 0 ? f.value : undefined;
}

export function getInt(m: ProtoMessage, field: number, fallback = 0): number {
  const v = getVarint(m, field);
  return v === undefined ? fallback : Number(BigInt.asIntN(64, v));
}

export function getBytes(m: ProtoMessage, field: number): Uint8Array | undefined {
  const f = last(m, field);
  return f?.wireType === 2 ? f.value : undefined;
}

export function getString(m: ProtoMessage, field: number): string {
  const b = getBytes(m, field);
  return b === undefined ? "" : new TextDecoder().decode(b);
}

export function getDouble(f: ProtoField): number {
  if (f.wireType === 1) return new DataView(f.value.buffer, f.value.byteOffset, 8).getFloat64(0, true);
  if (f.wireType === 5) return new DataView(f.value.buffer, f.value.byteOffset, 4).getFloat32(0, true);
  return Number(f.value);
}

export function getRepeatedMessages(m: ProtoMessage, field: number): Uint8Array[] {
  return (m.get(field) ?? []).filter((f) => f.wireType === 2).map((f) => f.value);
}

/** A repeated integer field, packed or not. */
export function getRepeatedInts(m: ProtoMessage, field: number, what: string): number[] {
  const out: number[] = [];
  for (const f of m.get(field) ?? []) {
    if (f.wireType === 0) out.push(Number(BigInt.asIntN(64, f.value)));
    else if (f.wireType === 2) {
      // A packed run is a sequence of bare varints; reuse the parser by reading them one by one.
      let pos = 0;
      const b = f.value;
      while (pos < b.length) {
        let result = 0n;
        let shift = 0n;
        for (;;) {
          if (pos >= b.length) throw new InvalidArgumentError(`malformed protobuf ${what}: truncated packed varint`);
          const byte = b[pos++]!;
          result |= BigInt(byte & 0x7f) << shift;
          if ((byte & 0x80) === 0) break;
          shift += 7n;
        }
        out.push(Number(BigInt.asIntN(64, result)));
      }
    }
  }
  return out;
}

// Little-endian packed arrays inside bytes fields.
function view(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}

export function readFloat32s(b: Uint8Array, what: string): number[] {
  if (b.length % 4 !== 0) throw new InvalidArgumentError(`${what}: ${b.length} bytes is not a whole number of float32 values`);
  const v = view(b);
  return Array.from({ length: b.length / 4 }, (_, i) => v.getFloat32(i * 4, true));
}

export function readInt32s(b: Uint8Array, what: string): number[] {
  if (b.length % 4 !== 0) throw new InvalidArgumentError(`${what}: ${b.length} bytes is not a whole number of int32 values`);
  const v = view(b);
  return Array.from({ length: b.length / 4 }, (_, i) => v.getInt32(i * 4, true));
}

export function readInt64s(b: Uint8Array, what: string): number[] {
  if (b.length % 8 !== 0) throw new InvalidArgumentError(`${what}: ${b.length} bytes is not a whole number of int64 values`);
  const v = view(b);
  return Array.from({ length: b.length / 8 }, (_, i) => Number(v.getBigInt64(i * 8, true)));
}

/** bfloat16 is the upper half of a float32. */
export function readBFloat16s(b: Uint8Array, what: string): number[] {
  if (b.length % 2 !== 0) throw new InvalidArgumentError(`${what}: ${b.length} bytes is not a whole number of bfloat16 values`);
  const v = view(b);
  const tmp = new DataView(new ArrayBuffer(4));
  return Array.from({ length: b.length / 2 }, (_, i) => {
    tmp.setUint32(0, v.getUint16(i * 2, true) << 16);
    return tmp.getFloat32(0);
  });
}

export function writeFloat32s(values: ArrayLike<number>): Uint8Array {
  const b = new Uint8Array(values.length * 4);
  const v = view(b);
  for (let i = 0; i < values.length; i++) v.setFloat32(i * 4, values[i]!, true);
  return b;
}

export function writeInt32s(values: ArrayLike<number>): Uint8Array {
  const b = new Uint8Array(values.length * 4);
  const v = view(b);
  for (let i = 0; i < values.length; i++) v.setInt32(i * 4, values[i]!, true);
  return b;
}

export function writeInt64s(values: ArrayLike<number>): Uint8Array {
  const b = new Uint8Array(values.length * 8);
  const v = view(b);
  for (let i = 0; i < values.length; i++) v.setBigInt64(i * 8, BigInt(values[i]!), true);
  return b;
}
