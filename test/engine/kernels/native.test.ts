// The C++ kernels against the TypeScript reference (run in float64 on the same float32 inputs),
// forward and backward, odd shapes, GQA ratios, several sequences, and both GEMM backends.
// These tests fail (not skip) when the addon is missing: every machine that runs the suite has a
// compiler, so a missing addon means the install-time build broke.

import { test } from "node:test";
import assert from "node:assert/strict";
import { referenceKernels as R } from "../../../src/engine/kernels/reference.ts";
import { bf16ToFloat32 } from "../../../src/engine/safetensors/dtypes.ts";
import { assertClose, assertWithin, makeRng, nativeOrFail, probsSize, randF32, seqStartsOf } from "./helpers.ts";

const native = nativeOrFail;

const f64 = (a: Float32Array): Float64Array => Float64Array.from(a);

test("native addon loads and reports its GEMM backends", () => {
  const N = native();
  assert.equal(N.name, "native");
  assert.ok(N.gemmBackends.includes("packed"), `gemmBackends = ${JSON.stringify(N.gemmBackends)}`);
  assert.ok(N.gemmBackends.includes(N.gemmBackend));
  assert.ok(N.numThreads >= 1);
});

const gemmShapes: [number, number, number][] = [
  [1, 1, 1],
  [7, 13, 5],
  [6, 32, 192],
  [37, 53, 300],
  [1, 513, 300],
  [130, 67, 257],
  [150, 300, 200],
  [64, 5, 1000],
  // Transposed A packed in two chunks of K (gemm.cc kPackedABudget); a skinny product done as C^T.
  [300, 70, 3600],
  [400, 32, 300],
];

test("gemm matches the reference for every backend, transpose, alpha and beta", () => {
  const N = native();
  const rng = makeRng(100);
  const initial = N.gemmBackend;
  try {
    for (const [M, Nn, K] of gemmShapes) {
      const big = M * Nn * K > 1e6;
      for (const transA of [false, true]) {
        for (const transB of [false, true]) {
          const A = randF32(M * K, rng);
          const B = randF32(K * Nn, rng);
          const C0 = randF32(M * Nn, rng);
          // Rounding bound: |alpha| |A||B| + |beta C|.
          const absAB = new Float64Array(M * Nn);
          R.gemm(transA, transB, M, Nn, K, 1, f64(A).map(Math.abs), f64(B).map(Math.abs), 0, absAB);
          const combos: (readonly [number, number])[] = big
            ? [
                [1, 0],
                [0.5, -2],
              ]
            : [
                [1, 0],
                [1, 1],
                [-0.75, 0],
                [1.5, 1],
                [0.5, -2],
              ];
          for (const [alpha, beta] of combos) {
            const expected = f64(C0);
            R.gemm(transA, transB, M, Nn, K, alpha, f64(A), f64(B), beta, expected);
            const scale = absAB.map((ab, i) => Math.abs(alpha) * ab + Math.abs(beta * C0[i]));
            for (const backend of N.gemmBackends) {
              N.setGemmBackend(backend);
              assert.equal(N.gemmBackend, backend);
              const C = C0.slice();
              N.gemm(transA, transB, M, Nn, K, alpha, A, B, beta, C);
              assertWithin(
                C,
                expected,
                scale,
                2e-6 * Math.sqrt(K + 1),
                1e-30,
                `${backend} gemm ${M}x${Nn}x${K} tA=${transA} tB=${transB} alpha=${alpha} beta=${beta}`,
              );
            }
          }
        }
      }
    }
  } finally {
    N.setGemmBackend(initial);
  }
});

