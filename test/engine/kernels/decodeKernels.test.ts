// The sampler's native kernels (gemmRowsNT, kvStore, sampleRows) against the reference and
// choose.ts: every row count a decode step can have, odd shapes, and the draw semantics.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadNativeKernels, type NativeKernels } from "../../../src/engine/kernels/native.ts";
import { HalfArray } from "../../../src/engine/kernels/halfArray.ts";
import { referenceKernels as R } from "../../../src/engine/kernels/reference.ts";
import { chooseToken } from "../../../src/engine/sampling/choose.ts";
import { uniformAt } from "../../../src/engine/sampling/rng.ts";
import { assertClose, checkGemmNT, makeRng, randF32 } from "./helpers.ts";

function native(): NativeKernels {
  try {
    return loadNativeKernels();
  } catch (err) {
    assert.fail(`native kernel addon did not build or load: ${err instanceof Error ? err.message : String(err)}`);
  }
}

test("gemmRowsNT matches the reference gemm for 1..64 rows, odd N and K, alpha and beta", () => {
  const N = native();
  // K around the 5+-row kernel's steps (32 values of k with AVX-512) and chunks (24 steps): 768 is
  // one whole chunk, 769 a chunk and a tail alone in the second, 1536 two whole chunks; K = 0 is
  // beta * C.
  checkGemmNT(
    { native: N.gemmRowsNT.bind(N) },
    [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 64],
    [
      [1, 1],
      [37, 19],
      [9, 1100],
      [64, 576],
      [50, 2049],
      [13, 4100],
      [200, 33],
      [5, 768],
      [3, 769],
      [7, 1536],
      [11, 31],
      [4, 0],
    ],
    7,
  );
});

test("gemmRowsNT: beta 0 ignores NaN in C; a row's bits do not depend on the rows beside it or their number", () => {
  const N = native();
  const rng = makeRng(8);
  const [n, k] = [70, 300];
  const W = randF32(n * k, rng);
  const A = randF32(64 * k, rng);
  const C = new Float32Array(64 * n).fill(NaN);
  N.gemmRowsNT(64, n, k, 1, A, W, 0, C);
  assert.ok(C.every(Number.isFinite));
  // The last row of every product, computed with different company (groups of 8 rows, tail
  // groups of 1-7, blocks of 2-6 weight rows), against the same row alone.
  const lastRow = (M: number): Float32Array => {
    const out = new Float32Array(M * n);
    N.gemmRowsNT(M, n, k, 1, A.subarray(0, M * k), W, 0, out);
    return out.subarray((M - 1) * n);
  };
  const alone = (M: number): Float32Array => {
    const out = new Float32Array(n);
    N.gemmRowsNT(1, n, k, 1, A.subarray((M - 1) * k, M * k), W, 0, out);
    return out;
  };
  for (const M of [2, 3, 4, 5, 6, 8, 9, 12, 16, 17, 33, 64]) assert.deepEqual(lastRow(M), alone(M), `row ${M - 1} among ${M} rows vs alone`);
});

test("gemmRowsNT and kvStore: wrong sizes and slots are refused with the argument named", () => {
  const N = native();
  assert.throws(
    () => N.gemmRowsNT(2, 3, 4, 1, new Float32Array(8), new Float32Array(11), 0, new Float32Array(6)),
    /gemmRowsNT: argument W has 11 elements but needs at least 12/,
  );
  const k = new Float32Array(2 * 4);
  const cache = new Float32Array(3 * 2 * 5 * 4);
  assert.throws(() => N.kvStore(k, k, cache, cache, Int32Array.of(3), Int32Array.of(0), 1, 2, 4, 5), /kvStore: cacheSlots\[0\] = 3 is outside 0..2/);
  assert.throws(() => N.kvStore(k, k, cache, cache, Int32Array.of(0), Int32Array.of(5), 1, 2, 4, 5), /kvStore: positions\[0\] = 5 is outside 0..4/);
});

