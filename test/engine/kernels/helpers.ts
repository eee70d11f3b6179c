// Shared test utilities for the kernel tests: a seeded RNG, random arrays, comparisons, and a
// central finite-difference gradient.

import assert from "node:assert/strict";
import { mulberry32 } from "../../../src/random/seeds.ts";
import { loadNativeKernels, type NativeKernels } from "../../../src/engine/kernels/native.ts";
import { referenceKernels } from "../../../src/engine/kernels/reference.ts";
import type { FloatArray } from "../../../src/engine/kernels/types.ts";

/** Seeded uniform numbers in [0, 1) for test data. */
export const makeRng = mulberry32;

export function randF64(n: number, rng: () => number, scale = 1): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = (rng() * 2 - 1) * scale;
  return out;
}

export function randF32(n: number, rng: () => number, scale = 1): Float32Array {
  return Float32Array.from(randF64(n, rng, scale));
}

/** Max over i of |a-b| / (atol + rtol*|b|) must be ≤ 1; the message names the worst index. */
export function assertClose(actual: ArrayLike<number>, expected: ArrayLike<number>, rtol: number, atol: number, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length ${actual.length} != ${expected.length}`);
  let worst = 0;
  let worstI = -1;
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i];
    const b = expected[i];
    if (Number.isNaN(a) || Number.isNaN(b)) {
      assert.ok(Number.isNaN(a) && Number.isNaN(b), `${what}: NaN mismatch at ${i}: got ${a}, expected ${b}`);
      continue;
    }
    const r = Math.abs(a - b) / (atol + rtol * Math.abs(b));
    if (r > worst) {
      worst = r;
      worstI = i;
    }
  }
  assert.ok(worst <= 1, `${what}: at index ${worstI} got ${actual[worstI]}, expected ${expected[worstI]} (rtol ${rtol}, atol ${atol})`);
}

/**
 * Central finite-difference gradient of f wrt every entry of x (float64). f must read x afresh on
 * every call; x is restored afterwards.
 */
export function numericGrad(x: Float64Array, f: () => number, h = 1e-6): Float64Array {
  const g = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const old = x[i];
    x[i] = old + h;
    const fp = f();
    x[i] = old - h;
    const fm = f();
    x[i] = old;
    g[i] = (fp - fm) / (2 * h);
  }
  return g;
}

export function dot(a: FloatArray, b: FloatArray): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** seqStarts for the given lengths. */
export function seqStartsOf(lengths: readonly number[]): Int32Array {
  const s = new Int32Array(lengths.length + 1);
  for (let i = 0; i < lengths.length; i++) s[i + 1] = s[i] + lengths[i];
  return s;
}

/** Size of the probs buffer attentionForward needs. */
export function probsSize(lengths: readonly number[], nHeads: number): number {
  return lengths.reduce((acc, l) => acc + nHeads * l * l, 0);
}

/**
 * The native kernels, failing (not skipping) when the addon is missing: every machine that runs
 * the suite has a compiler, so a missing addon means the install-time build broke.
 */
export function nativeOrFail(): NativeKernels {
  try {
    return loadNativeKernels();
  } catch (err) {
    assert.fail(`native kernel addon did not build or load: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** |actual - expected| <= rel * scale + abs, elementwise, where scale bounds the rounding error. */
export function assertWithin(actual: ArrayLike<number>, expected: ArrayLike<number>, scale: ArrayLike<number>, rel: number, abs: number, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    const err = Math.abs(actual[i] - expected[i]);
    if (!(err <= rel * scale[i] + abs)) {
      assert.fail(`${what}: index ${i}: got ${actual[i]}, expected ${expected[i]} (error ${err}, allowed ${rel * scale[i] + abs})`);
    }
  }
}

/** A y = alpha·A·Wᵀ + beta·C kernel on float32 arrays (gemmRowsNT, gemmPrefillNT). */
export type GemmNT = (M: number, N: number, K: number, alpha: number, A: Float32Array, W: Float32Array, beta: number, C: Float32Array) => void;

/**
 * Runs each kernel on every rows × (N, K) case, twice (alpha 1, beta 0; alpha 0.7, beta 0.5), and
 * checks each result against the reference gemm in float64, within 1e-5·√K + 1e-6.
 */
export function checkGemmNT(kernels: Record<string, GemmNT>, rows: readonly number[], shapes: readonly (readonly [number, number])[], seed: number): void {
  const rng = makeRng(seed);
  for (const M of rows) {
    for (const [n, k] of shapes) {
      const A = randF32(M * k, rng);
      const W = randF32(n * k, rng);
      for (const [alpha, beta] of [
        [1, 0],
        [0.7, 0.5],
      ]) {
        const C0 = randF32(M * n, rng);
        const want = Float64Array.from(C0);
        referenceKernels.gemm(false, true, M, n, k, alpha, Float64Array.from(A), Float64Array.from(W), beta, want);
        const tol = 1e-5 * Math.sqrt(k) + 1e-6;
        for (const [name, kernel] of Object.entries(kernels)) {
          const C = Float32Array.from(C0);
          kernel(M, n, k, alpha, A, W, beta, C);
          for (let i = 0; i < C.length; i++)
            assert.ok(Math.abs(C[i] - want[i]) <= tol, `${name} M=${M} N=${n} K=${k} alpha=${alpha}: C[${i}] = ${C[i]}, expected ${want[i]}`);
        }
      }
    }
  }
}