test("gemm with beta 0 ignores NaN in C, and K = 0 / M = 0 are handled", () => {
  const N = native();
  const initial = N.gemmBackend;
  try {
    for (const backend of N.gemmBackends) {
      N.setGemmBackend(backend);
      for (const [M, Nn, K] of [
        [2, 3, 4],
        [70, 90, 80],
      ]) {
        const A = new Float32Array(M * K).fill(1);
        const B = new Float32Array(K * Nn).fill(2);
        const C = new Float32Array(M * Nn).fill(NaN);
        N.gemm(false, false, M, Nn, K, 1, A, B, 0, C);
        assert.ok(
          C.every((c) => c === 2 * K),
          `${backend}: beta=0 must overwrite NaN (got ${C[0]})`,
        );
      }
      const C = new Float32Array([3, NaN]);
      N.gemm(false, false, 1, 2, 0, 1, new Float32Array(0), new Float32Array(0), 0, C);
      assert.deepEqual(Array.from(C), [0, 0], `${backend}: K=0, beta=0 gives zeros`);
      const C2 = new Float32Array([3, 4]);
      N.gemm(true, true, 1, 2, 0, 1, new Float32Array(0), new Float32Array(0), 0.5, C2);
      assert.deepEqual(Array.from(C2), [1.5, 2], `${backend}: K=0 scales C by beta`);
      N.gemm(false, false, 0, 2, 3, 1, new Float32Array(0), new Float32Array(6), 0, new Float32Array(0));
    }
  } finally {
    N.setGemmBackend(initial);
  }
});

test("gemm: the two backends agree on a training-sized product", () => {
  const N = native();
  if (!N.gemmBackends.includes("openblas")) {
    // Only one backend in this build; the reference comparison above already covers it.
    assert.deepEqual([...N.gemmBackends], ["packed"]);
    return;
  }
  const initial = N.gemmBackend;
  const rng = makeRng(101);
  const [M, Nn, K] = [256, 576, 576];
  const A = randF32(M * K, rng);
  const B = randF32(Nn * K, rng);
  const C1 = new Float32Array(M * Nn);
  const C2 = new Float32Array(M * Nn);
  try {
    N.setGemmBackend("openblas");
    N.gemm(false, true, M, Nn, K, 1, A, B, 0, C1);
    N.setGemmBackend("packed");
    N.gemm(false, true, M, Nn, K, 1, A, B, 0, C2);
  } finally {
    N.setGemmBackend(initial);
  }
  assertClose(C2, C1, 1e-4, 1e-4, "packed vs openblas");
});

test("openblas gemm split across the pool by rows, columns and depth matches the reference", () => {
  const N = native();
  if (!N.gemmBackends.includes("openblas")) return; // the packed path is covered above
  const initial = N.gemmBackend;
  const threads = N.numThreads;
  const rng = makeRng(103);
  // Products big enough to be split (> 8 MFLOP) and shaped so each split is the cheapest one:
  // tall C (rows), wide C (columns), small C with long K (depth, partial sums added at the end).
  const shapes: [number, number, number][] = [
    [517, 64, 256],
    [64, 517, 256],
    [32, 48, 8200],
  ];
  try {
    N.setGemmBackend("openblas");
    N.setNumThreads(2);
    for (const [M, Nn, K] of shapes) {
      for (const [transA, transB] of [
        [false, false],
        [true, false],
        [false, true],
        [true, true],
      ]) {
        const A = randF32(M * K, rng);
        const B = randF32(K * Nn, rng);
        const C0 = randF32(M * Nn, rng);
        const absAB = new Float64Array(M * Nn);
        R.gemm(transA, transB, M, Nn, K, 1, f64(A).map(Math.abs), f64(B).map(Math.abs), 0, absAB);
        for (const beta of [0, 1]) {
          const expected = f64(C0);
          R.gemm(transA, transB, M, Nn, K, 0.5, f64(A), f64(B), beta, expected);
          const C = beta === 0 ? new Float32Array(M * Nn).fill(NaN) : Float32Array.from(C0);
          N.gemm(transA, transB, M, Nn, K, 0.5, A, B, beta, C);
          const scale = absAB.map((v, i) => 0.5 * v + Math.abs(beta * C0[i]));
          assertWithin(C, expected, scale, 2e-6 * Math.sqrt(K + 1), 1e-30, `split gemm ${M}x${Nn}x${K} tA=${transA} tB=${transB} beta=${beta}`);
        }
      }
    }
  } finally {
    N.setNumThreads(threads);
    N.setGemmBackend(initial);
  }
});

