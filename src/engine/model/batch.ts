// Validates a forward/backward batch and packs it token-wise without padding (seqStarts layout of
// the kernels). Runs before anything mutates the model, so a bad request leaves it usable.
import { InvalidArgumentError } from "../../tinker/errors.ts";
import type { ModelConfig } from "./config.ts";
import type { ResolvedLoss } from "./losses.ts";

/** One datum, already converted from the wire. */
export interface SequenceInput {
  /** model_input tokens, length N. */
  inputTokens: Int32Array;
  /** target_tokens (integers), weights, advantages, logprobs, ... each of length N. */
  lossInputs: Record<string, Float32Array | Int32Array>;
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
  for (let s = 0; s < batch.length; s++) {
    const datum = batch[s];
    const N = datum.inputTokens.length;
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
      if (values.length !== N) {
        throw new InvalidArgumentError(`datum ${s}: loss input "${key}" has length ${values.length} but model_input has ${N} tokens`);
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
  for (let s = 0; s < batch.length; s++) {
    const start = seqStarts[s];
    const { inputTokens, lossInputs } = batch[s];
    tokens.set(inputTokens, start);
    for (let i = 0; i < inputTokens.length; i++) positions[start + i] = i;
    targets.set(lossInputs.target_tokens, start);
    if (lossInputs.weights) weights.set(lossInputs.weights, start);
    if (lossInputs.advantages) advantages.set(lossInputs.advantages, start);
    if (lossInputs.logprobs) samplerLogprobs.set(lossInputs.logprobs, start);
  }
  return { T, tokens, positions, seqStarts, targets, weights, advantages, samplerLogprobs };
}
