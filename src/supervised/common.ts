// Datum construction for supervised learning and the NLL / bits-per-byte metrics
// (docs/cookbook-parity.md#supervised-datasets-and-datums).
import { chunkLength } from "../tinker/modelInput.ts";
import { tensorDataFromFloat32, tensorDataFromInt64, tensorDataToNumbers } from "../tinker/tensorData.ts";
import type { Datum, ModelInput, ModelInputChunk, TensorData } from "../tinker/types.ts";
import type { Renderer } from "../renderers/base.ts";
import type { Message, TrainOnWhat } from "../renderers/types.ts";
import type { Tokenizer } from "../tokenizers/types.ts";

export type WeightReduction = "mean" | "none";

export class DataValidationError extends Error {
  override name = "DataValidationError";
}

/**
 * Next-token shift of a chunk sequence: the input drops the last token, the targets drop the
 * first (image positions have target 0).
 */
export function createRightshiftedModelInputAndLeftshiftedTargets(chunks: readonly ModelInputChunk[]): {
  modelInput: ModelInput;
  targetTokens: number[];
} {
  const last = chunks[chunks.length - 1];
  if (last === undefined) throw new DataValidationError("need at least one chunk to build a datum");
  if (last.type !== "encoded_text") {
    throw new DataValidationError("the last chunk must be text: images carry no loss, so remove trailing images first");
  }
  const total = chunks.reduce((n, c, i) => n + chunkLength(c, i), 0);
  if (total < 2) throw new DataValidationError(`need at least 2 tokens for an input/target split, got ${total}`);
  const inputChunks: ModelInputChunk[] = chunks.slice(0, -1);
  if (last.tokens.length > 1) inputChunks.push({ type: "encoded_text", tokens: last.tokens.slice(0, -1) });
  const all: number[] = [];
  chunks.forEach((c, i) => {
    if (c.type === "encoded_text") all.push(...c.tokens);
    else for (let k = 0; k < chunkLength(c, i); k++) all.push(0);
  });
  return { modelInput: { chunks: inputChunks }, targetTokens: all.slice(1) };
}

/**
 * A training datum from tokens and per-token weights: right-truncated to `maxLength` (text
 * partially, images whole), shifted for next-token prediction. `reduction: "mean"` rescales the
 * weights to sum to 1 per example (token-mean loss); "none" keeps them (token-sum loss).
 */
export function datumFromModelInputWeights(
  modelInput: ModelInput,
  weights: ArrayLike<number>,
  maxLength?: number | null,
  reduction: WeightReduction = "none",
): Datum {
  let chunks: ModelInputChunk[] = [...modelInput.chunks];
  const lengths = chunks.map((c, i) => chunkLength(c, i));
  const fullLength = lengths.reduce((a, b) => a + b, 0);
  if (weights.length !== fullLength) {
    throw new DataValidationError(`weights has ${weights.length} entries but the model input has ${fullLength} tokens; they must match`);
  }
  if (maxLength !== undefined && maxLength !== null) {
    let total = fullLength;
    while (total > maxLength && chunks.length > 0) {
      const last = chunks[chunks.length - 1]!;
      const len = chunkLength(last, chunks.length - 1);
      if (last.type === "encoded_text" && total - maxLength < len) {
        chunks[chunks.length - 1] = { type: "encoded_text", tokens: last.tokens.slice(0, len - (total - maxLength)) };
        total = maxLength;
      } else {
        chunks.pop();
        total -= len;
      }
    }
  }
  // Empty text chunks have no targets; a trailing one would stop the shift from dropping the last token.
  chunks = chunks.filter((c) => !(c.type === "encoded_text" && c.tokens.length === 0));
  while (chunks.length > 0 && chunks[chunks.length - 1]!.type !== "encoded_text") chunks.pop();
  const { modelInput: input, targetTokens } = createRightshiftedModelInputAndLeftshiftedTargets(chunks);
  const w = Float32Array.from(Array.prototype.slice.call(weights, 1, targetTokens.length + 1) as number[]);
  if (reduction === "mean") {
    let sum = 0;
    for (const x of w) sum += x;
    if (sum > 0) for (let i = 0; i < w.length; i++) w[i] = w[i]! / sum;
  } else if (reduction !== "none") {
    throw new DataValidationError(`unknown weight reduction ${JSON.stringify(reduction)}; expected "mean" or "none"`);
  }
  return {
    model_input: input,
    loss_fn_inputs: { weights: tensorDataFromFloat32(w), target_tokens: tensorDataFromInt64(targetTokens) },
  };
}

