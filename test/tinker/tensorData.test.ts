import { test } from "node:test";
import assert from "node:assert/strict";
import {
  lossFnInputsFromArrays,
  tensorDataFromFloat32,
  tensorDataFromInt64,
  tensorDataToFloat32,
  tensorDataToInt32,
  tensorDataToNumbers,
  toDense,
} from "../../src/tinker/tensorData.ts";

test("float32 and int64 constructors", () => {
  const f = tensorDataFromFloat32(new Float32Array([0.5, 1.5, 2, 3]), [2, 2]);
  assert.deepEqual(f, { data: [0.5, 1.5, 2, 3], dtype: "float32", shape: [2, 2] });
  assert.deepEqual(Array.from(tensorDataToFloat32(f)), [0.5, 1.5, 2, 3]);
  const i = tensorDataFromInt64(new BigInt64Array([1n, 2n, 3n]));
  assert.deepEqual(i, { data: [1, 2, 3], dtype: "int64", shape: [3] });
  assert.deepEqual(Array.from(tensorDataToInt32(i)), [1, 2, 3]);
  assert.throws(() => tensorDataFromInt64([1.5]), /element 0 is 1.5/);
  assert.throws(() => tensorDataFromFloat32([1, 2, 3], [2, 2]), /holds 4 elements but data has 3/);
});

test("float32 rounding happens on construction", () => {
  const f = tensorDataFromFloat32([0.1]);
  assert.notEqual(f.data[0], 0.1);
  assert.equal(f.data[0], Math.fround(0.1));
});

test("CSR converts to dense", () => {
  // [[0, 7, 0], [0, 0, 0], [8, 0, 9]]
  const csr = { data: [7, 8, 9], dtype: "int64" as const, shape: [3, 3], sparse_crow_indices: [0, 1, 1, 3], sparse_col_indices: [1, 0, 2] };
  assert.deepEqual(tensorDataToNumbers(csr), [0, 7, 0, 0, 0, 0, 8, 0, 9]);
  assert.deepEqual(toDense(csr).shape, [3, 3]);
});

test("CSR validation errors say what was expected", () => {
  const base = { data: [7], dtype: "float32" as const, shape: [2, 2], sparse_crow_indices: [0, 1, 1], sparse_col_indices: [1] };
  assert.doesNotThrow(() => toDense(base));
  assert.throws(() => toDense({ ...base, shape: undefined }), /needs a 2-D shape/);
  assert.throws(() => toDense({ ...base, sparse_crow_indices: [0, 1] }), /length 2; expected rows \+ 1 = 3/);
  assert.throws(() => toDense({ ...base, sparse_col_indices: [2] }), /sparse_col_indices\[0\] = 2 is out of range \[0, 2\)/);
  assert.throws(() => toDense({ ...base, sparse_col_indices: undefined }), /needs both/);
});

test("lossFnInputsFromArrays uses per-key default dtypes", () => {
  const li = lossFnInputsFromArrays({ target_tokens: [1, 2], weights: [1, 0], advantages: [1, 1], extra: [0.5], ids: [3] });
  assert.equal(li["target_tokens"]!.dtype, "int64");
  assert.equal(li["weights"]!.dtype, "float32");
  assert.equal(li["advantages"]!.dtype, "float32");
  assert.equal(li["extra"]!.dtype, "float32");
  assert.equal(li["ids"]!.dtype, "int64");
  assert.throws(() => lossFnInputsFromArrays({ target_tokens: [1.5] }), /expected an integer/);
});
