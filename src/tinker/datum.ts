// Datum construction and validation (docs/protocol.md#datum): position i of model_input predicts
// target_tokens[i], so every per-token tensor's first dimension must equal the input length.
import { InvalidArgumentError } from "./errors.ts";
import { modelInputLength } from "./modelInput.ts";
import { DEFAULT_DTYPE_BY_KEY, lossFnInputsFromArrays, tensorShape, toDense, type TensorLike } from "./tensorData.ts";
import type { Datum, ModelInput } from "./types.ts";

/** loss_fn_inputs keys whose first dimension is the token position. */
export const PER_TOKEN_KEYS: ReadonlySet<string> = new Set(Object.keys(DEFAULT_DTYPE_BY_KEY));

export function makeDatum(modelInput: ModelInput, lossFnInputs: Record<string, TensorLike>): Datum {
  const datum: Datum = { model_input: modelInput, loss_fn_inputs: lossFnInputsFromArrays(lossFnInputs) };
  validateDatum(datum);
  return datum;
}

/** Throws an InvalidArgumentError naming the datum, key and lengths when a tensor is misaligned. */
export function validateDatum(datum: Datum, index = 0): void {
  let n: number;
  try {
    n = modelInputLength(datum.model_input);
  } catch (err) {
    throw new InvalidArgumentError(`datum ${index}: ${(err as Error).message}`);
  }
  for (const [key, td] of Object.entries(datum.loss_fn_inputs)) {
    const what = `datum ${index}: loss_fn_inputs.${key}`;
    toDense(td, what);
    if (!PER_TOKEN_KEYS.has(key)) continue;
    const first = tensorShape(td)[0];
    if (first !== n) {
      throw new InvalidArgumentError(
        `${what} has length ${first} but model_input has ${n} tokens; per-token tensors must have length N = model_input length (targets are the sequence shifted left by one)`,
      );
    }
  }
}

export function validateData(data: Datum[]): void {
  data.forEach((d, i) => validateDatum(d, i));
}
