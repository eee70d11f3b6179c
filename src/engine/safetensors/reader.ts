// Reads safetensors files (docs/numerics.md#safetensors): an 8-byte little-endian header length, a JSON
// header, then one byte buffer. Floating tensors are converted to float32 by the native addon
// straight from a memory mapping of the file, on every core (nativeRead.ts); without the addon,
// or for integer tensors, they are read one at a time with positioned reads so a large
// checkpoint is never held twice in memory. Both give the same values. Every problem is reported
// with the file name and what exactly is wrong, because a half-downloaded checkpoint is the
// usual cause.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { DTYPE_SIZE, KNOWN_DTYPES, f16ToFloat32, isReadableDType } from "./dtypes.ts";
import { nativeFileReader } from "./nativeRead.ts";
import { widenBf16 } from "./widen.ts";

export class SafetensorsError extends Error {
  readonly file: string;
  constructor(file: string, problem: string) {
    super(`${file}: ${problem}`);
    this.name = "SafetensorsError";
    this.file = file;
  }
}

/** Readers of the reference implementation refuse headers above this size. */
const MAX_HEADER_BYTES = 100_000_000;

export interface SafetensorsEntry {
  name: string;
  dtype: string;
  shape: number[];
  /** Byte range relative to the start of the data section. */
  begin: number;
  end: number;
}

export interface SafetensorsHeader {
  file: string;
  fileSize: number;
  /** Absolute offset of the data section (8 + header length). */
  dataStart: number;
  entries: Map<string, SafetensorsEntry>;
  metadata: Record<string, string>;
}

export type TensorValues = Float32Array | Int32Array | BigInt64Array | Uint8Array;

export interface Tensor {
  /** dtype as stored in the file; floating types are returned widened to float32. */
  dtype: string;
  shape: number[];
  data: TensorValues;
}

function readExactly(fd: number, file: string, length: number, position: number, what: string): Buffer {
  // allocUnsafeSlow gives a buffer that owns its ArrayBuffer at offset 0, so typed-array views are aligned.
  const buf = Buffer.allocUnsafeSlow(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, position + done);
    if (n === 0) throw new SafetensorsError(file, `file ends while reading ${what} (${done} of ${length} bytes at offset ${position})`);
    done += n;
  }
  return buf;
}

function parseHeader(file: string, fd: number): SafetensorsHeader {
  const fileSize = fstatSync(fd).size;
  if (fileSize < 8) {
    throw new SafetensorsError(file, `file is ${fileSize} bytes, too short to hold the 8-byte header length; it is truncated or not a safetensors file`);
  }
  const lenBuf = readExactly(fd, file, 8, 0, "the header length");
  const headerLen = lenBuf.readBigUInt64LE(0);
  if (headerLen > BigInt(MAX_HEADER_BYTES)) {
    throw new SafetensorsError(file, `header length ${headerLen} exceeds the ${MAX_HEADER_BYTES}-byte limit; the file is corrupt or not a safetensors file`);
  }
  const n = Number(headerLen);
  if (8 + n > fileSize) {
    throw new SafetensorsError(file, `header length ${n} runs past the end of the file (file is ${fileSize} bytes); the file is truncated or corrupt`);
  }
  const text = readExactly(fd, file, n, 8, "the header").toString("utf8");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new SafetensorsError(file, `header is not valid JSON (${(err as Error).message})`);
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    throw new SafetensorsError(file, `header must be a JSON object mapping tensor names to {dtype, shape, data_offsets}`);
  }
  const dataStart = 8 + n;
  const dataLen = fileSize - dataStart;
  const entries = new Map<string, SafetensorsEntry>();
  let metadata: Record<string, string> = {};
  for (const [name, raw] of Object.entries(json as Record<string, unknown>)) {
    if (name === "__metadata__") {
      if (raw !== null && typeof raw === "object" && !Array.isArray(raw)) metadata = raw as Record<string, string>;
      continue;
    }
    entries.set(name, parseEntry(file, name, raw, dataLen));
  }
  checkOverlaps(file, entries);
  return { file, fileSize, dataStart, entries, metadata };
}

function parseEntry(file: string, name: string, raw: unknown, dataLen: number): SafetensorsEntry {
  const where = `tensor ${JSON.stringify(name)}`;
  if (raw === null || typeof raw !== "object") throw new SafetensorsError(file, `${where}: header entry is not an object`);
  const { dtype, shape, data_offsets: offsets } = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
  if (typeof dtype !== "string") throw new SafetensorsError(file, `${where}: missing dtype`);
  if (!KNOWN_DTYPES.has(dtype)) {
    throw new SafetensorsError(file, `${where}: unknown dtype ${JSON.stringify(dtype)}; safetensors dtypes are ${[...KNOWN_DTYPES].join(", ")}`);
  }
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    throw new SafetensorsError(file, `${where}: shape ${JSON.stringify(shape)} is not a list of non-negative integers`);
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)) {
    throw new SafetensorsError(file, `${where}: data_offsets ${JSON.stringify(offsets)} is not a pair [begin, end] of non-negative integers`);
  }
  const [begin, end] = offsets as [number, number];
  if (end < begin) throw new SafetensorsError(file, `${where}: data_offsets [${begin}, ${end}] end before they begin`);
  if (end > dataLen) {
    throw new SafetensorsError(file, `${where}: data_offsets [${begin}, ${end}] are out of range; the data section has ${dataLen} bytes (file truncated?)`);
  }
  const elementSize = DTYPE_SIZE[dtype];
  if (elementSize !== undefined) {
    const count = (shape as number[]).reduce((a, b) => a * b, 1);
    if (count * elementSize !== end - begin) {
      throw new SafetensorsError(
        file,
        `${where}: shape [${(shape as number[]).join(", ")}] of ${dtype} needs ${count * elementSize} bytes but data_offsets [${begin}, ${end}] span ${end - begin}`,
      );
    }
  }
  return { name, dtype, shape: shape as number[], begin, end };
}

