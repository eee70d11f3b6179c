// A chat parquet file larger than the memory the tests let a process have, written row group by
// row group (never the whole table in memory): each row a user question and an answer of random
// base64 (so the file does not compress) that starts with the row's number.
import { randomBytes } from "node:crypto";
import { ParquetWriter, fileWriter, schemaFromColumnData } from "hyparquet-writer";

export interface BigChatParquet {
  rows: number;
  /** Random bytes per answer (its text is 4/3 as long). */
  answerBytes: number;
  groupRows: number;
}

export function answerPrefix(i: number): string {
  return `${String(i).padStart(7, "0")} `;
}

export function writeBigChatParquet(path: string, { rows, answerBytes, groupRows }: BigChatParquet): void {
  let writer: ParquetWriter | undefined;
  for (let start = 0; start < rows; start += groupRows) {
    const ids = Array.from({ length: Math.min(groupRows, rows - start) }, (_, i) => start + i);
    const messages = ids.map((i) => [
      { role: "user", content: `Row ${i}?` },
      { role: "assistant", content: answerPrefix(i) + randomBytes(answerBytes).toString("base64") },
    ]);
    const columnData = [{ name: "messages", data: messages }];
    writer ??= new ParquetWriter({ writer: fileWriter(path), schema: schemaFromColumnData({ columnData }), codec: "UNCOMPRESSED", statistics: false });
    writer.write({ columnData, rowGroupSize: groupRows });
  }
  writer!.finish();
}
