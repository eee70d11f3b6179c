// The rows of a hub dataset split as plain objects, each with the file and row it came from so
// that errors can name them. Parquet lists come back as arrays and structs as objects; int64
// columns may come back as bigint (see `cellInt`). Files are read one row group at a time through
// byte ranges (the footer first, then each group's column chunks), so a file far larger than
// memory streams: only the row group being read is ever held.
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from "hyparquet";
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

type ParquetFile = Awaited<ReturnType<typeof asyncBufferFromFile>>;
type ParquetMetadata = Awaited<ReturnType<typeof parquetMetadataAsync>>;

async function openParquet(file: string, what: string): Promise<{ buffer: ParquetFile; metadata: ParquetMetadata }> {
  try {
    const buffer = await asyncBufferFromFile(file);
    return { buffer, metadata: await parquetMetadataAsync(buffer) };
  } catch (err) {
    throw new DatasetRowError(`${file}: cannot read ${what} (${(err as Error).message})`);
  }
}

function describeColumns(columns: string[] | undefined): string {
  return columns === undefined ? "rows" : `columns ${columns.join(", ")}`;
}

/** The rows of one parquet file, one row group at a time; errors name the file (and row group). */
export async function* streamParquetRows(file: string, columns?: string[]): AsyncGenerator<DatasetRow> {
  const what = describeColumns(columns);
  const { buffer, metadata } = await openParquet(file, what);
  let start = 0;
  for (const [group, rowGroup] of metadata.row_groups.entries()) {
    const end = start + Number(rowGroup.num_rows);
    let rows: Record<string, unknown>[];
    try {
      rows = await parquetReadObjects({ file: buffer, metadata, rowStart: start, rowEnd: end, ...(columns === undefined ? {} : { columns }) });
    } catch (err) {
      throw new DatasetRowError(`${file}: cannot read ${what} of row group ${group} (${(err as Error).message})`);
    }
    for (const [i, values] of rows.entries()) yield { file, row: start + i, values };
    start = end;
  }
}

/**
 * Rows [rowStart, rowEnd) of one parquet file. Only the row groups they fall in are read, each
 * whole: a range inside a big row group costs that row group's memory.
 */
export async function readParquetRowRange(file: string, rowStart: number, rowEnd: number, columns?: string[]): Promise<DatasetRow[]> {
  const what = describeColumns(columns);
  const { buffer, metadata } = await openParquet(file, what);
  let rows: Record<string, unknown>[];
  try {
    rows = await parquetReadObjects({ file: buffer, metadata, rowStart, rowEnd, ...(columns === undefined ? {} : { columns }) });
  } catch (err) {
    throw new DatasetRowError(`${file}: cannot read ${what} of rows ${rowStart}..${rowEnd} (${(err as Error).message})`);
  }
  return rows.map((values, i) => ({ file, row: rowStart + i, values }));
}

/** The rows of every parquet file of a split, in file order, streamed. */
export async function* streamSplitRows(ref: HubDatasetRef, columns: string[] | undefined, options: HubOptions = {}): AsyncGenerator<DatasetRow> {
  for (const file of await resolveDatasetSplitFiles(ref, options)) yield* streamParquetRows(file, columns);
}

/** Reads the given columns (all when undefined) of every parquet file of the split. */
export async function readSplitRows(ref: HubDatasetRef, columns: string[] | undefined, options: HubOptions = {}): Promise<DatasetRow[]> {
  const out: DatasetRow[] = [];
  for await (const row of streamSplitRows(ref, columns, options)) out.push(row);
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
