// Validates a forward/backward batch and packs it token-wise without padding (seqStarts layout of
// the kernels). Runs before anything mutates the model, so a bad request leaves it usable.
import { InvalidArgumentError } from "../../tinker/errors.ts";
import type { ModelConfig } from "./config.ts";
import type { ResolvedLoss } from "./losses.ts";

/** One datum, already converted from the wire. */
export interface SequenceInput {
  /** model_input tokens, length N. */
  inputTokens: Int32Array;
  /**
   * target_tokens (integers), weights, advantages, logprobs, ... each of length N; with
   * `targetWidth` K > 1, target_tokens and weights are [N, K] row-major (length N·K).
   */
  lossInputs: Record<string, Float32Array | Int32Array>;
  /**
   * Targets per position (default 1). cross_entropy with K > 1 is a soft-target loss:
   * Σ_k −weights[i, k]·logprob(target_tokens[i, k]) — how off-policy distillation trains on a
   * teacher's top-K tokens.
   */
  targetWidth?: number;
}

export interface PackedBatch {
  readonly T: number;
  readonly tokens: Int32Array;
  readonly positions: Int32Array;
  readonly seqStarts: Int32Array;
  readonly targets: Int32Array;
  /** Per-token loss inputs; weights default to 1, the others to 0 when the loss does not read them. */
  readonly weights: Float64Array;
  readonly advantages: Float64Array;
  readonly samplerLogprobs: Float64Array;
  /** Widest datum's targets per position; 1 when every datum has one target per position. */
  readonly width: number;
  /**
   * Columns 1..width−1 of the targets ([T, width−1], −1 where a datum has fewer columns) and
   * their weights; null when width is 1. Column 0 lives in `targets` / `weights`.
   */
  readonly extraTargets: Int32Array | null;
  readonly extraWeights: Float64Array | null;
}

function checkIds(ids: ArrayLike<number>, what: string, datum: number, vocab: number): void {
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (!Number.isInteger(id) || id < 0 || id >= vocab) {
      throw new InvalidArgumentError(`datum ${datum}: ${what}[${i}] = ${id} is outside the vocabulary (ids 0..${vocab - 1}, vocab_size ${vocab})`);
    }
  }
}

function checkFinite(values: ArrayLike<number>, key: string, datum: number): void {
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i])) throw new InvalidArgumentError(`datum ${datum}: loss input "${key}"[${i}] is ${values[i]}, expected a finite number`);
  }
}

export function packBatch(batch: readonly SequenceInput[], loss: ResolvedLoss, config: ModelConfig): PackedBatch {
  const accepted = new Set(["target_tokens", ...loss.required, ...loss.optional]);
  const seqStarts = new Int32Array(batch.length + 1);
  let width = 1;
  for (let s = 0; s < batch.length; s++) {
    const datum = batch[s];
    const N = datum.inputTokens.length;
    const K = datum.targetWidth ?? 1;
    if (!Number.isInteger(K) || K < 1) throw new InvalidArgumentError(`datum ${s}: target_tokens has ${K} columns; expected a positive integer`);
    if (K > 1 && loss.name !== "cross_entropy") {
      throw new InvalidArgumentError(
        `datum ${s}: target_tokens has shape [${N}, ${K}]; only cross_entropy takes several targets per position (${loss.name} takes shape [N])`,
      );
    }
    width = Math.max(width, K);
    if (N === 0) throw new InvalidArgumentError(`datum ${s}: model_input is empty (a datum needs at least one token)`);
    if (N > config.maxPositionEmbeddings) {
      throw new InvalidArgumentError(`datum ${s}: ${N} tokens exceed the model's max_position_embeddings (${config.maxPositionEmbeddings})`);
    }
    checkIds(datum.inputTokens, "model_input token", s, config.vocabSize);
    const given = Object.keys(datum.lossInputs);
    for (const key of given) {
      if (!accepted.has(key)) {
        throw new InvalidArgumentError(`datum ${s}: loss input "${key}" is not used by ${loss.name}; it accepts ${[...accepted].join(", ")}`);
      }
    }
    for (const key of ["target_tokens", ...loss.required]) {
      if (datum.lossInputs[key] === undefined) {
        throw new InvalidArgumentError(`datum ${s}: loss ${loss.name} needs loss input "${key}" (given: ${given.length > 0 ? given.join(", ") : "none"})`);
      }
    }
    for (const key of given) {
      const values = datum.lossInputs[key];
      const columns = key === "target_tokens" || key === "weights" ? K : 1;
      if (values.length !== N * columns) {
        if (columns === 1) throw new InvalidArgumentError(`datum ${s}: loss input "${key}" has length ${values.length} but model_input has ${N} tokens`);
        throw new InvalidArgumentError(
          `datum ${s}: loss input "${key}" has length ${values.length}; expected [${N}, ${K}] (${N * K} values, like target_tokens)`,
        );
      }
      if (key === "target_tokens") checkIds(values, "target_tokens", s, config.vocabSize);
      else checkFinite(values, key, s);
    }
    seqStarts[s + 1] = seqStarts[s] + N;
  }
  const T = seqStarts[batch.length];
  const tokens = new Int32Array(T);
  const positions = new Int32Array(T);
  const targets = new Int32Array(T);
  const weights = new Float64Array(T).fill(1);
  const advantages = new Float64Array(T);
  const samplerLogprobs = new Float64Array(T);
  const extra = width - 1;
  const extraTargets = extra > 0 ? new Int32Array(T * extra).fill(-1) : null;
  const extraWeights = extra > 0 ? new Float64Array(T * extra) : null;
  for (let s = 0; s < batch.length; s++) {
    const start = seqStarts[s];
    const { inputTokens, lossInputs } = batch[s];
    const K = batch[s].targetWidth ?? 1;
    tokens.set(inputTokens, start);
    for (let i = 0; i < inputTokens.length; i++) positions[start + i] = i;
    if (K === 1 || extraTargets === null || extraWeights === null) {
      targets.set(lossInputs.target_tokens, start);
      if (lossInputs.weights) weights.set(lossInputs.weights, start);
    } else {
      const tt = lossInputs.target_tokens;
      const ww = lossInputs.weights;
      for (let i = 0; i < inputTokens.length; i++) {
        targets[start + i] = tt[i * K];
        weights[start + i] = ww[i * K];
        for (let k = 1; k < K; k++) {
          extraTargets[(start + i) * extra + k - 1] = tt[i * K + k];
          extraWeights[(start + i) * extra + k - 1] = ww[i * K + k];
        }
      }
    }
    if (lossInputs.advantages) advantages.set(lossInputs.advantages, start);
    if (lossInputs.logprobs) samplerLogprobs.set(lossInputs.logprobs, start);
  }
  return { T, tokens, positions, seqStarts, targets, weights, advantages, samplerLogprobs, width, extraTargets, extraWeights };
}
