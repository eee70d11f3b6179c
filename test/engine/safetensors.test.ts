import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  SafetensorsError,
  bf16ToFloat32,
  float32ToBf16,
  float32ToF16,
  readModelSafetensors,
  readSafetensors,
  readSafetensorsHeader,
  writeSafetensors,
} from "../../src/engine/safetensors/index.ts";
import { loadModelDir } from "../../src/engine/storage/loadModel.ts";
import { tempDir, tinyConfigJson, writeTinyModel } from "./helpers.ts";

/** A raw safetensors file from a header object and a data buffer. */
function rawFile(header: unknown, data: Uint8Array, headerLenOverride?: number): Buffer {
  const json = Buffer.from(JSON.stringify(header), "utf8");
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(headerLenOverride ?? json.length));
  return Buffer.concat([len, json, Buffer.from(data)]);
}

test("F32 and integer tensors round-trip exactly; header is deterministic and 8-aligned", () => {
  const { dir, cleanup } = tempDir();
  try {
    const a = Float32Array.from([1.5, -2.25, 3e-8, 1e30, 0, -0]);
    const ids = Int32Array.from([1, -2, 3]);
    const big = BigInt64Array.from([1n, -5n, 2n ** 40n]);
    const tensors = { "b.weight": { shape: [2, 3], data: a }, ids: { shape: [3], data: ids }, big: { shape: [3], data: big } };
    writeSafetensors(join(dir, "x.safetensors"), tensors, { metadata: { format: "pt" } });
    writeSafetensors(join(dir, "y.safetensors"), { big: tensors.big, ids: tensors.ids, "b.weight": tensors["b.weight"] }, { metadata: { format: "pt" } });
    const bytesX = readFileSync(join(dir, "x.safetensors"));
    assert.deepEqual(bytesX, readFileSync(join(dir, "y.safetensors")), "insertion order must not change the bytes");
    assert.equal(Number(bytesX.readBigUInt64LE(0)) % 8, 0);
    const header = readSafetensorsHeader(join(dir, "x.safetensors"));
    assert.deepEqual(header.metadata, { format: "pt" });
    for (const e of header.entries.values()) {
      const size = { F32: 4, I32: 4, I64: 8 }[e.dtype as "F32"]!;
      assert.equal((header.dataStart + e.begin) % size, 0, `${e.name} aligned`);
    }
    const back = readSafetensors(join(dir, "x.safetensors"));
    assert.deepEqual(back.get("b.weight")!.shape, [2, 3]);
    assert.deepEqual(back.get("b.weight")!.data, a);
    assert.deepEqual(back.get("ids")!.data, ids);
    assert.deepEqual(back.get("big")!.data, big);
    assert.deepEqual(readdirSync(dir).sort(), ["x.safetensors", "y.safetensors"], "no temp files left behind");
  } finally {
    cleanup();
  }
});

test("BF16 writes round to nearest even and read back within bf16 precision; F16 decodes", () => {
  const { dir, cleanup } = tempDir();
  try {
    const a = Float32Array.from({ length: 257 }, (_, i) => Math.sin(i) * 10 ** ((i % 7) - 3));
    writeSafetensors(join(dir, "bf.safetensors"), { w: { shape: [257], data: a } }, { dtype: "BF16" });
    const t = readSafetensors(join(dir, "bf.safetensors")).get("w")!;
    assert.equal(t.dtype, "BF16");
    for (let i = 0; i < a.length; i++) assert.ok(Math.abs((t.data[i] as number) - a[i]!) <= Math.abs(a[i]!) * 2 ** -8, `element ${i}`);
    // 1 + 2^-8 is exactly halfway between two bf16 values: ties go to the even mantissa (1.0).
    assert.equal(bf16ToFloat32(float32ToBf16(Float32Array.from([1 + 2 ** -8])))[0], 1);
    assert.equal(bf16ToFloat32(float32ToBf16(Float32Array.from([1 + 3 * 2 ** -8])))[0], 1 + 2 ** -6);
    assert.ok(Number.isNaN(bf16ToFloat32(float32ToBf16(Float32Array.from([NaN])))[0]!));

    const h = float32ToF16(Float32Array.from([1, -2.5, 65504, 2 ** -24, 0.1]));
    const bytes = new Uint8Array(h.buffer);
    const file = join(dir, "h.safetensors");
    writeFileSync(file, rawFile({ h: { dtype: "F16", shape: [5], data_offsets: [0, 10] } }, bytes));
    const back = readSafetensors(file).get("h")!.data as Float32Array;
    assert.deepEqual(Array.from(back.slice(0, 4)), [1, -2.5, 65504, 2 ** -24]);
    assert.ok(Math.abs(back[4]! - 0.1) < 1e-4);
  } finally {
    cleanup();
  }
});

