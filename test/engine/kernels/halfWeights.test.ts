// Kernels reading frozen weights kept in 16 bits (HalfArray, bf16 and f16): gemm's B operand (both
// layouts, every product path), gemmRowsNT's W and the embedding table. Widening is exact, so the
// native kernels must give the bits they give on a widened float32 copy, and agree with the
// TypeScript reference, which widens and calls its float kernels.
import { test } from "node:test";
import assert from "node:assert/strict";
import { HalfArray, type HalfDtype } from "../../../src/engine/kernels/halfArray.ts";
import { loadNativeKernels, type NativeKernels } from "../../../src/engine/kernels/native.ts";
import { referenceKernels as R } from "../../../src/engine/kernels/reference.ts";
import { float32ToBf16, float32ToF16 } from "../../../src/engine/safetensors/dtypes.ts";
import { assertClose, makeRng, randF32 } from "./helpers.ts";

function native(): NativeKernels {
  try {
    return loadNativeKernels();
  } catch (err) {
    assert.fail(`native kernel addon did not build or load: ${err instanceof Error ? err.message : String(err)}`);
  }
}

const DTYPES: HalfDtype[] = ["bf16", "f16"];

/** Random 16-bit weights (f16 includes subnormals: values down to ~1e-7) and their widened values. */
function randHalf(dtype: HalfDtype, n: number, rng: () => number): { half: HalfArray; wide: Float32Array } {
  const x = randF32(n, rng);
  for (let i = 0; i < n; i += 7) x[i] *= 1e-6;
  const half = new HalfArray(dtype, dtype === "bf16" ? float32ToBf16(x) : float32ToF16(x));
  return { half, wide: half.widen() };
}

function assertSameBits(actual: Float32Array, expected: Float32Array, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  const a = new Uint32Array(actual.buffer, actual.byteOffset, actual.length);
  const e = new Uint32Array(expected.buffer, expected.byteOffset, expected.length);
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== e[i]) assert.fail(`${what}: index ${i}: ${actual[i]} (0x${a[i]!.toString(16)}) vs ${expected[i]} (0x${e[i]!.toString(16)})`);
  }
}

// Decode-sized (M <= 4: the direct kernel), odd edges of the 6 x 32 tiles and 192-deep K slices,
// whole 16 x 16 blocks of the transposing B pack, several column stripes, A transposed (packed).
const SHAPES: [number, number, number][] = [
  [1, 1, 1],
  [3, 37, 19],
  [4, 600, 70],
  [7, 13, 5],
  [6, 32, 192],
  [37, 53, 300],
  [130, 67, 257],
  [64, 520, 200],
  [200, 96, 400],
];

test("gemm with 16-bit B: packed kernel gives the bits of its float32 B, and matches the reference", () => {
  const N = native();
  const rng = makeRng(40);
  const initial = N.gemmBackend;
  try {
    N.setGemmBackend("packed");
    for (const dtype of DTYPES) {
      for (const [M, Nn, K] of SHAPES) {
        for (const transA of [false, true]) {
          for (const transB of [false, true]) {
            const A = randF32(M * K, rng);
            const { half, wide } = randHalf(dtype, K * Nn, rng);
            for (const [alpha, beta] of [
              [1, 0],
              [-0.75, 1],
              [0.5, -2],
            ] as const) {
              const C0 = randF32(M * Nn, rng);
              const what = `${dtype} ${M}x${Nn}x${K} tA=${transA} tB=${transB} alpha=${alpha} beta=${beta}`;
              const got = C0.slice();
              N.gemm(transA, transB, M, Nn, K, alpha, A, half, beta, got);
              const want = C0.slice();
              N.gemm(transA, transB, M, Nn, K, alpha, A, wide, beta, want);
              assertSameBits(got, want, `native ${what}`);
              const ref = C0.slice();
              R.gemm(transA, transB, M, Nn, K, alpha, A, half, beta, ref);
              const refWide = C0.slice();
              R.gemm(transA, transB, M, Nn, K, alpha, A, wide, beta, refWide);
              assertSameBits(ref, refWide, `reference ${what}`);
              assertClose(got, ref, 1e-4, 1e-4 * Math.sqrt(K), `native vs reference ${what}`);
            }
          }
        }
      }
    }
  } finally {
    N.setGemmBackend(initial);
  }
});