test("rmsnorm forward and backward match the reference", () => {
  const N = native();
  const rng = makeRng(102);
  for (const [rows, dim] of [
    [1, 1],
    [5, 7],
    [3, 64],
    [33, 577],
    [300, 576],
  ]) {
    const x = randF32(rows * dim, rng, 2);
    const w = randF32(dim, rng);
    const out = new Float32Array(rows * dim);
    const rstd = new Float32Array(rows);
    N.rmsnormForward(x, w, out, rstd, rows, dim, 1e-5);
    const outR = new Float64Array(rows * dim);
    const rstdR = new Float64Array(rows);
    R.rmsnormForward(f64(x), f64(w), outR, rstdR, rows, dim, 1e-5);
    assertClose(out, outR, 1e-5, 1e-6, `rmsnorm out ${rows}x${dim}`);
    assertClose(rstd, rstdR, 1e-5, 0, `rmsnorm rstd ${rows}x${dim}`);
    const dout = randF32(rows * dim, rng);
    const dx = new Float32Array(rows * dim);
    const dw = new Float32Array(dim).fill(0.5);
    N.rmsnormBackward(dout, x, w, rstd, dx, dw, rows, dim);
    const dxR = new Float64Array(rows * dim);
    const dwR = new Float64Array(dim).fill(0.5);
    R.rmsnormBackward(f64(dout), f64(x), f64(w), f64(rstd), dxR, dwR, rows, dim);
    assertClose(dx, dxR, 1e-4, 1e-5, `rmsnorm dx ${rows}x${dim}`);
    assertClose(dw, dwR, 1e-4, 1e-4, `rmsnorm dweight ${rows}x${dim}`);
    const dx2 = new Float32Array(rows * dim);
    N.rmsnormBackward(dout, x, w, rstd, dx2, null, rows, dim);
    assertClose(dx2, dx, 0, 0, "rmsnorm dx with dweight null");
  }
});

test("rope matches the reference, forward and inverse, at long positions", () => {
  const N = native();
  const rng = makeRng(103);
  for (const [tokens, heads, headDim] of [
    [1, 1, 2],
    [9, 3, 8],
    [300, 9, 64],
  ]) {
    const half = headDim / 2;
    const invFreq = Float32Array.from({ length: half }, (_, i) => 1 / 500000 ** ((2 * i) / headDim));
    const positions = Int32Array.from({ length: tokens }, () => Math.floor(rng() * 4096));
    for (const inverse of [false, true]) {
      const x = randF32(tokens * heads * headDim, rng);
      const xr = f64(x);
      N.rope(x, positions, invFreq, tokens, heads, headDim, inverse);
      R.rope(xr, positions, f64(invFreq), tokens, heads, headDim, inverse);
      assertClose(x, xr, 1e-3, 1e-5, `rope ${tokens}x${heads}x${headDim} inverse=${inverse}`);
    }
  }
});

const attentionCases: { heads: number; kv: number; d: number; lengths: number[] }[] = [
  { heads: 2, kv: 2, d: 8, lengths: [1, 17, 5] },
  { heads: 3, kv: 1, d: 5, lengths: [4, 1, 9, 2] },
  { heads: 4, kv: 1, d: 16, lengths: [33] },
  { heads: 9, kv: 3, d: 64, lengths: [70, 130, 3] },
];

for (const { heads, kv, d, lengths } of attentionCases) {
  test(`attention forward/backward match the reference: GQA ${heads}/${kv}, d=${d}, lengths ${lengths.join(",")}`, () => {
    const N = native();
    const rng = makeRng(104 + heads * 10 + d);
    const starts = seqStartsOf(lengths);
    const total = starts[lengths.length];
    const scale = 1 / Math.sqrt(d);
    const q = randF32(total * heads * d, rng, 2);
    const k = randF32(total * kv * d, rng, 2);
    const v = randF32(total * kv * d, rng);
    const out = new Float32Array(total * heads * d);
    const probs = new Float32Array(probsSize(lengths, heads)).fill(NaN);
    N.attentionForward(q, k, v, out, probs, starts, heads, kv, d, scale);
    const outR = new Float64Array(out.length);
    const probsR = new Float64Array(probs.length);
    R.attentionForward(f64(q), f64(k), f64(v), outR, probsR, starts, heads, kv, d, scale);
    assertClose(out, outR, 1e-4, 1e-5, "attention out");
    assertClose(probs, probsR, 1e-4, 1e-6, "attention probs");
    const out2 = new Float32Array(out.length);
    N.attentionForward(q, k, v, out2, null, starts, heads, kv, d, scale);
    assertClose(out2, out, 0, 0, "attention out without probs");

    const dout = randF32(out.length, rng);
    const dq = new Float32Array(q.length).fill(NaN);
    const dk = new Float32Array(k.length).fill(NaN);
    const dv = new Float32Array(v.length).fill(NaN);
    N.attentionBackward(dout, q, k, v, probs, dq, dk, dv, starts, heads, kv, d, scale);
    const dqR = new Float64Array(q.length);
    const dkR = new Float64Array(k.length);
    const dvR = new Float64Array(v.length);
    R.attentionBackward(f64(dout), f64(q), f64(k), f64(v), f64(probs), dqR, dkR, dvR, starts, heads, kv, d, scale);
    assertClose(dq, dqR, 1e-3, 1e-5, "attention dq");
    assertClose(dk, dkR, 1e-3, 1e-5, "attention dk");
    assertClose(dv, dvR, 1e-3, 1e-5, "attention dv");
  });
}

