// Wire records ↔ engine inputs and outputs. Datums become compact typed arrays here, on the
// caller's thread, so the worker receives them by transfer; semantic checks (vocabulary range,
// required inputs per loss, lengths) happen in the model, which rejects before mutating anything.
import { InvalidArgumentError } from "../tinker/errors.ts";
import { modelInputToInts } from "../tinker/modelInput.ts";
import { tensorDataFromFloat32, tensorDataToInt32, tensorShape, toDense } from "../tinker/tensorData.ts";
import type { Datum, ForwardBackwardOutput, TensorData } from "../tinker/types.ts";
import type { SequenceInput } from "./model/model.ts";
import type { ForwardBackwardResultMessage } from "./worker/protocol.ts";

/** Loss inputs that hold token ids; everything else is float. */
const INTEGER_KEYS: ReadonlySet<string> = new Set(["target_tokens"]);
/** Loss inputs that may be [N, K]: several weighted targets per position (soft cross-entropy). */
const MATRIX_KEYS: ReadonlySet<string> = new Set(["target_tokens", "weights"]);

interface LossInputArray {
  values: Float32Array | Int32Array;
  /** Columns: 1 for shape [N], K for [N, K]. */
  width: number;
}

function tokenArray(tokens: number[], datumIndex: number): Int32Array {
  const out = new Int32Array(tokens.length);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (!Number.isInteger(t) || t < 0 || t > 0x7fffffff) {
      throw new InvalidArgumentError(`datum ${datumIndex}: model_input token ${i} is ${t}; expected a non-negative integer token id`);
    }
    out[i] = t;
  }
  return out;
}

function lossInput(td: TensorData, key: string, datumIndex: number): LossInputArray {
  const what = `datum ${datumIndex}: loss_fn_inputs.${key}`;
  if (td === null || typeof td !== "object" || !Array.isArray(td.data)) {
    throw new InvalidArgumentError(`${what} is not a TensorData ({data: number[], dtype, shape?})`);
  }
  const dense = toDense(td, what);
  const shape = tensorShape(dense);
  const matrix = shape.length === 2 && MATRIX_KEYS.has(key);
  if (shape.length !== 1 && !matrix) {
    const allowed = MATRIX_KEYS.has(key) ? "[N] or [N, K]" : "[N]";
    throw new InvalidArgumentError(`${what} has shape [${shape.join(", ")}]; the embedded engine takes ${key} of shape ${allowed}`);
  }
  const width = matrix ? shape[1]! : 1;
  if (INTEGER_KEYS.has(key)) {
    try {
      return { values: tensorDataToInt32(dense), width };
    } catch (err) {
      throw new InvalidArgumentError(`${what}: ${(err as Error).message}`);
    }
  }
  return { values: Float32Array.from(dense.data), width };
}

export function datumToSequenceInput(datum: Datum, index: number): SequenceInput {
  if (datum === null || typeof datum !== "object" || datum.model_input === undefined || !Array.isArray(datum.model_input.chunks)) {
    throw new InvalidArgumentError(`datum ${index}: expected {model_input: {chunks: [...]}, loss_fn_inputs: {...}}`);
  }
  let tokens: number[];
  try {
    tokens = modelInputToInts(datum.model_input);
  } catch (err) {
    throw new InvalidArgumentError(
      `datum ${index}: ${(err as Error).message} (the embedded engine runs text-only models: it has no vision tower, so train on images through a remote Tinker service)`,
    );
  }
  const lossInputs: Record<string, Float32Array | Int32Array> = {};
  const widths = new Map<string, number>();
  for (const [key, td] of Object.entries(datum.loss_fn_inputs ?? {})) {
    const input = lossInput(td, key, index);
    lossInputs[key] = input.values;
    widths.set(key, input.width);
  }
  const targetWidth = widths.get("target_tokens") ?? 1;
  const weightsWidth = widths.get("weights");
  if (weightsWidth !== undefined && weightsWidth !== targetWidth) {
    throw new InvalidArgumentError(
      `datum ${index}: loss_fn_inputs.weights has ${weightsWidth} column(s) but target_tokens has ${targetWidth}; they must have the same shape`,
    );
  }
  const input: SequenceInput = { inputTokens: tokenArray(tokens, index), lossInputs };
  if (targetWidth > 1) input.targetWidth = targetWidth;
  return input;
}

export function datumsToBatch(data: Datum[]): SequenceInput[] {
  if (!Array.isArray(data)) throw new InvalidArgumentError(`data must be an array of Datum, got ${typeof data}`);
  return data.map((d, i) => datumToSequenceInput(d, i));
}

export function toForwardBackwardOutput(r: ForwardBackwardResultMessage): ForwardBackwardOutput {
  return {
    loss_fn_output_type: "ArrayRecord",
    loss_fn_outputs: r.logprobs.map((lp, i) => {
      const width = r.logprobWidths?.[i] ?? 1;
      const shape = width > 1 ? [lp.length / width, width] : undefined;
      const out: Record<string, TensorData> = { logprobs: tensorDataFromFloat32(lp, shape) };
      const el = r.elementwiseLoss?.[i];
      if (el !== undefined) out.elementwise_loss = tensorDataFromFloat32(el);
      return out;
    }),
    metrics: r.metrics,
  };
}
