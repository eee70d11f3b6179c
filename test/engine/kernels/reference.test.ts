// The TypeScript reference kernels against direct float64 formulas, and every backward against
// central finite differences in float64 (docs/numerics.md#gradient-checks).

import { test } from "node:test";
import assert from "node:assert/strict";
import { referenceKernels as K } from "../../../src/engine/kernels/reference.ts";
import { assertClose, dot, makeRng, numericGrad, probsSize, randF32, randF64, seqStartsOf } from "./helpers.ts";

const FD_RTOL = 1e-6;
const FD_ATOL = 1e-8;

test("gemm matches the definition for all transposes, alpha and beta", () => {
  const rng = makeRng(1);
  for (const [M, N, K_] of [
    [3, 5, 4],
    [7, 1, 9],
    [1, 6, 2],
    [4, 4, 1],
  ] as const) {
    for (const transA of [false, true]) {
      for (const transB of [false, true]) {
        for (const [alpha, beta] of [
          [1, 0],
          [0.7, 1],
          [-1.3, 0.5],
        ] as const) {
          const A = randF64(M * K_, rng);
          const B = randF64(K_ * N, rng);
          const C = randF64(M * N, rng);
          const expected = new Float64Array(M * N);
          for (let i = 0; i < M; i++) {
            for (let j = 0; j < N; j++) {
              let s = 0;
              for (let k = 0; k < K_; k++) s += (transA ? A[k * M + i] : A[i * K_ + k]) * (transB ? B[j * K_ + k] : B[k * N + j]);
              expected[i * N + j] = alpha * s + beta * C[i * N + j];
            }
          }
          K.gemm(transA, transB, M, N, K_, alpha, A, B, beta, C);
          assertClose(C, expected, 1e-14, 1e-14, `gemm ${M}x${N}x${K_} tA=${transA} tB=${transB} a=${alpha} b=${beta}`);
        }
      }
    }
  }
});

test("gemm with beta 0 overwrites NaN in C", () => {
  const C = new Float32Array([NaN, NaN, NaN, NaN]);
  K.gemm(false, false, 2, 2, 1, 1, new Float32Array([1, 2]), new Float32Array([3, 4]), 0, C);
  assert.deepEqual(Array.from(C), [3, 4, 6, 8]);
});

test("rmsnorm forward matches the formula and backward matches finite differences", () => {
  const rng = makeRng(2);
  const rows = 3;
  const dim = 7;
  const eps = 1e-5;
  const x = randF64(rows * dim, rng);
  const w = randF64(dim, rng);
  const R = randF64(rows * dim, rng);
  const out = new Float64Array(rows * dim);
  const rstd = new Float64Array(rows);
  K.rmsnormForward(x, w, out, rstd, rows, dim, eps);
  const expected = new Float64Array(rows * dim);
  for (let r = 0; r < rows; r++) {
    let ms = 0;
    for (let j = 0; j < dim; j++) ms += x[r * dim + j] ** 2 / dim;
    for (let j = 0; j < dim; j++) expected[r * dim + j] = (w[j] * x[r * dim + j]) / Math.sqrt(ms + eps);
  }
  assertClose(out, expected, 1e-14, 1e-15, "rmsnorm forward");

  const loss = (): number => {
    K.rmsnormForward(x, w, out, rstd, rows, dim, eps);
    return dot(out, R);
  };
  loss();
  const dx = new Float64Array(rows * dim);
  const dw = new Float64Array(dim).fill(0.25); // accumulates
  K.rmsnormBackward(R, x, w, rstd, dx, dw, rows, dim);
  assertClose(dx, numericGrad(x, loss), FD_RTOL, FD_ATOL, "rmsnorm dx");
  const fdW = numericGrad(w, loss).map((g) => g + 0.25);
  assertClose(dw, fdW, FD_RTOL, FD_ATOL, "rmsnorm dweight (accumulated)");
  const dx2 = new Float64Array(rows * dim);
  K.rmsnormBackward(R, x, w, rstd, dx2, null, rows, dim);
  assertClose(dx2, dx, 0, 0, "rmsnorm dx with dweight null");
});