test("sliding-window attention (forward, backward through the zeroed probs, decode) matches the reference", () => {
  const N = native();
  const rng = makeRng(120);
  const [heads, kv, d, window] = [6, 2, 64, 17];
  const lengths = [70, 130, 3];
  const starts = seqStartsOf(lengths);
  const total = starts[lengths.length];
  const q = randF32(total * heads * d, rng, 2);
  const k = randF32(total * kv * d, rng, 2);
  const v = randF32(total * kv * d, rng);
  const out = new Float32Array(total * heads * d);
  const probs = new Float32Array(probsSize(lengths, heads)).fill(NaN);
  N.attentionForward(q, k, v, out, probs, starts, heads, kv, d, 0.125, window);
  const outR = new Float64Array(out.length);
  const probsR = new Float64Array(probs.length);
  R.attentionForward(f64(q), f64(k), f64(v), outR, probsR, starts, heads, kv, d, 0.125, window);
  assertClose(out, outR, 1e-4, 1e-5, "windowed attention out");
  assertClose(probs, probsR, 1e-4, 1e-6, "windowed attention probs");
  const dout = randF32(out.length, rng);
  const [dq, dk, dv] = [q, k, v].map((a) => new Float32Array(a.length));
  N.attentionBackward(dout, q, k, v, probs, dq!, dk!, dv!, starts, heads, kv, d, 0.125);
  const [dqR, dkR, dvR] = [q, k, v].map((a) => new Float64Array(a.length));
  R.attentionBackward(f64(dout), f64(q), f64(k), f64(v), f64(probs), dqR!, dkR!, dvR!, starts, heads, kv, d, 0.125);
  assertClose(dq!, dqR!, 1e-3, 1e-5, "windowed attention dq");
  assertClose(dk!, dkR!, 1e-3, 1e-5, "windowed attention dk");
  assertClose(dv!, dvR!, 1e-3, 1e-5, "windowed attention dv");
  const maxLen = 200;
  const kc = randF32(3 * kv * maxLen * d, rng, 2);
  const vc = randF32(3 * kv * maxLen * d, rng);
  const slots = new Int32Array([1, 1, 0, 2]);
  const lens = new Int32Array([10, 11, 200, 1]);
  const qd = randF32(slots.length * heads * d, rng, 2);
  const o = new Float32Array(qd.length);
  const oR = new Float64Array(qd.length);
  N.attentionDecodeSlots(qd, kc, vc, o, slots, lens, slots.length, heads, kv, d, maxLen, 0.125, window);
  R.attentionDecodeSlots(f64(qd), f64(kc), f64(vc), oR, slots, lens, slots.length, heads, kv, d, maxLen, 0.125, window);
  assertClose(o, oR, 1e-4, 1e-5, "windowed attentionDecodeSlots");
});