test("gemm with 16-bit B on the OpenBLAS path (blocks widened per thread) matches the float32 product", () => {
  const N = native();
  if (!N.gemmBackends.includes("openblas")) {
    // test-e2e/openblasGemm.test.ts asserts that the CI build links OpenBLAS.
    assert.deepEqual([...N.gemmBackends], ["packed"]);
    return;
  }
  const rng = makeRng(41);
  const initial = N.gemmBackend;
  try {
    N.setGemmBackend("openblas");
    for (const dtype of DTYPES) {
      for (const [M, Nn, K] of [
        [37, 53, 300],
        [256, 2100, 96],
        [64, 520, 2000],
      ] as [number, number, number][]) {
        for (const transB of [false, true]) {
          const A = randF32(M * K, rng);
          const { half, wide } = randHalf(dtype, K * Nn, rng);
          const C0 = randF32(M * Nn, rng);
          const got = C0.slice();
          N.gemm(false, transB, M, Nn, K, 0.5, A, half, 1, got);
          const ref = C0.slice();
          R.gemm(false, transB, M, Nn, K, 0.5, A, wide, 1, ref);
          assertClose(got, ref, 1e-4, 1e-4 * Math.sqrt(K), `openblas ${dtype} ${M}x${Nn}x${K} tB=${transB}`);
        }
      }
    }
  } finally {
    N.setGemmBackend(initial);
  }
});

test("gemmRowsNT with 16-bit W gives the bits of its float32 W for 1..64 rows (every group and block width), odd N and K", () => {
  const N = native();
  const rng = makeRng(42);
  for (const dtype of DTYPES) {
    for (const M of [1, 2, 4, 5, 8, 16, 17, 33, 64]) {
      for (const [n, k] of [
        [1, 1],
        [37, 19],
        [13, 4100],
        [64, 576],
        [50, 2049],
        [3, 769],
      ]) {
        const A = randF32(M * k, rng);
        const { half, wide } = randHalf(dtype, n * k, rng);
        for (const [alpha, beta] of [
          [1, 0],
          [0.7, 0.5],
        ] as const) {
          const C0 = randF32(M * n, rng);
          const got = C0.slice();
          N.gemmRowsNT(M, n, k, alpha, A, half, beta, got);
          const want = C0.slice();
          N.gemmRowsNT(M, n, k, alpha, A, wide, beta, want);
          assertSameBits(got, want, `${dtype} M=${M} N=${n} K=${k} alpha=${alpha}`);
          const ref = C0.slice();
          R.gemmRowsNT(M, n, k, alpha, A, half, beta, ref);
          assertClose(got, ref, 1e-4, 1e-5 * Math.sqrt(k), `native vs reference ${dtype} M=${M} N=${n} K=${k}`);
        }
      }
    }
  }
});

test("embeddingForward from a 16-bit table equals the widened rows, native and reference; bad ids are refused", () => {
  const N = native();
  const rng = makeRng(43);
  for (const dtype of DTYPES) {
    const [rows, dim] = [50, 37];
    const { half, wide } = randHalf(dtype, rows * dim, rng);
    const ids = Int32Array.from([0, 49, 7, 7, 23]);
    const want = new Float32Array(ids.length * dim);
    N.embeddingForward(wide, ids, want, ids.length, dim);
    const got = new Float32Array(ids.length * dim);
    N.embeddingForward(half, ids, got, ids.length, dim);
    assertSameBits(got, want, `native ${dtype}`);
    const ref = new Float32Array(ids.length * dim);
    R.embeddingForward(half, ids, ref, ids.length, dim);
    assertSameBits(ref, want, `reference ${dtype}`);
    assert.throws(
      () => N.embeddingForward(half, Int32Array.from([50]), new Float32Array(dim), 1, dim),
      /embeddingForwardHalf: ids\[0\] = 50 is outside the table \(50 rows\)/,
    );
  }
});

test("the 16-bit kernels refuse short weight arrays with a clear error", () => {
  const N = native();
  const half = new HalfArray("bf16", new Uint16Array(11));
  assert.throws(
    () => N.gemm(false, false, 2, 4, 3, 1, new Float32Array(6), half, 0, new Float32Array(8)),
    /gemmHalf: argument B has 11 elements but needs at least 12 \(K\*N\)/,
  );
  assert.throws(
    () => N.gemmRowsNT(1, 4, 3, 1, new Float32Array(3), half, 0, new Float32Array(4)),
    /gemmRowsNTHalf: argument W has 11 elements but needs at least 12 \(N\*K\)/,
  );
});