test("corrupt and truncated files fail with the file name and the problem", () => {
  const { dir, cleanup } = tempDir();
  try {
    const data = new Uint8Array(16);
    const cases: [string, Buffer, RegExp][] = [
      ["short", Buffer.from([1, 2, 3]), /too short/],
      ["hdrlen", rawFile({ a: { dtype: "F32", shape: [4], data_offsets: [0, 16] } }, data, 10_000), /header length 10000 runs past the end of the file/],
      ["json", Buffer.concat([rawFile({}, new Uint8Array(0)).subarray(0, 8), Buffer.from("{oops")]).fill(5, 0, 1), /not valid JSON|runs past/],
      ["offsets", rawFile({ a: { dtype: "F32", shape: [8], data_offsets: [0, 32] } }, data), /out of range/],
      ["dtype", rawFile({ a: { dtype: "F33", shape: [4], data_offsets: [0, 16] } }, data), /unknown dtype "F33"/],
      ["mismatch", rawFile({ a: { dtype: "F32", shape: [3], data_offsets: [0, 16] } }, data), /needs 12 bytes but data_offsets \[0, 16\] span 16/],
      ["overlap", rawFile({ a: { dtype: "F32", shape: [3], data_offsets: [0, 12] }, b: { dtype: "F32", shape: [1], data_offsets: [8, 12] } }, data), /overlap/],
    ];
    for (const [name, bytes, re] of cases) {
      const file = join(dir, `${name}.safetensors`);
      writeFileSync(file, bytes);
      assert.throws(
        () => readSafetensors(file),
        (err: unknown) => {
          assert.ok(err instanceof SafetensorsError, `${name}: SafetensorsError`);
          assert.ok(err.message.startsWith(file), `${name}: names the file: ${err.message}`);
          assert.match(err.message, re, name);
          return true;
        },
      );
    }
    // A good file cut short: offsets now point past the end.
    const good = join(dir, "good.safetensors");
    writeSafetensors(good, { w: { shape: [64], data: new Float32Array(64) } });
    const bytes = readFileSync(good);
    writeFileSync(join(dir, "cut.safetensors"), bytes.subarray(0, bytes.length - 10));
    assert.throws(() => readSafetensors(join(dir, "cut.safetensors")), /cut\.safetensors: .*out of range.*truncated/);
  } finally {
    cleanup();
  }
});

for (const dtype of ["F32", "BF16"] as const) {
  for (const sharded of [false, true]) {
    test(`model loader reads a ${sharded ? "sharded" : "single-file"} ${dtype} model identically`, () => {
      const { dir, cleanup } = tempDir();
      try {
        const written = writeTinyModel(dir, { dtype, sharded, seed: 3 });
        if (sharded) {
          const shards = readdirSync(dir).filter((f) => /^model-\d{5}-of-\d{5}\.safetensors$/.test(f));
          assert.ok(shards.length > 1, `expected several shards, got ${readdirSync(dir).join(", ")}`);
        }
        const { config, weights } = loadModelDir(dir);
        assert.equal(config.vocabSize, 64);
        assert.equal(weights.size, written.size);
        for (const [name, t] of written) {
          const got = weights.get(name)!;
          if (dtype === "F32") assert.deepEqual(got, t.data, name);
          else {
            const expected = bf16ToFloat32(float32ToBf16(t.data));
            assert.deepEqual(got, expected, `${name} equals the bf16-rounded original`);
            for (let i = 0; i < got.length; i++) assert.ok(Math.abs(got[i]! - t.data[i]!) <= Math.abs(t.data[i]!) * 2 ** -8);
          }
        }
      } finally {
        cleanup();
      }
    });
  }
}

test("sharded index errors name the missing shard; loader rejects wrong shapes", () => {
  const { dir, cleanup } = tempDir();
  try {
    writeTinyModel(dir, { sharded: true });
    const index = JSON.parse(readFileSync(join(dir, "model.safetensors.index.json"), "utf8")) as { weight_map: Record<string, string> };
    const shard = Object.values(index.weight_map)[0]!;
    index.weight_map["model.extra.weight"] = "model-09999-of-09999.safetensors";
    writeFileSync(join(dir, "model.safetensors.index.json"), JSON.stringify(index));
    assert.throws(() => readModelSafetensors(dir), /model-09999-of-09999\.safetensors.*does not exist/);
    assert.ok(shard.length > 0);

    const { dir: d2, cleanup: c2 } = tempDir();
    try {
      writeTinyModel(d2, { configJson: tinyConfigJson() });
      writeFileSync(join(d2, "config.json"), JSON.stringify(tinyConfigJson({ intermediate_size: 48 })));
      assert.throws(() => loadModelDir(d2), /mlp\.(gate|up|down)_proj\.weight has shape \[\d+, \d+\] but config\.json implies \[\d+, \d+\]/);
    } finally {
      c2();
    }
  } finally {
    cleanup();
  }
});