test("attentionDecode matches the reference", () => {
  const N = native();
  const rng = makeRng(105);
  for (const { heads, kv, d, lens, maxLen } of [
    { heads: 4, kv: 4, d: 8, lens: [1, 5, 37], maxLen: 37 },
    { heads: 9, kv: 3, d: 64, lens: [300, 12], maxLen: 301 },
    { heads: 8, kv: 2, d: 7, lens: [3], maxLen: 4 },
    // Seven query heads per KV head (Qwen2.5-0.5B) and a head wider than four vectors.
    { heads: 14, kv: 2, d: 72, lens: [5, 130], maxLen: 131 },
  ]) {
    const n = lens.length;
    const q = randF32(n * heads * d, rng, 2);
    const kc = randF32(n * kv * maxLen * d, rng, 2);
    const vc = randF32(n * kv * maxLen * d, rng);
    const out = new Float32Array(n * heads * d);
    const outR = new Float64Array(out.length);
    const lensA = Int32Array.from(lens);
    N.attentionDecode(q, kc, vc, out, lensA, n, heads, kv, d, maxLen, 0.3);
    R.attentionDecode(f64(q), f64(kc), f64(vc), outR, lensA, n, heads, kv, d, maxLen, 0.3);
    assertClose(out, outR, 1e-4, 1e-5, `attentionDecode ${heads}/${kv} d=${d}`);
  }
  assert.throws(
    () => N.attentionDecode(new Float32Array(4), new Float32Array(8), new Float32Array(8), new Float32Array(4), new Int32Array([3]), 1, 1, 1, 4, 2, 1),
    /cacheLens\[0\] = 3 must be in 1\.\.maxLen \(2\)/,
  );
});

/** Random K and V caches of `numSlots` slots ([kv][maxLen][d] each); keys scaled by 2. */
function randomSlotCaches(numSlots: number, kv: number, maxLen: number, d: number, rng: ReturnType<typeof makeRng>) {
  const size = numSlots * kv * maxLen * d;
  return { kc: randF32(size, rng, 2), vc: randF32(size, rng) };
}

test("attentionDecodeSlots over prompts (runs of one slot at consecutive lengths, done in blocks of queries) matches the reference, a row's bits independent of its block", () => {
  const N = native();
  const rng = makeRng(111);
  const [heads, kv, d, maxLen, numSlots] = [8, 2, 40, 120, 3];
  const { kc, vc } = randomSlotCaches(numSlots, kv, maxLen, d, rng);
  // Slot 1: a 71-position prompt from position 4 (blocks of 32, 32, 7); slot 0: 3 positions (too
  // few for a block); slot 2: one decoding query; then slot 0 again, 40 positions.
  const slotList: number[] = [];
  const lenList: number[] = [];
  const run = (slot: number, from: number, count: number): void => {
    for (let i = 0; i < count; i++) {
      slotList.push(slot);
      lenList.push(from + i + 1);
    }
  };
  run(1, 4, 71);
  run(0, 0, 3);
  run(2, 99, 1);
  run(0, 50, 40);
  const slots = Int32Array.from(slotList);
  const lens = Int32Array.from(lenList);
  const n = slots.length;
  const q = randF32(n * heads * d, rng, 2);
  const out = new Float32Array(n * heads * d);
  const outR = new Float64Array(out.length);
  N.attentionDecodeSlots(q, kc, vc, out, slots, lens, n, heads, kv, d, maxLen, 0.125);
  R.attentionDecodeSlots(f64(q), f64(kc), f64(vc), outR, slots, lens, n, heads, kv, d, maxLen, 0.125);
  assertClose(out, outR, 1e-4, 1e-5, "attentionDecodeSlots over prompts");
  // The last 20 queries of slot 1's prompt alone: other block boundaries, the same bits.
  const w = heads * d;
  const tail = new Float32Array(20 * w);
  N.attentionDecodeSlots(q.subarray(51 * w, 71 * w), kc, vc, tail, slots.subarray(51, 71), lens.subarray(51, 71), 20, heads, kv, d, maxLen, 0.125);
  assert.deepEqual(tail, out.subarray(51 * w, 71 * w));
});