/** Renders a conversation and turns it into a datum (SFT default: all assistant messages, token-mean). */
export function conversationToDatum(
  messages: readonly Message[],
  renderer: Renderer,
  maxLength?: number | null,
  trainOnWhat: TrainOnWhat = "all_assistant_messages",
  reduction: WeightReduction = "mean",
): Datum {
  const { modelInput, weights } = renderer.buildSupervisedExample(messages, trainOnWhat);
  return datumFromModelInputWeights(modelInput, weights, maxLength, reduction);
}

/** Weighted mean negative log-likelihood over a batch: -Σ logprob·w / Σ w (NaN when Σ w = 0). */
export function computeMeanNll(logprobsList: readonly TensorData[], weightsList: readonly TensorData[]): number {
  if (logprobsList.length !== weightsList.length) {
    throw new DataValidationError(`computeMeanNll: ${logprobsList.length} logprob tensors but ${weightsList.length} weight tensors`);
  }
  let weighted = 0;
  let total = 0;
  logprobsList.forEach((lpTd, i) => {
    const lp = tensorDataToNumbers(lpTd);
    const w = tensorDataToNumbers(weightsList[i]!);
    if (lp.length !== w.length) {
      throw new DataValidationError(`computeMeanNll: datum ${i} has ${lp.length} logprobs but ${w.length} weights`);
    }
    for (let k = 0; k < lp.length; k++) {
      weighted += lp[k]! * w[k]!;
      total += w[k]!;
    }
  });
  return total === 0 ? Number.NaN : -weighted / total;
}

/** The datums of each mixture source (`sources` aligned with the batch): its indices, in order. */
export function indicesBySource(sources: readonly string[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  sources.forEach((s, i) => {
    const mine = out.get(s);
    if (mine === undefined) out.set(s, [i]);
    else mine.push(i);
  });
  return out;
}

/** computeMeanNll over the datums of each source. */
export function meanNllBySource(sources: readonly string[], logprobs: readonly TensorData[], weights: readonly TensorData[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const [source, mine] of indicesBySource(sources)) {
    out.set(
      source,
      computeMeanNll(
        mine.map((i) => logprobs[i]!),
        mine.map((i) => weights[i]!),
      ),
    );
  }
  return out;
}

/**
 * Bits per byte: total NLL (in bits) of the trained, non-special target tokens over the UTF-8
 * bytes they decode to. Weights are only a >0 mask, so token-mean normalized weights work too;
 * special tokens are left out of both sides since they carry no text bytes.
 */
export function computeBpb(
  logprobsList: readonly TensorData[],
  weightsList: readonly TensorData[],
  targetTokensList: readonly TensorData[],
  tokenizer: Tokenizer,
): number {
  let nats = 0;
  let bytes = 0;
  const encoder = new TextEncoder();
  const decodedBytes = (run: number[]): number => encoder.encode(tokenizer.decode(run)).length;
  logprobsList.forEach((lpTd, i) => {
    const lp = tensorDataToNumbers(lpTd);
    const w = tensorDataToNumbers(weightsList[i]!);
    const targets = tensorDataToNumbers(targetTokensList[i]!);
    let run: number[] = [];
    for (let k = 0; k < targets.length; k++) {
      const counted = w[k]! > 0 && !tokenizer.specialTokenIds.has(targets[k]!);
      if (counted) {
        nats -= lp[k]!;
        run.push(targets[k]!);
      } else if (run.length > 0) {
        bytes += decodedBytes(run);
        run = [];
      }
    }
    if (run.length > 0) bytes += decodedBytes(run);
  });
  return bytes === 0 ? Number.NaN : nats / (Math.LN2 * bytes);
}
