// TensorData (docs/protocol.md#tensordata): flattened row-major numbers with a dtype and an optional shape, plus the
// CSR form newer SDKs may send. Everything that computes with a tensor goes through toDense first.
import { InvalidArgumentError } from "./errors.ts";
import type { TensorData, TensorDType } from "./types.ts";

/** What a caller may hand in for a tensor: a finished TensorData or a plain/typed array. */
export type TensorLike = TensorData | number[] | Float32Array | Float64Array | Int32Array | BigInt64Array;

/** dtype of the well-known loss_fn_inputs keys when they are given as plain arrays. */
export const DEFAULT_DTYPE_BY_KEY: Readonly<Record<string, TensorDType>> = {
  target_tokens: "int64",
  weights: "float32",
  advantages: "float32",
  logprobs: "float32",
  clip_low_threshold: "float32",
  clip_high_threshold: "float32",
};

export function tensorDataFromFloat32(arr: ArrayLike<number>, shape?: number[]): TensorData {
  const data = Array.from(Float32Array.from(arr));
  return { data, dtype: "float32", shape: checkShape(shape ?? [data.length], data.length, "tensorDataFromFloat32") };
}

export function tensorDataFromInt64(arr: ArrayLike<number> | BigInt64Array, shape?: number[]): TensorData {
  const data: number[] = [];
  const n = arr.length;
  for (let i = 0; i < n; i++) {
    const raw = arr[i];
    const v = typeof raw === "bigint" ? Number(raw) : raw;
    if (!Number.isSafeInteger(v)) {
      throw new InvalidArgumentError(`tensorDataFromInt64: element ${i} is ${String(raw)}; expected an integer`);
    }
    data.push(v);
  }
  return { data, dtype: "int64", shape: checkShape(shape ?? [data.length], data.length, "tensorDataFromInt64") };
}

/** The tensor's shape; a missing shape means 1-D. */
export function tensorShape(td: TensorData): number[] {
  return td.shape ?? [isSparse(td) ? Number.NaN : td.data.length];
}

export function isSparse(td: TensorData): boolean {
  return td.sparse_crow_indices !== undefined || td.sparse_col_indices !== undefined;
}

/** Converts a CSR tensor to the dense form (dense tensors are checked and returned as they are). */
export function toDense(td: TensorData, what = "tensor"): TensorData {
  if (!isSparse(td)) {
    if (td.shape !== undefined) checkShape(td.shape, td.data.length, what);
    return td;
  }
  const crow = td.sparse_crow_indices;
  const col = td.sparse_col_indices;
  if (crow === undefined || col === undefined) {
    throw new InvalidArgumentError(`${what}: a CSR tensor needs both sparse_crow_indices and sparse_col_indices`);
  }
  const shape = td.shape;
  if (shape === undefined || shape.length !== 2) {
    throw new InvalidArgumentError(`${what}: a CSR tensor needs a 2-D shape [rows, cols]; got ${shape === undefined ? "no shape" : JSON.stringify(shape)}`);
  }
  const [rows, cols] = shape as [number, number];
  if (crow.length !== rows + 1) {
    throw new InvalidArgumentError(`${what}: sparse_crow_indices has length ${crow.length}; expected rows + 1 = ${rows + 1} for shape [${rows}, ${cols}]`);
  }
  if (col.length !== td.data.length) {
    throw new InvalidArgumentError(
      `${what}: sparse_col_indices has ${col.length} entries but data has ${td.data.length}; they must match (one column per non-zero)`,
    );
  }
  if (crow[0] !== 0 || crow[rows] !== col.length) {
    throw new InvalidArgumentError(
      `${what}: sparse_crow_indices must start at 0 and end at the number of non-zeros (${col.length}); got ${crow[0]}…${crow[rows]}`,
    );
  }
  const dense = new Array<number>(rows * cols).fill(0);
  for (let r = 0; r < rows; r++) {
    const start = crow[r]!;
    const end = crow[r + 1]!;
    if (end < start) {
      throw new InvalidArgumentError(`${what}: sparse_crow_indices decreases at row ${r} (${start} → ${end})`);
    }
    for (let k = start; k < end; k++) {
      const c = col[k]!;
      if (!Number.isInteger(c) || c < 0 || c >= cols) {
        throw new InvalidArgumentError(`${what}: sparse_col_indices[${k}] = ${c} is out of range [0, ${cols}) (row ${r})`);
      }
      dense[r * cols + c] = td.data[k]!;
    }
  }
  return { data: dense, dtype: td.dtype, shape: [rows, cols] };
}

export function tensorDataToNumbers(td: TensorData): number[] {
  return toDense(td).data;
}

export function tensorDataToFloat32(td: TensorData): Float32Array {
  return Float32Array.from(toDense(td).data);
}

export function tensorDataToInt32(td: TensorData): Int32Array {
  const data = toDense(td).data;
  const out = new Int32Array(data.length);
  data.forEach((v, i) => {
    if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) {
      throw new InvalidArgumentError(`tensorDataToInt32: element ${i} is ${v}; expected an integer in int32 range`);
    }
    out[i] = v;
  });
  return out;
}

/** Builds a TensorData from anything TensorLike, using `dtype` for plain number arrays. */
export function toTensorData(value: TensorLike, dtype: TensorDType, shape?: number[]): TensorData {
  if (Array.isArray(value) || ArrayBuffer.isView(value)) {
    if (value instanceof BigInt64Array || value instanceof Int32Array) return tensorDataFromInt64(value, shape);
    if (value instanceof Float32Array || value instanceof Float64Array) return tensorDataFromFloat32(value, shape);
    return dtype === "int64" ? tensorDataFromInt64(value, shape) : tensorDataFromFloat32(value, shape);
  }
  return value;
}

/**
 * Builds `loss_fn_inputs` from plain arrays: well-known keys get their default dtype, typed arrays
 * keep theirs, and other plain arrays are int64 when every element is an integer, else float32.
 */
export function lossFnInputsFromArrays(inputs: Record<string, TensorLike>): Record<string, TensorData> {
  const out: Record<string, TensorData> = {};
  for (const [key, value] of Object.entries(inputs)) {
    const dtype = DEFAULT_DTYPE_BY_KEY[key] ?? (Array.isArray(value) && value.every(Number.isInteger) ? "int64" : "float32");
    out[key] = toTensorData(value, dtype);
  }
  return out;
}

function checkShape(shape: number[], size: number, what: string): number[] {
  let prod = 1;
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0) {
      throw new InvalidArgumentError(`${what}: shape ${JSON.stringify(shape)} has a bad dimension ${d}; expected non-negative integers`);
    }
    prod *= d;
  }
  if (prod !== size) {
    throw new InvalidArgumentError(`${what}: shape ${JSON.stringify(shape)} holds ${prod} elements but data has ${size}`);
  }
  return shape;
}