test("kvStore writes the rows where the reference does", () => {
  const N = native();
  const rng = makeRng(9);
  const [n, hkv, d, maxLen, slots] = [5, 3, 8, 7, 4];
  const k = randF32(n * hkv * d, rng);
  const v = randF32(n * hkv * d, rng);
  const slotOf = Int32Array.of(3, 0, 3, 1, 2);
  const pos = Int32Array.of(0, 6, 1, 3, 2);
  const [kc, vc, kr, vr] = [0, 1, 2, 3].map(() => new Float32Array(slots * hkv * maxLen * d));
  N.kvStore(k, v, kc, vc, slotOf, pos, n, hkv, d, maxLen);
  R.kvStore(k, v, kr, vr, slotOf, pos, n, hkv, d, maxLen);
  assert.deepEqual(kc, kr);
  assert.deepEqual(vc, vr);
  assert.ok(kc.some((x) => x !== 0));
});

test("f16 KV cache: kvStore rounds like float32ToF16 (nearest even, huge values to infinity), the attention reads what the reference reads", () => {
  const N = native();
  const rng = makeRng(21);
  // head_dim 72: four 16-wide vectors and a tail the scalar rounding handles.
  const [n, hkv, heads, d, maxLen, slots] = [6, 2, 6, 72, 40, 3];
  const k = randF32(n * hkv * d, rng, 3);
  const v = randF32(n * hkv * d, rng);
  // Values at the edges of f16: ties, subnormals, overflow.
  k.set([65500, -70000, 1e-7, 2 ** -14, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 2 ** -25, -(2 ** -24) * 1.5], 0);
  const slotOf = Int32Array.of(2, 0, 2, 1, 0, 2);
  const pos = Int32Array.of(0, 0, 1, 0, 1, 2);
  const size = slots * hkv * maxLen * d;
  const [kc, vc, kr, vr] = [0, 1, 2, 3].map(() => new HalfArray("f16", new Uint16Array(size)));
  N.kvStore(k, v, kc, vc, slotOf, pos, n, hkv, d, maxLen);
  R.kvStore(k, v, kr, vr, slotOf, pos, n, hkv, d, maxLen);
  assert.deepEqual(kc.bits, kr.bits);
  assert.deepEqual(vc.bits, vr.bits);
  const kw = kc.widen();
  assert.deepEqual(
    [...kw.subarray(2 * hkv * maxLen * d, 2 * hkv * maxLen * d + 8)],
    [65504, -Infinity, 1.1920928955078125e-7, 2 ** -14, 1, 1 + 2 ** -9, 0, -(2 ** -23)],
  );
  // Float32 K/V stored the same way read back as the f16 values: the f16 attention equals the
  // float32 kernel on the widened cache, up to the summation order.
  const q = randF32(n * heads * d, rng, 2);
  const lens = Int32Array.of(3, 2, 3, 1, 2, 3);
  const out = new Float32Array(n * heads * d);
  const outR = new Float32Array(n * heads * d);
  N.attentionDecodeSlots(q, kc, vc, out, slotOf, lens, n, heads, hkv, d, maxLen, 0.125);
  R.attentionDecodeSlots(q, kr, vr, outR, slotOf, lens, n, heads, hkv, d, maxLen, 0.125);
  assert.ok(out.every((x) => Number.isFinite(x)) || out.some((x) => !Number.isFinite(x)) === outR.some((x) => !Number.isFinite(x)));
  const finite = (a: Float32Array): number[] => [...a].map((x) => (Number.isFinite(x) ? x : 0));
  assertClose(finite(out), finite(outR), 1e-5, 1e-6, "f16 attentionDecodeSlots");
  const widened = new Float32Array(n * heads * d);
  N.attentionDecodeSlots(q, kc.widen(), vc.widen(), widened, slotOf, lens, n, heads, hkv, d, maxLen, 0.125);
  assert.deepEqual(out, widened, "the f16 kernel computes what the float32 one does on the widened cache");
  assert.throws(() => N.kvStore(k, v, kc, new Float32Array(size), slotOf, pos, n, hkv, d, maxLen), /must both be float32 or both f16/);
});