test("rope rotates pairs (i, i+half) and inverse is its transpose", () => {
  const rng = makeRng(3);
  const tokens = 4;
  const nHeads = 3;
  const headDim = 6;
  const half = headDim / 2;
  const positions = new Int32Array([0, 5, 17, 2]);
  const invFreq = Float64Array.from({ length: half }, (_, i) => 1 / 10000 ** ((2 * i) / headDim));
  const x = randF64(tokens * nHeads * headDim, rng);
  const y = x.slice();
  K.rope(y, positions, invFreq, tokens, nHeads, headDim, false);
  const expected = new Float64Array(x.length);
  for (let t = 0; t < tokens; t++) {
    for (let h = 0; h < nHeads; h++) {
      const o = (t * nHeads + h) * headDim;
      for (let i = 0; i < half; i++) {
        const a = Math.fround(positions[t] * invFreq[i]);
        expected[o + i] = x[o + i] * Math.cos(a) - x[o + i + half] * Math.sin(a);
        expected[o + i + half] = x[o + i + half] * Math.cos(a) + x[o + i] * Math.sin(a);
      }
    }
  }
  assertClose(y, expected, 1e-14, 1e-15, "rope forward");
  // <R x, z> = <x, R^T z>
  const z = randF64(x.length, rng);
  const zt = z.slice();
  K.rope(zt, positions, invFreq, tokens, nHeads, headDim, true);
  assert.ok(Math.abs(dot(y, z) - dot(x, zt)) < 1e-12, "rope inverse is the transpose");
  K.rope(y, positions, invFreq, tokens, nHeads, headDim, true);
  assertClose(y, x, 1e-13, 1e-14, "rope inverse undoes forward");
});

test("rope rounds the angle to fp32 like torch", () => {
  const invFreq = new Float32Array([0.1234567]);
  const x = new Float32Array([1, 0]);
  K.rope(x, new Int32Array([2001]), invFreq, 1, 1, 2, false);
  const a = Math.fround(2001 * invFreq[0]);
  assert.equal(x[0], Math.fround(Math.cos(a)));
  assert.equal(x[1], Math.fround(Math.sin(a)));
});

/** Naive causal GQA attention from the definition, for one packed batch. */
function naiveAttention(
  q: Float64Array,
  k: Float64Array,
  v: Float64Array,
  lengths: readonly number[],
  nHeads: number,
  nKvHeads: number,
  d: number,
  scale: number,
  window = Infinity,
): { out: Float64Array; probs: Float64Array } {
  const starts = seqStartsOf(lengths);
  const total = starts[lengths.length];
  const out = new Float64Array(total * nHeads * d);
  const probs = new Float64Array(probsSize(lengths, nHeads));
  let base = 0;
  lengths.forEach((len, s) => {
    for (let h = 0; h < nHeads; h++) {
      const g = Math.floor((h * nKvHeads) / nHeads);
      for (let i = 0; i < len; i++) {
        const scores: number[] = [];
        for (let j = 0; j < len; j++) {
          if (j > i || i - j >= window) {
            scores.push(-Infinity);
            continue;
          }
          let sc = 0;
          for (let e = 0; e < d; e++) sc += q[((starts[s] + i) * nHeads + h) * d + e] * k[((starts[s] + j) * nKvHeads + g) * d + e];
          scores.push(sc * scale);
        }
        const mx = Math.max(...scores);
        const ex = scores.map((sc) => Math.exp(sc - mx));
        const sum = ex.reduce((a, b) => a + b, 0);
        for (let j = 0; j < len; j++) {
          const p = ex[j] / sum;
          probs[base + h * len * len + i * len + j] = p;
          for (let e = 0; e < d; e++) out[((starts[s] + i) * nHeads + h) * d + e] += p * v[((starts[s] + j) * nKvHeads + g) * d + e];
        }
      }
    }
    base += nHeads * len * len;
  });
  return { out, probs };
}

