// Turns the synthetic document stream into next-token-prediction batches for EngineModel: each
// document is its own sequence (BOS … EOS), and a batch takes documents until a token budget.
import type { SequenceInput } from "../../src/engine/model/model.ts";
import type { ByteLevelBpeEncoder } from "../../src/tokenizerTraining/encoder.ts";

export interface TokenBatch {
  sequences: SequenceInput[];
  /** Target tokens in the batch (the loss is their mean). */
  tokens: number;
  documents: number;
}

/** BOS + document + EOS, cut to maxLength tokens. */
export function documentTokens(encoder: ByteLevelBpeEncoder, doc: string, specialId: number, maxLength: number): number[] {
  const ids = [specialId, ...encoder.encode(doc), specialId];
  return ids.length > maxLength ? ids.slice(0, maxLength) : ids;
}

/**
 * Next-token datums over whole documents. Each target gets weight 1/totalTargets, so the summed
 * loss the engine returns is the batch's mean per-token loss (gradient scale independent of the
 * batch's size).
 */
export function makeBatch(docs: readonly number[][]): TokenBatch {
  const total = docs.reduce((n, d) => n + d.length - 1, 0);
  const sequences = docs.map((d): SequenceInput => {
    const n = d.length - 1;
    return {
      inputTokens: Int32Array.from(d.slice(0, n)),
      lossInputs: { target_tokens: Int32Array.from(d.slice(1)), weights: new Float32Array(n).fill(1 / total) },
    };
  });
  return { sequences, tokens: total, documents: docs.length };
}

export class BatchStream {
  constructor(
    private readonly docs: Iterator<string>,
    private readonly encoder: ByteLevelBpeEncoder,
    private readonly specialId: number,
    private readonly maxLength: number,
  ) {}

  /** Documents until their targets reach `batchTokens` (at least one document). */
  next(batchTokens: number): TokenBatch {
    const picked: number[][] = [];
    let n = 0;
    while (n < batchTokens) {
      const r = this.docs.next();
      if (r.done) break;
      const ids = documentTokens(this.encoder, r.value, this.specialId, this.maxLength);
      if (ids.length < 2) continue;
      picked.push(ids);
      n += ids.length - 1;
    }
    if (picked.length === 0) throw new Error("BatchStream: the document stream is empty");
    return makeBatch(picked);
  }
}
