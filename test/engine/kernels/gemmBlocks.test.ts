// The packed GEMM with every block configuration the per-CPU tuner may pick (gemmTune.ts), plus the
// extremes the addon accepts, against the float64 reference on odd shapes; and the tuner itself:
// it measures once, caches per CPU and build, and honours COOKBOOK_KERNEL_TUNE=0 and COOKBOOK_GEMM.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { candidateBlocks, type GemmChoice, tuneGemm } from "../../../src/engine/kernels/gemmTune.ts";
import type { NativeKernels } from "../../../src/engine/kernels/native.ts";
import { referenceKernels as R } from "../../../src/engine/kernels/reference.ts";
import { assertWithin, makeRng, nativeOrFail, randF32 } from "./helpers.ts";

const native = nativeOrFail;

const f64 = (a: Float32Array): Float64Array => Float64Array.from(a);

/** Restores the backend and blocks a test changed. */
function keeping(N: NativeKernels, body: () => void): void {
  const backend = N.gemmBackend;
  const { kc, nc, packA } = N.gemmBlocks;
  try {
    body();
  } finally {
    N.setGemmBackend(backend);
    N.setGemmBlocks(kc, nc, packA);
  }
}

// Odd sizes around the block edges: K across several slices of the smallest kc and not a multiple
// of any, N across several stripes with a ragged last panel, M not a multiple of the 6-row kernel.
const shapes: [number, number, number][] = [
  [5, 3, 7],
  [13, 37, 9],
  [37, 97, 385],
  [131, 530, 200],
  [70, 1100, 150],
  [400, 32, 300],
];

test("packed gemm matches the reference with every candidate block size and at the extremes", () => {
  const N = native();
  const { nr } = N.gemmBlocks;
  const configs = [
    ...candidateBlocks(N.gemmBlocks),
    { kc: 8, nc: nr, packA: false },
    { kc: 2048, nc: Math.floor(4096 / nr) * nr, packA: true },
    { kc: 40, nc: 3 * nr, packA: true },
  ];
  assert.ok(configs.some((c) => c.packA) && configs.some((c) => !c.packA));
  const rng = makeRng(7);
  keeping(N, () => {
    N.setGemmBackend("packed");
    for (const [M, Nn, K] of shapes) {
      for (const tA of [false, true]) {
        for (const tB of [false, true]) {
          const A = randF32(M * K, rng);
          const B = randF32(K * Nn, rng);
          const C0 = randF32(M * Nn, rng);
          const absAB = new Float64Array(M * Nn);
          R.gemm(tA, tB, M, Nn, K, 1, f64(A).map(Math.abs), f64(B).map(Math.abs), 0, absAB);
          for (const [alpha, beta] of [
            [1, 0],
            [-0.5, 1.5],
          ] as const) {
            const expected = f64(C0);
            R.gemm(tA, tB, M, Nn, K, alpha, f64(A), f64(B), beta, expected);
            for (const { kc, nc, packA } of configs) {
              N.setGemmBlocks(kc, nc, packA);
              assert.deepEqual([N.gemmBlocks.kc, N.gemmBlocks.nc, N.gemmBlocks.packA], [kc, nc, packA]);
              const C = C0.slice();
              N.gemm(tA, tB, M, Nn, K, alpha, A, B, beta, C);
              const scale = absAB.map((ab, i) => Math.abs(alpha) * ab + Math.abs(beta * C0[i]));
              assertWithin(
                C,
                expected,
                scale,
                2e-6 * Math.sqrt(K + 1),
                1e-30,
                `kc ${kc} nc ${nc} packA ${packA} gemm ${M}x${Nn}x${K} tA=${tA} tB=${tB} alpha=${alpha} beta=${beta}`,
              );
            }
          }
        }
      }
    }
  });
});

test("setGemmBlocks refuses sizes the kernel cannot use and keeps the old ones", () => {
  const N = native();
  keeping(N, () => {
    const before = N.gemmBlocks;
    for (const [kc, nc] of [
      [0, before.nr],
      [12, before.nr],
      [4096, before.nr],
      [192, before.nr + 1],
      [192, 0],
    ]) {
      assert.throws(() => N.setGemmBlocks(kc, nc), RangeError, `kc ${kc} nc ${nc}`);
      assert.deepEqual([N.gemmBlocks.kc, N.gemmBlocks.nc], [before.kc, before.nc]);
    }
  });
});

test("tuneGemm measures once, caches the winner per CPU and build, and obeys the overrides", () => {
  const N = native();
  const home = mkdtempSync(join(tmpdir(), "gemm-tune-"));
  try {
    keeping(N, () => {
      const env = { COOKBOOK_HOME: home };
      const name = (c: GemmChoice): string => (c.backend === "openblas" ? "openblas" : `packed ${c.kc}/${c.nc}${c.packA ? " pack-A" : ""}`);
      const first = tuneGemm(N, { env, buildId: "test-build" });
      assert.equal(first.source, "measured");
      assert.deepEqual({ backend: N.gemmBackend, kc: N.gemmBlocks.kc, nc: N.gemmBlocks.nc, packA: N.gemmBlocks.packA }, first.choice);
      const dir = join(home, "cache", "kernels");
      const files = readdirSync(dir);
      assert.equal(files.length, 1, `cache files: ${files.join(", ")}`);
      const [file] = files;
      const saved = JSON.parse(readFileSync(join(dir, file), "utf8")) as { backend: string; gflopPerCpuSecond: Record<string, number> };
      assert.equal(saved.backend, first.choice.backend);
      assert.ok(Object.keys(saved.gflopPerCpuSecond).includes(name(first.choice)));
      for (const rate of Object.values(saved.gflopPerCpuSecond)) assert.ok(rate > 0.1, `rate ${rate}`);

      // A later process (same key) reads the file instead of measuring.
      N.setGemmBackend("packed");
      N.setGemmBlocks(N.gemmBlocks.defaultKc, N.gemmBlocks.defaultNc);
      const again = tuneGemm(N, { env, buildId: "test-build" });
      assert.deepEqual(again, { choice: first.choice, source: "cache" });
      assert.equal(N.gemmBackend, first.choice.backend);

      // Another build of the addon measures again (a different key, a different file).
      assert.equal(tuneGemm(N, { env: { ...env, COOKBOOK_KERNEL_TUNE: "0" }, buildId: "other" }).source, "defaults");
      if (N.gemmBackends.includes("openblas")) {
        assert.equal(tuneGemm(N, { env: { ...env, COOKBOOK_GEMM: "openblas", COOKBOOK_GEMM_KC: "192" }, buildId: "other" }).source, "fixed");
      }
      assert.equal(readdirSync(dir).length, 1, "the overrides wrote no cache file");
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