for (const [nHeads, nKvHeads] of [
  [2, 2],
  [3, 1],
  [4, 1],
  [6, 2],
] as const) {
  test(`attention forward/backward, GQA ${nHeads}/${nKvHeads}`, () => {
    const rng = makeRng(10 + nHeads * 7 + nKvHeads);
    const d = 4;
    const lengths = [3, 1, 5];
    const starts = seqStartsOf(lengths);
    const total = starts[lengths.length];
    const scale = 1 / Math.sqrt(d);
    const q = randF64(total * nHeads * d, rng);
    const k = randF64(total * nKvHeads * d, rng);
    const v = randF64(total * nKvHeads * d, rng);
    const out = new Float64Array(total * nHeads * d);
    const probs = new Float64Array(probsSize(lengths, nHeads)).fill(7);
    K.attentionForward(q, k, v, out, probs, starts, nHeads, nKvHeads, d, scale);
    const ref = naiveAttention(q, k, v, lengths, nHeads, nKvHeads, d, scale);
    assertClose(out, ref.out, 1e-13, 1e-15, "attention out");
    assertClose(probs, ref.probs, 1e-13, 1e-15, "attention probs (upper triangle zero)");
    const out2 = new Float64Array(out.length);
    K.attentionForward(q, k, v, out2, null, starts, nHeads, nKvHeads, d, scale);
    assertClose(out2, out, 0, 0, "attention out without probs");

    const R = randF64(out.length, rng);
    const loss = (): number => {
      K.attentionForward(q, k, v, out, null, starts, nHeads, nKvHeads, d, scale);
      return dot(out, R);
    };
    const dq = new Float64Array(q.length).fill(9);
    const dk = new Float64Array(k.length).fill(9);
    const dv = new Float64Array(v.length).fill(9);
    K.attentionBackward(R, q, k, v, probs, dq, dk, dv, starts, nHeads, nKvHeads, d, scale);
    assertClose(dq, numericGrad(q, loss), FD_RTOL, FD_ATOL, "attention dq");
    assertClose(dk, numericGrad(k, loss), FD_RTOL, FD_ATOL, "attention dk");
    assertClose(dv, numericGrad(v, loss), FD_RTOL, FD_ATOL, "attention dv");
  });
}

test("sliding-window attention: keys i - window < j <= i only; backward (no window of its own) matches finite differences", () => {
  const rng = makeRng(31);
  const [nHeads, nKvHeads, d, window] = [4, 2, 4, 3];
  const lengths = [6, 2, 7];
  const starts = seqStartsOf(lengths);
  const total = starts[lengths.length];
  const scale = 0.4;
  const q = randF64(total * nHeads * d, rng);
  const k = randF64(total * nKvHeads * d, rng);
  const v = randF64(total * nKvHeads * d, rng);
  const out = new Float64Array(total * nHeads * d);
  const probs = new Float64Array(probsSize(lengths, nHeads)).fill(7);
  K.attentionForward(q, k, v, out, probs, starts, nHeads, nKvHeads, d, scale, window);
  const ref = naiveAttention(q, k, v, lengths, nHeads, nKvHeads, d, scale, window);
  assertClose(out, ref.out, 1e-13, 1e-15, "windowed attention out");
  assertClose(probs, ref.probs, 1e-13, 1e-15, "windowed attention probs (zero outside the window)");
  // The window changes the result (the sequences are longer than it).
  const full = naiveAttention(q, k, v, lengths, nHeads, nKvHeads, d, scale);
  assert.ok(Math.max(...out.map((x, i) => Math.abs(x - full.out[i]))) > 1e-3);
  const R = randF64(out.length, rng);
  const loss = (): number => {
    K.attentionForward(q, k, v, out, null, starts, nHeads, nKvHeads, d, scale, window);
    return dot(out, R);
  };
  const dq = new Float64Array(q.length);
  const dk = new Float64Array(k.length);
  const dv = new Float64Array(v.length);
  K.attentionBackward(R, q, k, v, probs, dq, dk, dv, starts, nHeads, nKvHeads, d, scale);
  assertClose(dq, numericGrad(q, loss), FD_RTOL, FD_ATOL, "windowed attention dq");
  assertClose(dk, numericGrad(k, loss), FD_RTOL, FD_ATOL, "windowed attention dk");
  assertClose(dv, numericGrad(v, loss), FD_RTOL, FD_ATOL, "windowed attention dv");
});

