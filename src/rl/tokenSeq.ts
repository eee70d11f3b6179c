// Flat token views of ModelInput for multi-turn datum assembly. Image chunks are kept as opaque
// elements occupying `expected_tokens` positions, so prefix checks still work with images.
import { chunkLength } from "../tinker/modelInput.ts";
import type { ModelInput, ModelInputChunk } from "../tinker/types.ts";

export { emptyModelInput, modelInputFromInts, modelInputLength, modelInputToInts } from "../tinker/modelInput.ts";

export type FlatElem = number | Exclude<ModelInputChunk, { type: "encoded_text" }>;

export function flattenModelInput(input: ModelInput): FlatElem[] {
  const out: FlatElem[] = [];
  for (const chunk of input.chunks) {
    if (chunk.type === "encoded_text") out.push(...chunk.tokens);
    else out.push(chunk);
  }
  return out;
}

export function flatLength(flat: readonly FlatElem[]): number {
  let n = 0;
  for (const e of flat) n += typeof e === "number" ? 1 : chunkLength(e);
  return n;
}

function sameElem(a: FlatElem, b: FlatElem): boolean {
  if (typeof a === "number" || typeof b === "number") return a === b;
  return JSON.stringify(a) === JSON.stringify(b);
}

export function isPrefix(prefix: readonly FlatElem[], seq: readonly FlatElem[]): boolean {
  if (prefix.length > seq.length) return false;
  for (let i = 0; i < prefix.length; i++) if (!sameElem(prefix[i], seq[i])) return false;
  return true;
}

export function flatToModelInput(flat: readonly FlatElem[]): ModelInput {
  const chunks: ModelInputChunk[] = [];
  let text: number[] = [];
  for (const e of flat) {
    if (typeof e === "number") text.push(e);
    else {
      if (text.length > 0) chunks.push({ type: "encoded_text", tokens: text });
      text = [];
      chunks.push(e);
    }
  }
  if (text.length > 0) chunks.push({ type: "encoded_text", tokens: text });
  return { chunks };
}