test("attentionDecodeSlots with a shared prefix slot equals the prefix copied into each slot, bit for bit (f32 and f16, windows)", () => {
  const N = native();
  const rng = makeRng(33);
  const [hkv, heads, d, maxLen, slots] = [2, 6, 72, 48, 5];
  const size = slots * hkv * maxLen * d;
  // Slot 0 holds a 21-position prompt; slots 1..4 hold only what their samples generated after it
  // (positions 21..lens-1), and the copied variant has the prompt in every slot as well.
  const P = 21;
  const lens = Int32Array.of(22, 29, 25, 40, 23);
  const base = randF32(size, rng, 2);
  const baseV = randF32(size, rng);
  const own = (src: Float32Array): Float32Array => {
    const a = Float32Array.from(src);
    for (let s = 1; s < slots; s++) for (let g = 0; g < hkv; g++) a.fill(0, (s * hkv + g) * maxLen * d, ((s * hkv + g) * maxLen + P) * d);
    return a;
  };
  const copied = (src: Float32Array): Float32Array => {
    const a = own(src);
    for (let s = 1; s < slots; s++) for (let g = 0; g < hkv; g++) a.set(src.subarray(g * maxLen * d, (g * maxLen + P) * d), (s * hkv + g) * maxLen * d);
    return a;
  };
  const n = slots;
  const slotOf = Int32Array.of(0, 1, 2, 3, 4);
  const prefixSlots = new Int32Array(n);
  const prefixLens = Int32Array.of(0, P, P, P, P);
  const q = randF32(n * heads * d, rng, 2);
  const f16 = (a: Float32Array): HalfArray => {
    const h = new HalfArray("f16", new Uint16Array(a.length));
    const all = Int32Array.from({ length: a.length / d }, (_, i) => i);
    // One "position" per row of d values in a one-head, one-slot view: rounds every value.
    N.kvStore(a, a, h, new HalfArray("f16", new Uint16Array(a.length)), new Int32Array(all.length), all, all.length, 1, d, all.length);
    return h;
  };
  for (const window of [0, 4, 9, 30]) {
    for (const kind of ["f32", "f16"] as const) {
      const [ks, vs] = kind === "f32" ? [own(base), own(baseV)] : [f16(own(base)), f16(own(baseV))];
      const [kc, vc] = kind === "f32" ? [copied(base), copied(baseV)] : [f16(copied(base)), f16(copied(baseV))];
      const want = new Float32Array(n * heads * d);
      N.attentionDecodeSlots(q, kc, vc, want, slotOf, lens, n, heads, hkv, d, maxLen, 0.125, window);
      const got = new Float32Array(n * heads * d);
      N.attentionDecodeSlots(q, ks, vs, got, slotOf, lens, n, heads, hkv, d, maxLen, 0.125, window, null, prefixSlots, prefixLens);
      assert.deepEqual(got, want, `native ${kind} window ${window}`);
      const refWant = new Float32Array(n * heads * d);
      R.attentionDecodeSlots(q, kc, vc, refWant, slotOf, lens, n, heads, hkv, d, maxLen, 0.125, window);
      const refGot = new Float32Array(n * heads * d);
      R.attentionDecodeSlots(q, ks, vs, refGot, slotOf, lens, n, heads, hkv, d, maxLen, 0.125, window, null, prefixSlots, prefixLens);
      assert.deepEqual(refGot, refWant, `reference ${kind} window ${window}`);
      assertClose(got, refGot, 1e-5, 1e-6, `native against reference, ${kind} window ${window}`);
      // Without the prefix the own slots' zeros are read: the prefix is what made them equal.
      const without = new Float32Array(n * heads * d);
      N.attentionDecodeSlots(q, ks, vs, without, slotOf, lens, n, heads, hkv, d, maxLen, 0.125, window);
      assert.notDeepEqual(without, want, `${kind} window ${window}: the own slots lack the prompt`);
    }
  }
  const call = (slotsOfPrefix: Int32Array, lensOfPrefix: Int32Array) => () =>
    N.attentionDecodeSlots(
      q,
      own(base),
      own(baseV),
      new Float32Array(n * heads * d),
      slotOf,
      lens,
      n,
      heads,
      hkv,
      d,
      maxLen,
      0.125,
      0,
      null,
      slotsOfPrefix,
      lensOfPrefix,
    );
  assert.throws(call(prefixSlots, Int32Array.of(0, P, P, 41, P)), /prefixLens\[3\] = 41 must be in 0..cacheLens\[3\] \(40\)/);
  assert.throws(call(Int32Array.of(0, 0, 9, 0, 0), prefixLens), /prefixSlots\[2\] = 9 is outside 0..4/);
});