test("attentionDecodeSlots matches the reference", () => {
  const N = native();
  const rng = makeRng(110);
  const [heads, kv, d, maxLen, numSlots] = [9, 3, 64, 200, 3];
  const { kc, vc } = randomSlotCaches(numSlots, kv, maxLen, d, rng);
  const slots = new Int32Array([1, 1, 1, 0, 2]);
  const lens = new Int32Array([10, 11, 12, 200, 1]);
  const n = slots.length;
  const q = randF32(n * heads * d, rng, 2);
  const out = new Float32Array(n * heads * d);
  const outR = new Float64Array(out.length);
  N.attentionDecodeSlots(q, kc, vc, out, slots, lens, n, heads, kv, d, maxLen, 0.125);
  R.attentionDecodeSlots(f64(q), f64(kc), f64(vc), outR, slots, lens, n, heads, kv, d, maxLen, 0.125);
  assertClose(out, outR, 1e-4, 1e-5, "attentionDecodeSlots");
  assert.throws(
    () => N.attentionDecodeSlots(q, kc, vc, out, new Int32Array([3]), lens, 1, heads, kv, d, maxLen, 1),
    /attentionDecodeSlots: cacheSlots\[0\] = 3 is outside 0\.\.2/,
  );
});

for (const gate of ["swiglu", "geglu"] as const) {
  test(`${gate} forward and backward match the reference, including saturation${gate === "swiglu" ? " and NaN" : ""}`, () => {
    const N = native();
    const rng = makeRng(gate === "swiglu" ? 106 : 116);
    const [fwdN, bwdN, fwdR, bwdR] =
      gate === "swiglu"
        ? [N.swigluForward, N.swigluBackward, R.swigluForward, R.swigluBackward]
        : [N.gegluForward, N.gegluBackward, R.gegluForward, R.gegluBackward];
    for (const n of [1, 15, 1000, 100003]) {
      const g = randF32(n, rng, 12);
      const u = randF32(n, rng);
      if (n > 10) {
        g.set(gate === "swiglu" ? [-200, 200, -88, 88, -87, 87, 0, NaN, Infinity, -Infinity] : [-200, 200, -88, 88, -10, 10, 0, -3, 3, -0.5]);
      }
      const out = new Float32Array(n);
      const outR = new Float64Array(n);
      fwdN(g, u, out, n);
      fwdR(f64(g), f64(u), outR, n);
      // GELU-tanh's far negative tail: torch's 0.5·g·(1 + tanh(u)) cancels to 0 where g·σ(2u) keeps ~1e-22.
      assertClose(out, outR, 1e-5, gate === "swiglu" ? 1e-30 : 1e-12, `${gate} out n=${n}`);
      const dout = randF32(n, rng);
      const dg = new Float32Array(n);
      const du = new Float32Array(n);
      const dgR = new Float64Array(n);
      const duR = new Float64Array(n);
      bwdN(dout, g, u, dg, du, n);
      bwdR(f64(dout), f64(g), f64(u), dgR, duR, n);
      // dgate cancels where the activation's slope crosses zero, so part of the tolerance is absolute.
      assertClose(dg, dgR, 1e-5, 1e-6, `${gate} dgate n=${n}`);
      assertClose(du, duR, 1e-5, gate === "swiglu" ? 1e-30 : 1e-12, `${gate} dup n=${n}`);
    }
  });
}

test("logprobs forward and backward match the reference, with ignored targets and -inf logits", () => {
  const N = native();
  const rng = makeRng(107);
  for (const [rows, vocab] of [
    [1, 1],
    [5, 7],
    [4, 1000],
    [3, 50001],
  ]) {
    const logits = randF32(rows * vocab, rng, 8);
    const targets = Int32Array.from({ length: rows }, (_, r) => (r === 1 ? -1 : Math.floor(rng() * vocab)));
    if (vocab > 2) {
      logits[0] = -Infinity; // masked entries must not poison the row
      if (targets[0] === 0) targets[0] = 1;
    }
    const lp = new Float32Array(rows);
    const lse = new Float32Array(rows);
    const lpR = new Float64Array(rows);
    const lseR = new Float64Array(rows);
    N.logprobsForward(logits, targets, lp, lse, rows, vocab);
    R.logprobsForward(f64(logits), targets, lpR, lseR, rows, vocab);
    assertClose(lse, lseR, 1e-5, 1e-5, `logsumexp ${rows}x${vocab}`);
    assertClose(lp, lpR, 1e-5, 2e-5, `logprobs ${rows}x${vocab}`);
    const dlp = randF32(rows, rng);
    const dl = new Float32Array(rows * vocab).fill(NaN);
    const dlR = new Float64Array(rows * vocab);
    N.logprobsBackward(dlp, logits, targets, lse, dl, rows, vocab);
    R.logprobsBackward(f64(dlp), f64(logits), targets, f64(lse), dlR, rows, vocab);
    assertClose(dl, dlR, 1e-5, 1e-7, `dlogits ${rows}x${vocab}`);
    // In place (the head overwrites its logits with their gradient).
    const inPlace = Float32Array.from(logits);
    N.logprobsBackward(dlp, inPlace, targets, lse, inPlace, rows, vocab);
    assertClose(inPlace, dlR, 1e-5, 1e-7, `dlogits in place ${rows}x${vocab}`);
  }
  const nanRow = new Float32Array([1, NaN, 2]);
  const lp = new Float32Array(1);
  const lse = new Float32Array(1);
  N.logprobsForward(nanRow, new Int32Array([0]), lp, lse, 1, 3);
  assert.ok(Number.isNaN(lp[0]), "a NaN logit must make the row's logprob NaN, not hide it");
  assert.throws(() => N.logprobsForward(nanRow, new Int32Array([3]), lp, lse, 1, 3), /targets\[0\] = 3 is outside the vocabulary \(size 3\)/);
});

