// A parquet file larger than the memory it is read in: streamParquetRows holds one row group at a
// time, so a child capped at a 48 MB heap reads every row of a ~120 MB file (and its buffers stay
// a few row groups big), while reading the same file whole under the same cap runs out of memory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ParquetWriter, fileWriter, schemaFromColumnData } from "hyparquet-writer";
import { REPO } from "../recipes/helpers.ts";

const ROWS = 1900;
const GROUP = 32;
const TEXT_BYTES = 48 * 1024; // 64 KiB of base64 per row

/** Writes the file group by group (never the whole table in memory); returns the rows' digest. */
function writeBigParquet(path: string): string {
  const digest = createHash("sha256");
  let writer: ParquetWriter | undefined;
  for (let start = 0; start < ROWS; start += GROUP) {
    const ids = Array.from({ length: Math.min(GROUP, ROWS - start) }, (_, i) => start + i);
    const texts = ids.map(() => randomBytes(TEXT_BYTES).toString("base64"));
    for (const [i, id] of ids.entries()) digest.update(`${id}:${texts[i]}\n`);
    const columnData = [
      { name: "id", data: Int32Array.from(ids), type: "INT32" as const },
      { name: "text", data: texts, type: "STRING" as const },
    ];
    writer ??= new ParquetWriter({ writer: fileWriter(path), schema: schemaFromColumnData({ columnData }), codec: "UNCOMPRESSED", statistics: false });
    writer.write({ columnData, rowGroupSize: GROUP });
  }
  writer!.finish();
  return digest.digest("hex");
}

const STREAM = `
import { createHash } from "node:crypto";
const { streamParquetRows } = await import(${JSON.stringify(join(REPO, "src/hf/parquetRows.ts"))});
const digest = createHash("sha256");
let rows = 0, peakBuffers = 0;
for await (const r of streamParquetRows(process.argv[1])) {
  digest.update(r.values.id + ":" + r.values.text + "\\n");
  rows++;
  if (rows % 16 === 0) peakBuffers = Math.max(peakBuffers, process.memoryUsage().arrayBuffers);
}
console.log(JSON.stringify({ rows, digest: digest.digest("hex"), peakBuffers }));
`;

const WHOLE = `
import { readFileSync } from "node:fs";
import { parquetReadObjects } from "hyparquet";
const buf = readFileSync(process.argv[1]);
const rows = await parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) });
console.log(JSON.stringify({ rows: rows.length }));
`;

function runCapped(source: string, file: string) {
  return spawnSync(process.execPath, ["--max-old-space-size=48", "--import", "tsx", "--input-type=module", "-e", source, file], {
    cwd: REPO,
    encoding: "utf8",
    timeout: 240_000,
  });
}

test("a parquet file larger than the heap streams row group by row group", { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "parquet-stream-"));
  try {
    const file = join(dir, "big.parquet");
    const expected = writeBigParquet(file);
    const size = statSync(file).size;
    assert.ok(size > 100 * 1024 * 1024, `the file is ${size} bytes`);

    const streamed = runCapped(STREAM, file);
    assert.equal(streamed.status, 0, `streaming under a 48 MB heap failed:\n${streamed.stderr.slice(-2000)}`);
    const result = JSON.parse(streamed.stdout.trim().split("\n").pop()!) as { rows: number; digest: string; peakBuffers: number };
    assert.equal(result.rows, ROWS);
    assert.equal(result.digest, expected, "every row read back, in order");
    // Buffers freed by the collector linger a few groups; the whole file would be all of it.
    assert.ok(result.peakBuffers < size / 4, `buffers peaked at ${result.peakBuffers} bytes for a ${size}-byte file`);

    // The cap is real: the same file read whole does not fit.
    const whole = runCapped(WHOLE, file);
    assert.notEqual(whole.status, 0, "reading the whole file under the same cap should run out of memory");
    assert.match(whole.stderr, /heap out of memory|Allocation failed/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
