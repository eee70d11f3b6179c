// Metric keys are "<name>:<reduction>" (docs/protocol.md#metric-names-and-merging). When one logical forward_backward was split
// into chunks, the reduction suffix says how the per-chunk values combine into one.
import { InvalidArgumentError } from "./errors.ts";
import type { ForwardBackwardOutput } from "./types.ts";

export type Reduction = "mean" | "slack" | "sum" | "min" | "max" | "hash_unordered" | "unique";
const REDUCTIONS: ReadonlySet<string> = new Set(["mean", "slack", "sum", "min", "max", "hash_unordered", "unique"]);

export function metricKey(name: string, reduction: Reduction): string {
  return `${name}:${reduction}`;
}

/** Splits at the last ":"; keys without one have reduction undefined. */
export function parseMetricKey(key: string): { name: string; reduction: string | undefined } {
  const i = key.lastIndexOf(":");
  if (i < 0) return { name: key, reduction: undefined };
  return { name: key.slice(0, i), reduction: key.slice(i + 1) };
}

export interface ChunkMetrics {
  metrics: Record<string, number>;
  numDatums: number;
}

/**
 * Merges per-chunk metrics. Keys come from the first chunk (a key missing in a later chunk is
 * skipped for that chunk); keys with an unknown reduction are dropped. A single chunk is returned
 * unchanged.
 */
export function mergeChunkMetrics(chunks: ChunkMetrics[]): Record<string, number> {
  if (chunks.length === 0) return {};
  if (chunks.length === 1) return { ...chunks[0]!.metrics };
  const out: Record<string, number> = {};
  for (const key of Object.keys(chunks[0]!.metrics)) {
    const { reduction } = parseMetricKey(key);
    if (reduction === undefined || !REDUCTIONS.has(reduction)) continue;
    const present = chunks.filter((c) => key in c.metrics);
    const values = present.map((c) => c.metrics[key]!);
    switch (reduction as Reduction) {
      case "sum":
        out[key] = values.reduce((a, b) => a + b, 0);
        break;
      case "min":
        out[key] = Math.min(...values);
        break;
      case "max":
        out[key] = Math.max(...values);
        break;
      case "mean":
      case "slack": {
        const total = present.reduce((a, c) => a + c.numDatums, 0);
        out[key] = total === 0 ? values.reduce((a, b) => a + b, 0) / values.length : present.reduce((a, c) => a + c.metrics[key]! * c.numDatums, 0) / total;
        break;
      }
      case "hash_unordered":
        out[key] = hashUnordered(values);
        break;
      case "unique":
        values.forEach((v, i) => {
          out[i === 0 ? key : `${key}_${i + 1}`] = v;
        });
        break;
    }
  }
  return out;
}

/** An order-insensitive 32-bit hash of numbers (FNV-1a over the sorted float64 bytes). */
export function hashUnordered(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const bytes = new Uint8Array(new Float64Array(sorted).buffer);
  let h = 0x811c9dc5;
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Concatenates per-datum outputs of chunked calls in order and merges their metrics. */
export function combineForwardBackwardOutputs(outputs: ForwardBackwardOutput[]): ForwardBackwardOutput {
  if (outputs.length === 0) {
    throw new InvalidArgumentError("combineForwardBackwardOutputs: expected at least one chunk output");
  }
  return {
    loss_fn_output_type: outputs[0]!.loss_fn_output_type,
    loss_fn_outputs: outputs.flatMap((o) => o.loss_fn_outputs),
    metrics: mergeChunkMetrics(outputs.map((o) => ({ metrics: o.metrics, numDatums: o.loss_fn_outputs.length }))),
  };
}