test("adamw matches the reference over several steps", () => {
  const N = native();
  const rng = makeRng(108);
  for (const n of [1, 17, 70001]) {
    const p = randF32(n, rng);
    const m = new Float32Array(n);
    const v = new Float32Array(n);
    const pR = f64(p);
    const mR = new Float64Array(n);
    const vR = new Float64Array(n);
    for (let t = 1; t <= 3; t++) {
      const g = randF32(n, rng);
      N.adamw(p, g, m, v, n, 1e-2, 0.9, 0.95, 1e-8, 0.1, t, 0.7);
      R.adamw(pR, f64(g), mR, vR, n, 1e-2, 0.9, 0.95, 1e-8, 0.1, t, 0.7);
    }
    assertClose(p, pR, 1e-5, 1e-6, `adamw param n=${n}`);
    assertClose(m, mR, 1e-5, 1e-7, `adamw m n=${n}`);
    assertClose(v, vR, 1e-5, 1e-8, `adamw v n=${n}`);
  }
});

test("axpy, sumSquares, add, embedding match the reference", () => {
  const N = native();
  const rng = makeRng(109);
  for (const n of [0, 1, 33, 100001]) {
    const x = randF32(n, rng);
    const y = randF32(n, rng);
    const yR = f64(y);
    N.axpy(n, -0.25, x, y);
    R.axpy(n, -0.25, f64(x), yR);
    assertClose(y, yR, 1e-6, 1e-7, `axpy n=${n}`);
    const ss = N.sumSquares(x, n);
    assert.ok(Math.abs(ss - R.sumSquares(f64(x), n)) <= 1e-9 * (1 + ss), `sumSquares n=${n}`);
    const out = new Float32Array(n);
    N.add(x, y, out, n);
    assertClose(
      out,
      Float64Array.from(x, (a, i) => Math.fround(a + y[i])),
      0,
      0,
      `add n=${n}`,
    );
    N.add(x, y, x, n);
    assertClose(x, out, 0, 0, `add in place n=${n}`);
  }
  const [rows, dim] = [50, 37];
  const table = randF32(rows * dim, rng);
  const ids = Int32Array.from({ length: 200 }, () => Math.floor(rng() * rows));
  const out = new Float32Array(ids.length * dim);
  const outR = new Float64Array(out.length);
  N.embeddingForward(table, ids, out, ids.length, dim);
  R.embeddingForward(f64(table), ids, outR, ids.length, dim);
  assertClose(out, outR, 0, 0, "embeddingForward");
  const dout = randF32(out.length, rng);
  const dtable = new Float32Array(table.length).fill(1);
  const dtableR = new Float64Array(table.length).fill(1);
  N.embeddingBackward(dout, ids, dtable, ids.length, dim);
  R.embeddingBackward(f64(dout), ids, dtableR, ids.length, dim);
  assertClose(dtable, dtableR, 1e-6, 1e-6, "embeddingBackward");
  assert.throws(() => N.embeddingForward(table, new Int32Array([rows]), out, 1, dim), /ids\[0\] = 50 is outside the table \(50 rows\)/);
});