test("allocPages: zeroed, page-aligned memory; releasePages gives back the whole pages inside a view, which read as zeros", () => {
  const N = native();
  const page = 4096;
  const buf = N.allocPages(3 * page);
  assert.equal(buf.byteLength, 3 * page);
  const a = new Float32Array(buf);
  assert.ok(a.every((x) => x === 0));
  a.fill(1.5);
  // From byte 4 on, the first page is not whole inside the view: only pages 2 and 3 go.
  assert.equal(N.releasePages(a.subarray(1)), 2 * page);
  assert.ok(
    a.subarray(0, page / 4).every((x) => x === 1.5),
    "the partial first page keeps its values",
  );
  assert.ok(
    a.subarray(page / 4).every((x) => x === 0),
    "released pages read as zeros",
  );
  a.fill(2);
  assert.equal(N.releasePages(a), 3 * page, "the buffer starts on a page: all three pages go");
  assert.ok(a.every((x) => x === 0));
  assert.equal(N.allocPages(0).byteLength, 0);
  assert.throws(() => N.releasePages(buf as unknown as Float32Array), /argument view must be a typed array/);
});

test("sampleRows draws the token choose.ts draws, with its logprob, at temperatures 0 to 2", () => {
  const N = native();
  const sample = N.sampleRows;
  assert.ok(sample !== undefined);
  for (const V of [5, 17, 1000, 49152]) {
    const rows = 8;
    const logits = new Float32Array(rows * V);
    for (let i = 0; i < logits.length; i++) logits[i] = (uniformAt(V, i) - 0.5) * 12;
    for (const T of [0, 0.5, 1, 2]) {
      const temps = new Float32Array(rows).fill(T);
      const us = Float64Array.from({ length: rows }, (_, r) => uniformAt(99 + T, r));
      const tokens = new Int32Array(rows);
      const lps = new Float64Array(rows);
      sample(logits, rows, V, temps, us, tokens, lps);
      for (let r = 0; r < rows; r++) {
        const want = chooseToken(logits.subarray(r * V, (r + 1) * V), { temperature: T, topK: -1, topP: 1 }, us[r]);
        assert.equal(tokens[r], want.token, `V=${V} T=${T} row ${r}`);
        assert.ok(Math.abs(lps[r] - want.logprob) < 1e-5, `V=${V} T=${T} row ${r}: logprob ${lps[r]} vs ${want.logprob}`);
      }
    }
  }
});

test("sampleRows: per-row temperatures, -inf logits never drawn, u close to 1 takes the last possible token", () => {
  const N = native();
  const V = 6;
  const z = Float32Array.from([0, -Infinity, 1, -Infinity, 0.5, -Infinity, 3, 2, 1, 0, -1, -2]);
  const tokens = new Int32Array(2);
  const lps = new Float64Array(2);
  N.sampleRows?.(z, 2, V, Float32Array.of(1, 0), Float64Array.of(0.9999999999, 0.3), tokens, lps);
  assert.equal(tokens[0], 4, "the last token with nonzero weight");
  assert.equal(tokens[1], 0, "temperature 0: argmax");
  const lse = Math.log(Math.exp(0) + Math.exp(1) + Math.exp(0.5));
  assert.ok(Math.abs(lps[0] - (0.5 - lse)) < 1e-6);
  assert.throws(() => N.sampleRows?.(z, 2, V, Float32Array.of(1, -1), Float64Array.of(0.5, 0.5), tokens, lps), /sampleRows: temperatures\[1\] must be >= 0/);
});