function checkOverlaps(file: string, entries: Map<string, SafetensorsEntry>): void {
  const sorted = [...entries.values()].filter((e) => e.end > e.begin).sort((a, b) => a.begin - b.begin);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const cur = sorted[i]!;
    if (cur.begin < prev.end) {
      throw new SafetensorsError(
        file,
        `tensors ${JSON.stringify(prev.name)} [${prev.begin}, ${prev.end}] and ${JSON.stringify(cur.name)} [${cur.begin}, ${cur.end}] overlap`,
      );
    }
  }
}

export function readSafetensorsHeader(file: string): SafetensorsHeader {
  const fd = openFile(file);
  try {
    return parseHeader(file, fd);
  } finally {
    closeSync(fd);
  }
}

function openFile(file: string): number {
  try {
    return openSync(file, "r");
  } catch (err) {
    throw new SafetensorsError(file, `cannot open: ${(err as Error).message}`);
  }
}

function decode(file: string, entry: SafetensorsEntry, buf: Buffer): TensorValues {
  const ab = buf.buffer;
  const bytes = entry.end - entry.begin;
  switch (entry.dtype) {
    case "F32":
      return new Float32Array(ab, buf.byteOffset, bytes / 4);
    case "BF16":
      return widenBf16(new Uint16Array(ab, buf.byteOffset, bytes / 2));
    case "F16":
      return f16ToFloat32(new Uint16Array(ab, buf.byteOffset, bytes / 2));
    case "F64":
      return Float32Array.from(new Float64Array(ab, buf.byteOffset, bytes / 8));
    case "I32":
      return new Int32Array(ab, buf.byteOffset, bytes / 4);
    case "I64":
      return new BigInt64Array(ab, buf.byteOffset, bytes / 8);
    case "U8":
      return new Uint8Array(ab, buf.byteOffset, bytes);
    default:
      throw new SafetensorsError(
        file,
        `tensor ${JSON.stringify(entry.name)}: dtype ${entry.dtype} is not supported by this engine (supported: F32, BF16, F16, F64, I32, I64, U8)`,
      );
  }
}

/** How tensors are read: the native mapping when the addon loads (default), or positioned reads. */
export type ReadPath = "native" | "positioned";

/**
 * Reads tensors of one file (all, or only `names`). F32/BF16/F16/F64 come back as Float32Array,
 * I32 as Int32Array, I64 as BigInt64Array, U8 as Uint8Array. Every returned array owns its buffer. `via` forces one
 * path (tests compare them); by default floating tensors go through the native mapping when the
 * addon is there and COOKBOOK_KERNELS is not "reference".
 */
export function readSafetensors(file: string, options: { names?: Iterable<string>; via?: ReadPath } = {}): Map<string, Tensor> {
  const fd = openFile(file);
  try {
    const header = parseHeader(file, fd);
    const wanted = options.names === undefined ? [...header.entries.keys()] : [...options.names];
    const entries: SafetensorsEntry[] = [];
    for (const name of wanted) {
      const entry = header.entries.get(name);
      if (entry === undefined) throw new SafetensorsError(file, `has no tensor named ${JSON.stringify(name)}`);
      if (!isReadableDType(entry.dtype)) decode(file, entry, Buffer.alloc(0));
      entries.push(entry);
    }
    const out = new Map<string, Tensor>();
    const native = options.via === "positioned" ? null : nativeFileReader(options.via === "native");
    const floats = native === null ? [] : entries.filter((e) => native.handles(e.dtype));
    if (native !== null && floats.length > 0) {
      for (const [name, data] of native.read(file, header.dataStart, floats)) {
        const e = header.entries.get(name) as SafetensorsEntry;
        out.set(name, { dtype: e.dtype, shape: e.shape, data });
      }
    }
    for (const entry of entries) {
      if (out.has(entry.name)) continue;
      const buf = readExactly(fd, file, entry.end - entry.begin, header.dataStart + entry.begin, `tensor ${JSON.stringify(entry.name)}`);
      out.set(entry.name, { dtype: entry.dtype, shape: entry.shape, data: decode(file, entry, buf) });
    }
    // In the order asked for, whichever path read each tensor.
    return new Map(wanted.map((n) => [n, out.get(n) as Tensor]));
  } finally {
    closeSync(fd);
  }
}
