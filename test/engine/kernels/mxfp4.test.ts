// MXFP4 widening (kernels/mxfp4.ts): the float32 decode against the format's definition, the bf16
// bits (TypeScript table and native kernel) against the float32 values, every code and scale.
import { test } from "node:test";
import assert from "node:assert/strict";
import { getKernels } from "../../../src/engine/kernels/index.ts";
import { bf16ToFloat32 } from "../../../src/engine/kernels/halfArray.ts";
import { FP4_VALUES, Mxfp4Matrix } from "../../../src/engine/kernels/mxfp4.ts";

/** Two experts of [3, 64]: 12 groups; every byte value occurs in the codes, scales span 0..255. */
function matrix(): Mxfp4Matrix {
  const E = 2;
  const R = 3;
  const C = 64;
  const groups = E * R * (C / 32);
  const blocks = Uint8Array.from({ length: groups * 16 }, (_, i) => (i * 37 + 11) & 255);
  const scales = Uint8Array.from({ length: groups }, (_, g) => [0, 1, 100, 120, 126, 127, 128, 140, 200, 254, 118, 123][g]!);
  return new Mxfp4Matrix(E, R, C, blocks, scales);
}

test("an expert widens to FP4_VALUES[code]·2^(scale − 127), low nibble first, rows output-major", () => {
  const m = matrix();
  const out = new Float32Array(m.rows * m.cols);
  m.dequantizeExpert(1, out);
  const G = m.cols / 32;
  for (let r = 0; r < m.rows; r++) {
    for (let c = 0; c < m.cols; c++) {
      const g = (1 * m.rows + r) * G + Math.floor(c / 32);
      const byte = m.blocks[g * 16 + Math.floor((c % 32) / 2)]!;
      const code = c % 2 === 0 ? byte & 15 : byte >> 4;
      assert.equal(out[r * m.cols + c], Math.fround(FP4_VALUES[code]! * 2 ** (m.scales[g]! - 127)));
    }
  }
  // The dense parameter layout [E, cols, rows] is the transpose per expert.
  const dense = m.toDense();
  assert.equal(dense[1 * m.cols * m.rows + 5 * m.rows + 2], out[2 * m.cols + 5]);
});

test("the bf16 bits (TypeScript and native) widen to the same float32 values", () => {
  const m = matrix();
  const n = m.rows * m.cols;
  for (let e = 0; e < m.experts; e++) {
    const f = new Float32Array(n);
    m.dequantizeExpert(e, f);
    const ts = new Uint16Array(n);
    m.widenExpertBf16(e, ts);
    assert.deepEqual(bf16ToFloat32(ts), f, `expert ${e}: TypeScript table`);
    const k = getKernels();
    if (k.mxfp4ToBf16 === undefined) continue;
    const native = new Uint16Array(n);
    m.widenExpertBf16(e, native, k);
    assert.deepEqual(native, ts, `expert ${e}: native kernel`);
  }
});

test("a row that is not whole 32-value blocks, or bytes that do not match the shape, are refused", () => {
  assert.throws(() => new Mxfp4Matrix(1, 2, 48, new Uint8Array(0), new Uint8Array(0)), /32-value blocks/);
  assert.throws(() => new Mxfp4Matrix(1, 2, 32, new Uint8Array(16), new Uint8Array(2)), /needs 32 block bytes and 2 scales/);
});