test("attentionDecode with a window reads only the last `window` cached positions", () => {
  const rng = makeRng(32);
  const [nHeads, nKvHeads, d, maxLen, window] = [4, 2, 3, 8, 3];
  const lens = Int32Array.from([8, 2, 5]);
  const n = lens.length;
  const q = randF64(n * nHeads * d, rng);
  const kCache = randF64(n * nKvHeads * maxLen * d, rng);
  const vCache = randF64(n * nKvHeads * maxLen * d, rng);
  const out = new Float64Array(n * nHeads * d);
  K.attentionDecode(q, kCache, vCache, out, lens, n, nHeads, nKvHeads, d, maxLen, 0.5, window);
  for (let b = 0; b < n; b++) {
    // The same query over a cache holding only the window's positions.
    const lo = Math.max(0, lens[b] - window);
    const len = lens[b] - lo;
    const kc = new Float64Array(nKvHeads * len * d);
    const vc = new Float64Array(nKvHeads * len * d);
    for (let g = 0; g < nKvHeads; g++) {
      const src = ((b * nKvHeads + g) * maxLen + lo) * d;
      kc.set(kCache.subarray(src, src + len * d), g * len * d);
      vc.set(vCache.subarray(src, src + len * d), g * len * d);
    }
    const one = new Float64Array(nHeads * d);
    K.attentionDecode(q.subarray(b * nHeads * d, (b + 1) * nHeads * d), kc, vc, one, Int32Array.of(len), 1, nHeads, nKvHeads, d, len, 0.5);
    assertClose(out.subarray(b * nHeads * d, (b + 1) * nHeads * d), one, 1e-14, 1e-15, `windowed decode row ${b}`);
  }
});

test("attentionDecode over a KV cache equals the last row of causal attention", () => {
  const rng = makeRng(20);
  const nHeads = 6;
  const nKvHeads = 2;
  const d = 5;
  const maxLen = 9;
  const lens = [4, 9, 1];
  const scale = 0.37;
  const n = lens.length;
  const q = randF64(n * nHeads * d, rng);
  const kCache = randF64(n * nKvHeads * maxLen * d, rng);
  const vCache = randF64(n * nKvHeads * maxLen * d, rng);
  const out = new Float64Array(n * nHeads * d);
  K.attentionDecode(q, kCache, vCache, out, Int32Array.from(lens), n, nHeads, nKvHeads, d, maxLen, scale);
  for (let b = 0; b < n; b++) {
    const len = lens[b];
    // Lay the cache out as a packed sequence and put the query at the last position.
    const qs = new Float64Array(len * nHeads * d);
    const ks = new Float64Array(len * nKvHeads * d);
    const vs = new Float64Array(len * nKvHeads * d);
    for (let j = 0; j < len; j++) {
      for (let g = 0; g < nKvHeads; g++) {
        for (let e = 0; e < d; e++) {
          ks[(j * nKvHeads + g) * d + e] = kCache[((b * nKvHeads + g) * maxLen + j) * d + e];
          vs[(j * nKvHeads + g) * d + e] = vCache[((b * nKvHeads + g) * maxLen + j) * d + e];
        }
      }
    }
    qs.set(q.subarray(b * nHeads * d, (b + 1) * nHeads * d), (len - 1) * nHeads * d);
    const ref = naiveAttention(qs, ks, vs, [len], nHeads, nKvHeads, d, scale);
    assertClose(out.subarray(b * nHeads * d, (b + 1) * nHeads * d), ref.out.subarray((len - 1) * nHeads * d), 1e-13, 1e-15, `decode row ${b}`);
  }
});

