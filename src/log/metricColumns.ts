// metrics.columns: the numbers of metrics.jsonl kept ready for charts by the run's writer, so a
// snapshot of a 100k-row run reads a few MB of aligned floats instead of parsing the JSON into
// 100k objects. metrics.jsonl stays the record; this file is a cache of it that readers check
// before trusting (a row records the byte range of its line, and the last row is compared with
// that line) and that the writer rebuilds from metrics.jsonl whenever the two disagree.
//
// Layout: "CBMC", u32 version, then records of whole 8-byte words, each starting with two u32
// (little-endian) — its kind and one argument:
//   1 key     arg = name length; the UTF-8 name, zero-padded. Keys are numbered in order.
//   2 schema  arg = key count; that many u32 key ids, zero-padded. Schemas are numbered in order.
//   3 row     arg = schema id; f64 line start, f64 line end (byte offsets in metrics.jsonl), then
//             one f64 per key of the schema.
// Most rows of a run share a few key sets, so a row costs its values and 24 bytes. Only finite
// numbers are kept (strings and nulls are not charted). A record cut short by a crash is ignored
// by readers and cut by the next writer.
import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readFileSync, readSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { writeAll, writeFileAtomic } from "../files/durable.ts";
import { JsonlTailReader } from "./tail.ts";

export const METRIC_COLUMNS_FILE = "metrics.columns";
const MAGIC = 0x434d4243; // "CBMC" read as a little-endian u32
const VERSION = 1;
const HEADER_BYTES = 8;
const KEY = 1;
const SCHEMA = 2;
const ROW = 3;

/** One metric's finite values and the rows (0-based) they came from. */
export interface MetricColumn {
  rows: Int32Array;
  values: Float64Array;
}

/** The numeric side of metrics.jsonl by column: what charts need, without a row object per step. */
export interface MetricColumns {
  /** Rows in metrics.jsonl (every record, also those without numbers). */
  length: number;
  /** Each row's `step` (NaN when it has none), built on first use. */
  readonly step: Float64Array;
  /** Every key with at least one finite number, `step` included. */
  keys: readonly string[];
  /** A key's values (decoded on first use), or undefined when it never had a number. */
  column(key: string): MetricColumn | undefined;
  /** The finite number `key` has in row `row`, read from that row alone (no column is decoded). */
  valueAt(row: number, key: string): number | undefined;
  /** Where the numbers came from: this cache (and the lines after it) or metrics.jsonl alone. */
  source: "columns" | "jsonl";
}

const pad8 = (n: number): number => (n + 7) & ~7;

