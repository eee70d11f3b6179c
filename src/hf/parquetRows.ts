// The rows of a hub dataset split as plain objects, each with the file and row it came from so
// that errors can name them. Parquet lists come back as arrays and structs as objects; int64
// columns may come back as bigint (see `cellInt`).
import { readFileSync } from "node:fs";
import { parquetReadObjects } from "hyparquet";
import { resolveDatasetSplitFiles, type HubDatasetRef, type HubOptions } from "./datasets.ts";

export interface DatasetRow {
  file: string;
  /** 0-based row within `file`. */
  row: number;
  values: Record<string, unknown>;
}

export class DatasetRowError extends Error {
  override name = "DatasetRowError";
}

/** Reads the given columns (all when undefined) of every parquet file of the split. */
export async function readSplitRows(ref: HubDatasetRef, columns: string[] | undefined, options: HubOptions = {}): Promise<DatasetRow[]> {
  const files = await resolveDatasetSplitFiles(ref, options);
  const out: DatasetRow[] = [];
  for (const file of files) {
    const buf = readFileSync(file);
    let rows: Record<string, unknown>[];
    try {
      const data = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
      rows = await parquetReadObjects(columns === undefined ? { file: data } : { file: data, columns });
    } catch (err) {
      throw new DatasetRowError(`${file}: cannot read ${columns === undefined ? "rows" : `columns ${columns.join(", ")}`} (${(err as Error).message})`);
    }
    rows.forEach((values, row) => out.push({ file, row, values }));
  }
  return out;
}

function describe(v: unknown): string {
  if (v === undefined) return "nothing (no such column)";
  return typeof v === "bigint" ? `${v}n` : JSON.stringify(v);
}

/** A string cell (numbers are accepted and written out); else an error naming file, row and column. */
export function cellString(r: DatasetRow, key: string): string {
  const v = r.values[key];
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  throw new DatasetRowError(`${r.file} row ${r.row}: column "${key}" must be a string, got ${describe(v)}`);
}

/** An integer cell (int32, int64 as bigint, or a numeric string). */
export function cellInt(r: DatasetRow, key: string): number {
  const v = r.values[key];
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "number" && Number.isInteger(v)) return v;
  if (typeof v === "string" && /^\s*-?\d+\s*$/.test(v)) return Number(v);
  throw new DatasetRowError(`${r.file} row ${r.row}: column "${key}" must be an integer, got ${describe(v)}`);
}

/** A list-of-strings cell. */
export function cellStringList(r: DatasetRow, key: string): string[] {
  const v = r.values[key];
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v as string[];
  throw new DatasetRowError(`${r.file} row ${r.row}: column "${key}" must be a list of strings, got ${describe(v)}`);
}