test("attentionDecodeSlots equals attentionDecode on the chosen slots", () => {
  const rng = makeRng(21);
  const [nHeads, nKvHeads, d, maxLen, numSlots] = [4, 2, 3, 6, 3];
  const slotSize = nKvHeads * maxLen * d;
  const kCache = randF64(numSlots * slotSize, rng);
  const vCache = randF64(numSlots * slotSize, rng);
  const slots = new Int32Array([2, 0, 2, 1]);
  const lens = new Int32Array([3, 6, 4, 1]);
  const n = slots.length;
  const q = randF64(n * nHeads * d, rng);
  const out = new Float64Array(n * nHeads * d);
  K.attentionDecodeSlots(q, kCache, vCache, out, slots, lens, n, nHeads, nKvHeads, d, maxLen, 0.5);
  for (let b = 0; b < n; b++) {
    const s = slots[b];
    const one = new Float64Array(nHeads * d);
    K.attentionDecode(
      q.subarray(b * nHeads * d, (b + 1) * nHeads * d),
      kCache.subarray(s * slotSize, (s + 1) * slotSize),
      vCache.subarray(s * slotSize, (s + 1) * slotSize),
      one,
      lens.subarray(b, b + 1),
      1,
      nHeads,
      nKvHeads,
      d,
      maxLen,
      0.5,
    );
    assertClose(out.subarray(b * nHeads * d, (b + 1) * nHeads * d), one, 0, 0, `query ${b}`);
  }
  assert.throws(
    () => K.attentionDecodeSlots(q, kCache, vCache, out, new Int32Array([3]), lens, 1, nHeads, nKvHeads, d, maxLen, 0.5),
    /cacheSlots\[0\] = 3 is outside 0\.\.2/,
  );
});

const GATES = [
  ["swiglu", K.swigluForward, K.swigluBackward, (z: number): number => z / (1 + Math.exp(-z))],
  ["geglu", K.gegluForward, K.gegluBackward, (z: number): number => 0.5 * z * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (z + 0.044715 * z * z * z)))],
] as const;

for (const [name, forward, backward, act] of GATES) {
  test(`${name} forward matches act(g)*u and backward matches finite differences`, () => {
    const rng = makeRng(name === "swiglu" ? 4 : 5);
    const n = 11;
    const g = randF64(n, rng, 4);
    const u = randF64(n, rng);
    const out = new Float64Array(n);
    forward(g, u, out, n);
    assertClose(
      out,
      g.map((z, i) => act(z) * u[i]),
      1e-15,
      1e-16,
      `${name} forward`,
    );
    const R = randF64(n, rng);
    const loss = (): number => {
      forward(g, u, out, n);
      return dot(out, R);
    };
    const dg = new Float64Array(n);
    const du = new Float64Array(n);
    backward(R, g, u, dg, du, n);
    assertClose(dg, numericGrad(g, loss), FD_RTOL, FD_ATOL, `${name} dgate`);
    assertClose(du, numericGrad(u, loss), FD_RTOL, FD_ATOL, `${name} dup`);
  });
}

test("swiglu saturates without NaN for large |gate|", () => {
  const g = new Float32Array([-1000, 1000, -90, 90]);
  const u = new Float32Array([1, 1, 1, 1]);
  const out = new Float32Array(4);
  K.swigluForward(g, u, out, 4);
  assertClose(out, [0, 1000, -90 / (1 + Math.exp(90)), 90], 1e-6, 1e-45, "swiglu saturation");
});

test("logprobs forward matches log_softmax and backward matches finite differences", () => {
  const rng = makeRng(5);
  const rows = 4;
  const vocab = 9;
  const logits = randF64(rows * vocab, rng, 5);
  const targets = new Int32Array([3, -1, 0, 8]);
  const lp = new Float64Array(rows);
  const lse = new Float64Array(rows);
  K.logprobsForward(logits, targets, lp, lse, rows, vocab);
  for (let r = 0; r < rows; r++) {
    let s = 0;
    for (let j = 0; j < vocab; j++) s += Math.exp(logits[r * vocab + j]);
    assert.ok(Math.abs(lse[r] - Math.log(s)) < 1e-13, `logsumexp row ${r}`);
    const expected = targets[r] < 0 ? 0 : logits[r * vocab + targets[r]] - Math.log(s);
    assert.ok(Math.abs(lp[r] - expected) < 1e-13, `logprob row ${r}: ${lp[r]} vs ${expected}`);
  }
  const dlp = randF64(rows, rng);
  const loss = (): number => {
    K.logprobsForward(logits, targets, lp, lse, rows, vocab);
    return dot(lp, dlp);
  };
  const dlogits = new Float64Array(rows * vocab).fill(3);
  K.logprobsBackward(dlp, logits, targets, lse, dlogits, rows, vocab);
  assertClose(dlogits, numericGrad(logits, loss), FD_RTOL, FD_ATOL, "logprobs dlogits");
});

