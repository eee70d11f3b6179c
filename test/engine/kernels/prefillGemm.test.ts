// gemmPrefillNT, the sampler's prompt-sized x·Wᵀ (native/gemm.cc), against the reference gemm (its
// TypeScript definition): row counts around the 12-row tile, K across several 256-deep slices,
// N around the 32-wide panels and stripes, alpha and beta; bits independent of the other rows and
// of 16-bit storage (a bf16/f16 W gives the bits of its widened float32 copy).
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadNativeKernels, type NativeKernels } from "../../../src/engine/kernels/native.ts";
import { HalfArray } from "../../../src/engine/kernels/halfArray.ts";
import { referenceKernels as R } from "../../../src/engine/kernels/reference.ts";
import { checkGemmNT, makeRng, randF32 } from "./helpers.ts";

function native(): NativeKernels {
  try {
    return loadNativeKernels();
  } catch (err) {
    assert.fail(`native kernel addon did not build or load: ${err instanceof Error ? err.message : String(err)}`);
  }
}

test("gemmPrefillNT matches the reference gemm: rows around the 12-row tile, K over several slices, N over panels and stripes, alpha and beta", () => {
  const N = native();
  checkGemmNT(
    { native: N.gemmPrefillNT.bind(N), reference: R.gemmPrefillNT.bind(R) },
    [1, 11, 12, 13, 65, 128, 131],
    [
      [1, 1],
      [31, 19],
      [32, 256],
      [33, 257],
      [200, 600],
      [1100, 40],
      [64, 1030],
    ],
    11,
  );
});

test("gemmPrefillNT: beta 0 ignores NaN in C; a row's bits do not depend on the rows beside it; bf16 and f16 W give their widened copy's bits", () => {
  const N = native();
  const rng = makeRng(12);
  const [n, k] = [300, 700];
  const W = randF32(n * k, rng);
  const A = randF32(150 * k, rng);
  const all = new Float32Array(150 * n).fill(Number.NaN);
  N.gemmPrefillNT(150, n, k, 1, A, W, 0, all);
  assert.ok(all.every(Number.isFinite));
  // Row 140 in a 150-row product, as row 0 and row 3 of 10-row ones, as row 12 of a 13-row one, and alone.
  const rows = (first: number, count: number): Float32Array => {
    const out = new Float32Array(count * n);
    N.gemmPrefillNT(count, n, k, 1, A.subarray(first * k, (first + count) * k), W, 0, out);
    return out;
  };
  const row140 = all.subarray(140 * n, 141 * n);
  assert.deepEqual(rows(140, 10).subarray(0, n), row140);
  assert.deepEqual(rows(137, 10).subarray(3 * n, 4 * n), row140);
  assert.deepEqual(rows(140, 1), row140);
  assert.deepEqual(rows(128, 13).subarray(12 * n, 13 * n), row140);

  for (const dtype of ["bf16", "f16"] as const) {
    const bits = new Uint16Array(n * k);
    for (let i = 0; i < bits.length; i++) bits[i] = dtype === "bf16" ? 0x3c00 + (i % 0x300) : 0x3000 + (i % 0x1000);
    const half = new HalfArray(dtype, bits);
    const fromHalf = new Float32Array(150 * n);
    const fromWide = new Float32Array(150 * n);
    N.gemmPrefillNT(150, n, k, 1, A, half, 0, fromHalf);
    N.gemmPrefillNT(150, n, k, 1, A, half.widen(), 0, fromWide);
    assert.deepEqual(fromHalf, fromWide, `${dtype} W against its float32 copy`);
    assert.ok(fromHalf.some((x) => x !== 0));
  }
});

test("gemmPrefillNT: wrong sizes are refused with the argument named", () => {
  const N = native();
  assert.throws(
    () => N.gemmPrefillNT(2, 3, 4, 1, new Float32Array(8), new Float32Array(11), 0, new Float32Array(6)),
    /gemmPrefillNT: argument W has 11 elements but needs at least 12/,
  );
  assert.throws(
    () => N.gemmPrefillNT(2, 3, 4, 1, new Float32Array(8), new HalfArray("bf16", new Uint16Array(12)), 0, new Float32Array(5)),
    /gemmPrefillNTHalf: argument C has 5 elements but needs at least 6/,
  );
});
