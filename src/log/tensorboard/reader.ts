// Reads back what the writer writes (framing checked record by record), so tests and `cookbook`
// tools can look at event files without TensorBoard. Only the Event fields the writer uses are decoded.
import { readFileSync } from "node:fs";
import { maskedCrc32c } from "./crc32c.ts";

export interface DecodedEvent {
  wallTime: number;
  step: number;
  fileVersion?: string;
  scalars: Record<string, number>;
}

class ProtoReader {
  private at = 0;
  constructor(
    private readonly b: Uint8Array,
    private readonly view = new DataView(b.buffer, b.byteOffset, b.byteLength),
  ) {}
  get done(): boolean {
    return this.at >= this.b.length;
  }
  varint(): bigint {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      const byte = this.b[this.at++];
      if (byte === undefined) throw new Error("truncated varint");
      v |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return v;
      shift += 7n;
    }
  }
  double(): number {
    const v = this.view.getFloat64(this.at, true);
    this.at += 8;
    return v;
  }
  float(): number {
    const v = this.view.getFloat32(this.at, true);
    this.at += 4;
    return v;
  }
  bytes(): Uint8Array {
    const n = Number(this.varint());
    const out = this.b.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.at += 8;
    else if (wireType === 2) this.bytes();
    else if (wireType === 5) this.at += 4;
    else throw new Error(`unsupported wire type ${wireType}`);
  }
}

function decodeEvent(payload: Uint8Array): DecodedEvent {
  const r = new ProtoReader(payload);
  const ev: DecodedEvent = { wallTime: 0, step: 0, scalars: {} };
  while (!r.done) {
    const key = Number(r.varint());
    const field = key >> 3;
    const wire = key & 7;
    if (field === 1 && wire === 1) ev.wallTime = r.double();
    else if (field === 2 && wire === 0) ev.step = Number(BigInt.asIntN(64, r.varint()));
    else if (field === 3 && wire === 2) ev.fileVersion = new TextDecoder().decode(r.bytes());
    else if (field === 5 && wire === 2) {
      const summary = new ProtoReader(r.bytes());
      while (!summary.done) {
        const k = Number(summary.varint());
        if (k >> 3 !== 1 || (k & 7) !== 2) {
          summary.skip(k & 7);
          continue;
        }
        const value = new ProtoReader(summary.bytes());
        let tag = "";
        let simple = Number.NaN;
        while (!value.done) {
          const vk = Number(value.varint());
          if (vk >> 3 === 1 && (vk & 7) === 2) tag = new TextDecoder().decode(value.bytes());
          else if (vk >> 3 === 2 && (vk & 7) === 5) simple = value.float();
          else value.skip(vk & 7);
        }
        ev.scalars[tag] = simple;
      }
    } else r.skip(wire);
  }
  return ev;
}

/** Every event of a file; a bad CRC names the file and the byte offset. A torn last record is skipped. */
export function readEventFile(path: string): DecodedEvent[] {
  const b = new Uint8Array(readFileSync(path));
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const events: DecodedEvent[] = [];
  let at = 0;
  while (at + 12 <= b.length) {
    const len = Number(view.getBigUint64(at, true));
    if (view.getUint32(at + 8, true) !== maskedCrc32c(b.subarray(at, at + 8))) throw new Error(`${path}: bad length checksum at byte ${at}`);
    if (at + 12 + len + 4 > b.length) break;
    const payload = b.subarray(at + 12, at + 12 + len);
    if (view.getUint32(at + 12 + len, true) !== maskedCrc32c(payload)) throw new Error(`${path}: bad data checksum at byte ${at}`);
    events.push(decodeEvent(payload));
    at += 12 + len + 4;
  }
  return events;
}