test("logprobs is stable for large logits", () => {
  const logits = new Float32Array([1000, 999, -1000]);
  const lp = new Float32Array(1);
  const lse = new Float32Array(1);
  K.logprobsForward(logits, new Int32Array([1]), lp, lse, 1, 3);
  assert.ok(Math.abs(lp[0] - (-1 - Math.log1p(Math.exp(-1)))) < 1e-5, `got ${lp[0]}`);
});

test("adamw follows torch.optim.AdamW over several steps", () => {
  const rng = makeRng(6);
  const n = 8;
  const p = randF64(n, rng);
  const m = new Float64Array(n);
  const v = new Float64Array(n);
  const pRef = p.slice();
  const mRef = new Float64Array(n);
  const vRef = new Float64Array(n);
  const [lr, b1, b2, eps, wd, gs] = [1e-2, 0.9, 0.95, 1e-8, 0.1, 0.5];
  for (let t = 1; t <= 3; t++) {
    const grad = randF64(n, rng);
    K.adamw(p, grad, m, v, n, lr, b1, b2, eps, wd, t, gs);
    for (let i = 0; i < n; i++) {
      const g = grad[i] * gs;
      pRef[i] -= lr * wd * pRef[i];
      mRef[i] = b1 * mRef[i] + (1 - b1) * g;
      vRef[i] = b2 * vRef[i] + (1 - b2) * g * g;
      const mhat = mRef[i] / (1 - b1 ** t);
      const vhat = vRef[i] / (1 - b2 ** t);
      pRef[i] -= (lr * mhat) / (Math.sqrt(vhat) + eps);
    }
  }
  assertClose(p, pRef, 1e-13, 1e-15, "adamw params");
  assertClose(m, mRef, 1e-14, 1e-16, "adamw m");
  assertClose(v, vRef, 1e-14, 1e-16, "adamw v");
});

test("axpy, sumSquares, add", () => {
  const rng = makeRng(7);
  const x = randF64(13, rng);
  const y = randF64(13, rng);
  const y0 = y.slice();
  K.axpy(13, -0.3, x, y);
  assertClose(
    y,
    y0.map((b, i) => b - 0.3 * x[i]),
    1e-15,
    1e-16,
    "axpy",
  );
  assert.ok(Math.abs(K.sumSquares(x, 13) - dot(x, x)) < 1e-14);
  assert.equal(K.sumSquares(x, 0), 0);
  const out = new Float64Array(13);
  K.add(x, y, out, 13);
  assertClose(
    out,
    x.map((a, i) => a + y[i]),
    0,
    0,
    "add",
  );
  K.add(x, y, x, 13);
  assertClose(x, out, 0, 0, "add in place");
});

test("embedding gather and scatter-add", () => {
  const rng = makeRng(8);
  const rows = 5;
  const dim = 3;
  const table = randF32(rows * dim, rng);
  const ids = new Int32Array([4, 0, 4, 2]);
  const out = new Float32Array(ids.length * dim);
  K.embeddingForward(table, ids, out, ids.length, dim);
  for (let i = 0; i < ids.length; i++)
    assert.deepEqual(Array.from(out.subarray(i * dim, (i + 1) * dim)), Array.from(table.subarray(ids[i] * dim, (ids[i] + 1) * dim)));
  const dout = randF64(ids.length * dim, rng);
  const dtable = new Float64Array(rows * dim).fill(1);
  K.embeddingBackward(dout, ids, dtable, ids.length, dim);
  for (let j = 0; j < dim; j++) {
    assert.ok(Math.abs(dtable[4 * dim + j] - (1 + dout[j] + dout[2 * dim + j])) < 1e-15);
    assert.equal(dtable[1 * dim + j], 1);
  }
  assert.throws(() => K.embeddingForward(table, new Int32Array([5]), out, 1, dim), /ids\[0\] = 5 is outside the table \(5 rows\)/);
});
