// Writes safetensors files the way the reference Rust writer does, so files are byte-for-byte
// reproducible: header padded with spaces to a multiple of 8, tensors ordered by descending
// element size then name (every tensor stays aligned to its element size), `__metadata__` first.
// A file is written to a temporary name and renamed, so a crash never leaves a torn checkpoint.
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomBytes } from "node:crypto";
import { float32ToBf16, type WritableDType } from "./dtypes.ts";
import type { TensorValues } from "./reader.ts";

export interface TensorToWrite {
  shape: number[];
  data: TensorValues;
}

export interface WriteOptions {
  /** Storage type of float32 tensors (default F32); integer tensors keep I32/I64. */
  dtype?: WritableDType;
  metadata?: Record<string, string>;
}

interface Planned {
  name: string;
  dtype: string;
  shape: number[];
  bytes: Uint8Array;
}

function plan(name: string, t: TensorToWrite, floatType: WritableDType): Planned {
  const count = t.shape.reduce((a, b) => a * b, 1);
  if (!t.shape.every((d) => Number.isSafeInteger(d) && d >= 0) || count !== t.data.length) {
    throw new Error(`writeSafetensors: tensor ${JSON.stringify(name)} has shape [${t.shape.join(", ")}] (${count} elements) but ${t.data.length} values`);
  }
  let dtype: string;
  let bytes: Uint8Array;
  if (t.data instanceof Float32Array) {
    if (floatType === "BF16") {
      dtype = "BF16";
      const h = float32ToBf16(t.data);
      bytes = new Uint8Array(h.buffer, h.byteOffset, h.byteLength);
    } else {
      dtype = "F32";
      bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    }
  } else if (t.data instanceof Int32Array) {
    dtype = "I32";
    bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  } else if (t.data instanceof Uint8Array) {
    dtype = "U8";
    bytes = t.data;
  } else {
    dtype = "I64";
    bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  }
  return { name, dtype, shape: t.shape, bytes };
}

const SIZE_ORDER: Record<string, number> = { I64: 8, F32: 4, I32: 4, BF16: 2, U8: 1 };

/** Serialises the header; exported so tests and sizing code can predict the layout. */
export function buildHeader(planned: Planned[], metadata?: Record<string, string>): Buffer {
  const header: Record<string, unknown> = {};
  if (metadata !== undefined && Object.keys(metadata).length > 0) {
    const sorted: Record<string, string> = {};
    for (const k of Object.keys(metadata).sort()) sorted[k] = String(metadata[k]);
    header.__metadata__ = sorted;
  }
  let offset = 0;
  for (const p of planned) {
    header[p.name] = { dtype: p.dtype, shape: p.shape, data_offsets: [offset, offset + p.bytes.byteLength] };
    offset += p.bytes.byteLength;
  }
  const json = Buffer.from(JSON.stringify(header), "utf8");
  const padded = Math.ceil(json.length / 8) * 8;
  const out = Buffer.alloc(8 + padded, 0x20);
  out.writeBigUInt64LE(BigInt(padded), 0);
  json.copy(out, 8);
  return out;
}

function tensorsOf(tensors: Map<string, TensorToWrite> | Record<string, TensorToWrite>): [string, TensorToWrite][] {
  return tensors instanceof Map ? [...tensors.entries()] : Object.entries(tensors);
}

/** Writes `file` atomically (temporary file in the same folder, fsync, rename). Returns bytes written. */
export function writeSafetensors(file: string, tensors: Map<string, TensorToWrite> | Record<string, TensorToWrite>, options: WriteOptions = {}): number {
  const floatType = options.dtype ?? "F32";
  const planned = tensorsOf(tensors)
    .map(([name, t]) => plan(name, t, floatType))
    .sort((a, b) => SIZE_ORDER[b.dtype]! - SIZE_ORDER[a.dtype]! || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const header = buildHeader(planned, options.metadata);
  const tmp = join(dirname(file), `.${basename(file)}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);
  const fd = openSync(tmp, "w");
  let total = 0;
  try {
    total += writeAll(fd, header);
    for (const p of planned) total += writeAll(fd, p.bytes);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  renameSync(tmp, file);
  return total;
}

function writeAll(fd: number, bytes: Uint8Array): number {
  let done = 0;
  while (done < bytes.byteLength) done += writeSync(fd, bytes, done, bytes.byteLength - done);
  return done;
}