test("native kernels reject wrong array types and short arrays with a clear error", () => {
  const N = native();
  assert.throws(
    () => N.swigluForward(new Float64Array(4), new Float32Array(4), new Float32Array(4), 4),
    (err: unknown) =>
      err instanceof TypeError &&
      /swigluForward: argument gate must be a Float32Array \(the native kernels are float32-only\), got Float64Array/.test(err.message),
  );
  assert.throws(
    () => N.gemm(false, false, 2, 3, 4, 1, new Float32Array(8), new Float32Array(11), 0, new Float32Array(6)),
    (err: unknown) => err instanceof RangeError && /gemm: argument B has 11 elements but needs at least 12 \(K\*N\)/.test(err.message),
  );
  assert.throws(
    () => N.attentionForward(new Float32Array(8), new Float32Array(8), new Float32Array(8), new Float32Array(8), null, new Int32Array([0, 2, 1]), 1, 1, 4, 1),
    /seqStarts must be non-decreasing/,
  );
  assert.throws(
    () => N.attentionForward(new Float32Array(8), new Float32Array(8), new Float32Array(8), new Float32Array(8), null, new Int32Array([0, 2]), 3, 2, 4, 1),
    /nHeads \(3\) must be a positive multiple of nKvHeads \(2\)/,
  );
});

test("results do not depend on the thread count", () => {
  const N = native();
  const initialThreads = N.numThreads;
  const rng = makeRng(111);
  const lengths = [100, 37];
  const [heads, kv, d] = [6, 2, 32];
  const starts = seqStartsOf(lengths);
  const total = starts[lengths.length];
  const q = randF32(total * heads * d, rng);
  const k = randF32(total * kv * d, rng);
  const v = randF32(total * kv * d, rng);
  const dout = randF32(total * heads * d, rng);
  const [rows, dim] = [700, 300];
  const x = randF32(rows * dim, rng);
  const w = randF32(dim, rng);
  const A = randF32(300 * 200, rng);
  const B = randF32(200 * 500, rng);
  const run = (): Float32Array[] => {
    const out = new Float32Array(total * heads * d);
    const probs = new Float32Array(probsSize(lengths, heads));
    N.attentionForward(q, k, v, out, probs, starts, heads, kv, d, 0.2);
    const dq = new Float32Array(q.length);
    const dk = new Float32Array(k.length);
    const dv = new Float32Array(v.length);
    N.attentionBackward(dout, q, k, v, probs, dq, dk, dv, starts, heads, kv, d, 0.2);
    const y = new Float32Array(rows * dim);
    const rstd = new Float32Array(rows);
    N.rmsnormForward(x, w, y, rstd, rows, dim, 1e-6);
    const dx = new Float32Array(rows * dim);
    const dw = new Float32Array(dim);
    N.rmsnormBackward(x, x, w, rstd, dx, dw, rows, dim);
    const C = new Float32Array(300 * 500);
    N.gemm(false, false, 300, 500, 200, 1, A, B, 0, C);
    return [out, probs, dq, dk, dv, y, dx, dw, C, new Float32Array([N.sumSquares(x, x.length)])];
  };
  try {
    N.setNumThreads(1);
    const one = run();
    N.setNumThreads(3);
    assert.equal(N.numThreads, 3);
    const three = run();
    one.forEach((a, i) => assert.deepEqual(three[i], a, `output ${i} differs between 1 and 3 threads`));
  } finally {
    N.setNumThreads(initialThreads);
  }
});

test("bf16 widening: native equals the TypeScript reference bit for bit (every bf16 value, incl. NaN, ±0, ±inf, subnormals)", () => {
  const k = native();
  const all = new Uint16Array(65536 + 7);
  for (let i = 0; i < all.length; i++) all[i] = i & 0xffff;
  const out = new Float32Array(all.length);
  k.bf16ToFloat32(all, out, all.length);
  const want = bf16ToFloat32(all);
  assert.deepEqual(new Uint32Array(out.buffer), new Uint32Array(want.buffer));
  assert.equal(out[0x3f80], 1);
  assert.throws(() => k.bf16ToFloat32(all, new Float32Array(3), all.length), /dst/);
});
