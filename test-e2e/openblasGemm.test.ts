// CI installs libopenblas-dev before `npm install`, so the native build must have linked OpenBLAS,
// and its GEMM path must compute correctly (it is the default only for builds without AVX-512; see
// gemm.cc). Fails loudly when OpenBLAS or the addon is missing.

import { test } from "node:test";
import assert from "node:assert/strict";
import { loadNativeKernels } from "../src/engine/kernels/native.ts";
import { getKernels } from "../src/engine/kernels/index.ts";

test("the native addon uses OpenBLAS for GEMM", () => {
  let native;
  try {
    native = loadNativeKernels();
  } catch (err) {
    assert.fail(`native kernel addon did not build or load: ${err instanceof Error ? err.message : String(err)}`);
  }
  assert.ok(
    native.gemmBackends.includes("openblas"),
    `the addon was built without OpenBLAS (backends: ${native.gemmBackends.join(", ")}); install libopenblas-dev (pkg-config openblas must work) and run npm rebuild`,
  );
  // The default is OpenBLAS only for builds without AVX-512 (gemm.cc: there our own kernel is faster).
  if (process.env.COOKBOOK_KERNELS === undefined) assert.equal(getKernels().gemmBackend, native.gemmBackend);
  const initial = native.gemmBackend;
  native.setGemmBackend("openblas");
  assert.equal(native.gemmBackend, "openblas");

  // A product big enough for OpenBLAS to use its threads, checked on sampled entries in float64.
  const [M, N, K] = [300, 400, 500];
  const A = Float32Array.from({ length: M * K }, (_, i) => Math.sin(i));
  const B = Float32Array.from({ length: N * K }, (_, i) => Math.cos(i * 0.7));
  const C = new Float32Array(M * N).fill(NaN);
  native.gemm(false, true, M, N, K, 1, A, B, 0, C);
  for (const [i, j] of [
    [0, 0],
    [M - 1, N - 1],
    [17, 333],
    [250, 5],
  ]) {
    let s = 0;
    for (let k = 0; k < K; k++) s += A[i * K + k] * B[j * K + k];
    assert.ok(Math.abs(C[i * N + j] - s) < 1e-3, `C[${i},${j}] = ${C[i * N + j]}, expected ${s}`);
  }
  native.setGemmBackend(initial);
});
