// Splitting one forward_backward call into requests the server accepts (docs/protocol.md#training-client-and-chunking): at most
// `maxLen` datums and about `maxBytes` estimated bytes per chunk, in the original order.
import type { Datum } from "../types.ts";

/** A rough size of a datum on the wire; only used to keep chunks under the server's limit. */
export function estimateDatumBytes(d: Datum): number {
  let bytes = 0;
  for (const c of d.model_input.chunks) {
    if (c.type === "encoded_text") bytes += c.tokens.length * 10;
    else if (c.type === "image") bytes += c.data.length;
    else bytes += c.location.length;
  }
  for (const td of Object.values(d.loss_fn_inputs)) {
    bytes += (td.data.length + (td.sparse_crow_indices?.length ?? 0) + (td.sparse_col_indices?.length ?? 0)) * 10;
  }
  return bytes;
}

export function splitIntoChunks(data: Datum[], maxLen: number, maxBytes: number): Datum[][] {
  const chunks: Datum[][] = [];
  let current: Datum[] = [];
  let currentBytes = 0;
  for (const d of data) {
    const size = estimateDatumBytes(d);
    if (current.length > 0 && (current.length >= maxLen || currentBytes + size > maxBytes)) {
      chunks.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(d);
    currentBytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