function numericEntries(record: Record<string, unknown>): [string, number][] {
  const out: [string, number][] = [];
  for (const k in record) {
    const v = record[k];
    if (typeof v === "number" && Number.isFinite(v)) out.push([k, v]);
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Consecutive rows of one schema with nothing between them: row `firstRow + i` has its record at
 * f64 word `firstWord + i * stride`. A run's rows are found without visiting each of them again.
 */
interface Run {
  schema: number;
  firstRow: number;
  count: number;
  firstWord: number;
  stride: number;
}

/** The file decoded down to its rows' positions: values are read only for the columns asked for. */
interface Decoded {
  keys: string[];
  /** Key ids per schema. */
  schemas: Uint32Array[];
  runs: Run[];
  rows: number;
  f64: Float64Array;
  /** Bytes of complete records (a torn record after them is ignored). */
  validBytes: number;
}

/** An 8-byte-aligned copy when the buffer is not (typed-array views need it). */
function aligned(buf: Buffer): Buffer {
  if (buf.byteOffset % 8 === 0) return buf;
  const copy = Buffer.from(new ArrayBuffer(buf.length));
  buf.copy(copy);
  return copy;
}

function decode(raw: Buffer): Decoded | undefined {
  const buf = aligned(raw);
  const words = buf.length >> 2;
  const u32 = new Uint32Array(buf.buffer, buf.byteOffset, words);
  const f64 = new Float64Array(buf.buffer, buf.byteOffset, buf.length >> 3);
  if (words < 2 || u32[0] !== MAGIC || u32[1] !== VERSION) return undefined;
  const keys: string[] = [];
  const schemas: Uint32Array[] = [];
  const runs: Run[] = [];
  let rows = 0;
  let w = 2; // in u32 words
  while (w + 2 <= words) {
    const kind = u32[w];
    const arg = u32[w + 1];
    let next: number;
    if (kind === KEY) {
      next = w + 2 + (pad8(arg) >> 2);
      if (next > words) break;
      keys.push(buf.toString("utf8", (w + 2) * 4, (w + 2) * 4 + arg));
    } else if (kind === SCHEMA) {
      next = w + 2 + (pad8(arg * 4) >> 2);
      if (next > words) break;
      const ids = u32.slice(w + 2, w + 2 + arg);
      if (ids.some((id) => id >= keys.length)) return undefined;
      schemas.push(ids);
    } else if (kind === ROW) {
      if (arg >= schemas.length) return undefined;
      const stride = 6 + schemas[arg].length * 2;
      if (w + stride > words) break;
      // The rows that follow with the same schema: most of a run's file, in one tight loop.
      let count = 1;
      next = w + stride;
      while (next + stride <= words && u32[next] === ROW && u32[next + 1] === arg) {
        next += stride;
        count++;
      }
      runs.push({ schema: arg, firstRow: rows, count, firstWord: (w + 2) >> 1, stride: stride >> 1 });
      rows += count;
    } else {
      return undefined;
    }
    w = next;
  }
  return { keys, schemas, runs, rows, f64, validBytes: w * 4 };
}

/** The run holding row `r` (< d.rows). */
function runOf(d: Decoded, r: number): Run {
  let lo = 0;
  let hi = d.runs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (d.runs[mid].firstRow <= r) lo = mid;
    else hi = mid - 1;
  }
  return d.runs[lo];
}

/** The f64 word where row `r`'s record starts (its line start; then end, then values). */
function rowWord(d: Decoded, r: number): number {
  const run = runOf(d, r);
  return run.firstWord + (r - run.firstRow) * run.stride;
}

interface Row {
  start: number;
  end: number;
  numbers: [string, number][];
}

function rowAt(d: Decoded, r: number): Row {
  const word = rowWord(d, r);
  const ids = d.schemas[runOf(d, r).schema];
  const numbers: [string, number][] = Array.from(ids, (id, j) => [d.keys[id], d.f64[word + 2 + j]]);
  return { start: d.f64[word], end: d.f64[word + 1], numbers };
}

function readBytes(path: string, start: number, end: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    const out = Buffer.alloc(end - start);
    let done = 0;
    while (done < out.length) {
      const n = readSync(fd, out, done, out.length - done, start + done);
      if (n === 0) return undefined;
      done += n;
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

/** The row's numbers equal what its line in metrics.jsonl says: the cache still describes the file. */
function rowMatchesLine(jsonlPath: string, row: Row): boolean {
  const bytes = readBytes(jsonlPath, row.start, row.end);
  if (bytes === undefined || bytes[bytes.length - 1] !== 0x0a) return false;
  let record: unknown;
  try {
    record = JSON.parse(bytes.toString("utf8"));
  } catch {
    return false;
  }
  if (!isRecord(record)) return false;
  const numbers = numericEntries(record);
  if (numbers.length !== row.numbers.length) return false;
  const expected = new Map(numbers);
  return row.numbers.every(([k, v]) => expected.get(k) === v);
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Key and schema numbering shared by the writer's appends and rebuilds. */
class Encoder {
  readonly keyIds = new Map<string, number>();
  readonly schemaIds = new Map<string, number>();

  static from(d: Decoded): Encoder {
    const e = new Encoder();
    d.keys.forEach((k, i) => e.keyIds.set(k, i));
    d.schemas.forEach((ids, i) => e.schemaIds.set(ids.join(","), i));
    return e;
  }

  /** The records (new keys, a new schema, the row) for the line at [start, end). */
  row(record: Record<string, unknown>, start: number, end: number, parts: Buffer[]): void {
    const numbers = numericEntries(record);
    const ids = numbers.map(([k]) => {
      let id = this.keyIds.get(k);
      if (id === undefined) {
        id = this.keyIds.size;
        this.keyIds.set(k, id);
        const name = Buffer.from(k, "utf8");
        const rec = Buffer.alloc(8 + pad8(name.length));
        rec.writeUInt32LE(KEY, 0);
        rec.writeUInt32LE(name.length, 4);
        name.copy(rec, 8);
        parts.push(rec);
      }
      return id;
    });
    const signature = ids.join(",");
    let schema = this.schemaIds.get(signature);
    if (schema === undefined) {
      schema = this.schemaIds.size;
      this.schemaIds.set(signature, schema);
      const rec = Buffer.alloc(8 + pad8(ids.length * 4));
      rec.writeUInt32LE(SCHEMA, 0);
      rec.writeUInt32LE(ids.length, 4);
      ids.forEach((id, i) => rec.writeUInt32LE(id, 8 + i * 4));
      parts.push(rec);
    }
    const rec = Buffer.alloc(24 + numbers.length * 8);
    rec.writeUInt32LE(ROW, 0);
    rec.writeUInt32LE(schema, 4);
    rec.writeDoubleLE(start, 8);
    rec.writeDoubleLE(end, 16);
    numbers.forEach(([, v], i) => rec.writeDoubleLE(v, 24 + i * 8));
    parts.push(rec);
  }
}

function header(): Buffer {
  const b = Buffer.alloc(HEADER_BYTES);
  b.writeUInt32LE(MAGIC, 0);
  b.writeUInt32LE(VERSION, 4);
  return b;
}

/** One write; cut back to where the file was if it fails part-way. */
function appendWhole(path: string, bytes: Buffer): void {
  const fd = openSync(path, "a");
  try {
    const size = fstatSync(fd).size;
    try {
      writeAll(fd, bytes);
    } catch (err) {
      ftruncateSync(fd, size);
      throw err;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Keeps metrics.columns in step with metrics.jsonl for the run's single writer. Every failure here
 * is swallowed after removing the file: it is a cache, and readers fall back to metrics.jsonl.
 */
export class MetricColumnsWriter {
  readonly path: string;
  private encoder: Encoder | undefined;
  private broken = false;

  constructor(readonly jsonlPath: string) {
    this.path = join(dirname(jsonlPath), METRIC_COLUMNS_FILE);
  }

  /** Records the line just appended to metrics.jsonl at [start, end). */
  append(record: Record<string, unknown>, start: number, end: number): void {
    if (this.broken) return;
    try {
      this.encoder ??= this.sync(start);
      const parts: Buffer[] = [];
      this.encoder.row(record, start, end, parts);
      appendWhole(this.path, Buffer.concat(parts));
    } catch {
      this.broken = true;
      rmSync(this.path, { force: true });
    }
  }

  /**
   * The numbering to continue with, after making the file describe metrics.jsonl up to `upTo`
   * bytes: kept when its last row ends there and matches its line, otherwise rebuilt.
   */
  private sync(upTo: number): Encoder {
    if (existsSync(this.path)) {
      const d = decode(readFileSync(this.path));
      if (d !== undefined) {
        const last = d.rows > 0 ? rowAt(d, d.rows - 1) : undefined;
        const consistent = last === undefined ? upTo === 0 : last.end === upTo && rowMatchesLine(this.jsonlPath, last);
        if (consistent) {
          if (d.validBytes < fileSize(this.path)) {
            const fd = openSync(this.path, "r+");
            try {
              ftruncateSync(fd, d.validBytes);
            } finally {
              closeSync(fd);
            }
          }
          return Encoder.from(d);
        }
      }
    }
    return this.rebuild(upTo);
  }

  private rebuild(upTo: number): Encoder {
    const encoder = new Encoder();
    const parts: Buffer[] = [header()];
    const text = upTo > 0 ? (readBytes(this.jsonlPath, 0, upTo) ?? Buffer.alloc(0)) : Buffer.alloc(0);
    let start = 0;
    while (start < text.length) {
      let end = text.indexOf(0x0a, start);
      if (end < 0) break;
      end += 1;
      let record: unknown;
      try {
        record = JSON.parse(text.toString("utf8", start, end));
      } catch {
        record = undefined;
      }
      if (isRecord(record)) encoder.row(record, start, end, parts);
      start = end;
    }
    writeFileAtomic(this.path, Buffer.concat(parts), { fsync: false, context: `rebuilding ${basename(this.path)}` });
    return encoder;
  }
}

/** The records of complete lines from a byte offset (the start of a line) of a JSONL file. */
function recordsFrom(path: string, offset: number): Record<string, unknown>[] {
  const reader = new JsonlTailReader(path);
  reader.seek(offset);
  return reader.read();
}

/** Columns of parsed rows, numbering rows from `firstRow`. */
function columnsOfRows(rows: readonly Record<string, unknown>[], firstRow: number): Map<string, { rows: number[]; values: number[] }> {
  const out = new Map<string, { rows: number[]; values: number[] }>();
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    for (const k in r) {
      const v = r[k];
      if (typeof v !== "number" || !Number.isFinite(v)) continue;
      let c = out.get(k);
      if (c === undefined) {
        c = { rows: [], values: [] };
        out.set(k, c);
      }
      c.rows.push(firstRow + i);
      c.values.push(v);
    }
  }
  return out;
}

/**
 * The numbers of a run's metrics.jsonl by column: from metrics.columns when it matches the file
 * (then only lines appended after it are parsed), else by parsing the whole file.
 */
export function readMetricColumns(logDir: string): MetricColumns {
  const jsonlPath = join(logDir, "metrics.jsonl");
  let raw: Buffer | undefined;
  try {
    raw = readFileSync(join(logDir, METRIC_COLUMNS_FILE));
  } catch {
    raw = undefined;
  }
  const d = raw === undefined ? undefined : decode(raw);
  if (d !== undefined && d.rows > 0) {
    // Rows whose lines lie within the file as it is now; the last of them must match its line.
    const size = fileSize(jsonlPath);
    let n = d.rows;
    while (n > 0 && d.f64[rowWord(d, n - 1) + 1] > size) n--;
    const last = n > 0 ? rowAt(d, n - 1) : undefined;
    if (last !== undefined && rowMatchesLine(jsonlPath, last)) return fromCache(d, n, recordsFrom(jsonlPath, last.end));
  }
  return fromRows(recordsFrom(jsonlPath, 0));
}

function stepColumn(length: number, column: MetricColumn | undefined): Float64Array {
  // In every row: the step of row r is the column's value r.
  if (column !== undefined && column.values.length === length) return column.values;
  const step = new Float64Array(length).fill(Number.NaN);
  if (column !== undefined) for (let j = 0; j < column.rows.length; j++) step[column.rows[j]] = column.values[j];
  return step;
}

const finiteOrUndefined = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

function fromRows(rows: readonly Record<string, unknown>[]): MetricColumns {
  const columns = new Map<string, MetricColumn>();
  for (const [k, c] of columnsOfRows(rows, 0)) columns.set(k, { rows: Int32Array.from(c.rows), values: Float64Array.from(c.values) });
  let step: Float64Array | undefined;
  return {
    length: rows.length,
    get step() {
      step ??= stepColumn(rows.length, columns.get("step"));
      return step;
    },
    keys: [...columns.keys()],
    column: (k) => columns.get(k),
    valueAt: (row, key) => finiteOrUndefined(rows[row]?.[key]),
    source: "jsonl",
  };
}

/** The first `cachedRows` rows from the cache, then `tail` (parsed lines written after them). */
function fromCache(d: Decoded, cachedRows: number, tail: readonly Record<string, unknown>[]): MetricColumns {
  const tailColumns = columnsOfRows(tail, cachedRows);
  const length = cachedRows + tail.length;
  const keyIds = new Map(d.keys.map((k, i) => [k, i]));
  const f64 = d.f64;
  // The runs cut at cachedRows (rows past it are not in metrics.jsonl as it is now).
  const runs: Run[] = [];
  for (const run of d.runs) {
    if (run.firstRow >= cachedRows) break;
    runs.push({ ...run, count: Math.min(run.count, cachedRows - run.firstRow) });
  }
  const seen = new Set<string>();
  const schemaSeen = new Set<number>();
  for (const run of runs) {
    if (schemaSeen.has(run.schema)) continue;
    schemaSeen.add(run.schema);
    for (const id of d.schemas[run.schema]) seen.add(d.keys[id]);
  }
  const keys = [...new Set([...seen, ...tailColumns.keys()])];
  /** Where the key sits in each schema's values (-1: absent). */
  const slots = new Map<string, Int32Array>();
  const slotsOf = (key: string): Int32Array => {
    let slot = slots.get(key);
    if (slot === undefined) {
      const id = keyIds.get(key);
      slot = Int32Array.from(d.schemas, (ids) => (id === undefined ? -1 : ids.indexOf(id)));
      slots.set(key, slot);
    }
    return slot;
  };
  const decoded = new Map<string, MetricColumn | undefined>();
  const decodeColumn = (key: string): MetricColumn | undefined => {
    const slot = slotsOf(key);
    let count = 0;
    for (const run of runs) if (slot[run.schema] >= 0) count += run.count;
    const extra = tailColumns.get(key);
    const total = count + (extra?.rows.length ?? 0);
    if (total === 0) return undefined;
    const values = new Float64Array(total);
    // A key in every row (the usual case) needs no row numbers: they are 0, 1, 2, … and are made
    // only if someone asks. Loops here are few and tight: a snapshot runs them once, unoptimised.
    const dense = total === length;
    const rows = dense ? undefined : new Int32Array(total);
    let j = 0;
    for (const run of runs) {
      const at = slot[run.schema];
      if (at < 0) continue;
      const { stride } = run;
      const end = j + run.count;
      for (let p = run.firstWord + 2 + at; j < end; j++, p += stride) values[j] = f64[p];
      if (rows !== undefined) for (let r = run.firstRow, i = end - run.count; i < end; i++, r++) rows[i] = r;
    }
    if (extra !== undefined) {
      values.set(extra.values, j);
      rows?.set(extra.rows, j);
    }
    if (rows !== undefined) return { rows, values };
    let identity: Int32Array | undefined;
    return {
      get rows() {
        identity ??= Int32Array.from({ length: total }, (_, i) => i);
        return identity;
      },
      values,
    };
  };
  const column = (key: string): MetricColumn | undefined => {
    if (!decoded.has(key)) decoded.set(key, decodeColumn(key));
    return decoded.get(key);
  };
  let step: Float64Array | undefined;
  return {
    length,
    get step() {
      step ??= stepColumn(length, column("step"));
      return step;
    },
    keys,
    column,
    valueAt: (row, key) => {
      if (row < 0 || row >= length) return undefined;
      if (row >= cachedRows) return finiteOrUndefined(tail[row - cachedRows][key]);
      const run = runOf(d, row);
      const at = slotsOf(key)[run.schema];
      return at < 0 ? undefined : f64[run.firstWord + (row - run.firstRow) * run.stride + 2 + at];
    },
    source: "columns",
  };
}

/** metrics.columns no longer describes a rewritten metrics.jsonl: the next writer rebuilds it. */
export function dropMetricColumns(logDir: string): void {
  rmSync(join(logDir, METRIC_COLUMNS_FILE), { force: true });
}
