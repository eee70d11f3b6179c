// The two read paths of the safetensors reader give the same tensors: the native one (the addon
// maps the file and converts on every core) and positioned reads with TypeScript conversion.
// Every stored type, special values, a data section at an odd offset, and sharded folders.
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { readModelSafetensors, readSafetensors, type Tensor } from "../../src/engine/safetensors/index.ts";
import { nativeFileReader } from "../../src/engine/safetensors/nativeRead.ts";
import { tempDir, writeTinyModel } from "./helpers.ts";

/** Equal element for element, NaN equal to NaN, +0 and −0 told apart. */
function sameValues(a: Tensor, b: Tensor, what: string): void {
  assert.equal(a.dtype, b.dtype, `${what}: dtype`);
  assert.deepEqual(a.shape, b.shape, `${what}: shape`);
  assert.equal(a.data.constructor, b.data.constructor, `${what}: array type`);
  assert.equal(a.data.length, b.data.length, `${what}: length`);
  for (let i = 0; i < a.data.length; i++) {
    const x = a.data[i];
    const y = b.data[i];
    if (!(Object.is(x, y) || (typeof x === "number" && typeof y === "number" && Number.isNaN(x) && Number.isNaN(y)))) {
      assert.fail(`${what}[${i}]: ${String(x)} vs ${String(y)}`);
    }
  }
}

/** A file with the given header and data, its header padded to `headerLen` bytes (odd: unaligned data). */
function rawFile(file: string, header: Record<string, unknown>, data: Uint8Array, headerLen: number): void {
  const json = Buffer.from(JSON.stringify(header), "utf8");
  assert.ok(json.length <= headerLen);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(headerLen));
  writeFileSync(file, Buffer.concat([len, json, Buffer.alloc(headerLen - json.length, 0x20), Buffer.from(data)]));
}

/** A file of the named tensors [name, dtype, shape, bytes] back to back, through rawFile. */
function tensorsFile(file: string, parts: [string, string, number[], Uint8Array][], headerLen: number, metadata?: Record<string, string>): void {
  const header: Record<string, unknown> = metadata === undefined ? {} : { __metadata__: metadata };
  let offset = 0;
  for (const [name, dtype, shape, bytes] of parts) {
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes.length] };
    offset += bytes.length;
  }
  rawFile(file, header, Buffer.concat(parts.map((p) => p[3])), headerLen);
}

test("native and positioned reads agree on every dtype, every f16 and bf16 bit pattern, at an unaligned data offset", () => {
  assert.ok(nativeFileReader(true) !== null, "the native reader is available");
  const { dir, cleanup } = tempDir();
  try {
    const all16 = new Uint16Array(65536).map((_, i) => i);
    const f32 = Float32Array.from([1.5, -0, 0, Infinity, -Infinity, NaN, 1e-45, 3.4e38, -2.5e-39]);
    const f64 = Float64Array.from([1 / 3, -0, 1e300, -1e-300, NaN, Infinity, 2 ** -149, 0.1]);
    const i32 = Int32Array.from([1, -2, 2 ** 31 - 1]);
    const i64 = BigInt64Array.from([1n, -(2n ** 62n)]);
    const parts: [string, string, number[], Uint8Array][] = [
      ["bf", "BF16", [256, 256], new Uint8Array(all16.buffer)],
      ["h", "F16", [65536], new Uint8Array(all16.buffer)],
      ["f", "F32", [9], new Uint8Array(f32.buffer)],
      ["d", "F64", [2, 4], new Uint8Array(f64.buffer)],
      ["i", "I32", [3], new Uint8Array(i32.buffer)],
      ["l", "I64", [2], new Uint8Array(i64.buffer)],
    ];
    const file = join(dir, "all.safetensors");
    tensorsFile(file, parts, 1001, { format: "pt" });
    const native = readSafetensors(file, { via: "native" });
    const positioned = readSafetensors(file, { via: "positioned" });
    assert.deepEqual([...native.keys()], [...positioned.keys()]);
    for (const [name, t] of positioned) sameValues(native.get(name) as Tensor, t, name);
    // Spot checks that the conversions are the real ones, not merely equal to each other.
    const h = native.get("h")?.data as Float32Array;
    assert.deepEqual([h[0x3c00], h[0xc500], h[0x7bff], h[0x0001], h[0x7c00]], [1, -5, 65504, 2 ** -24, Infinity]);
    assert.ok(Object.is(h[0x8000], -0) && Number.isNaN(h[0x7e00]));
    const bf = native.get("bf")?.data as Float32Array;
    assert.deepEqual([bf[0x3f80], bf[0xc020], bf[0x0001]], [1, -2.5, 2 ** -133]);
    assert.ok(Math.abs((native.get("d")!.data as Float32Array)[0] - 1 / 3) < 1e-7);
    // A subset, in the order asked for.
    assert.deepEqual([...readSafetensors(file, { names: ["l", "bf"], via: "native" }).keys()], ["l", "bf"]);
  } finally {
    cleanup();
  }
});

test("native reads of tensors that span several conversion groups (8M elements each, pages dropped after each) equal positioned reads", () => {
  const { dir, cleanup } = tempDir();
  try {
    // 9.5M bf16 elements then 3M F16 then 5 F32, at an odd data offset: group edges fall inside a
    // tensor, between tensors and off page boundaries, so pages a later group still reads are
    // dropped after the earlier one and must be read back from the page cache.
    // Finite values only (no NaN payloads to tell apart), so whole arrays can be compared as bytes.
    const big = new Uint16Array(9_500_000).map((_, i) => (((i * 2654435761) >>> 16) & 0x3fff) | ((i & 1) << 15));
    const mid = new Uint16Array(3_000_000).map((_, i) => (i * 40503) & 0x7bff);
    const tail = Float32Array.from([1, -2, 3.5, -0, 7]);
    const parts: [string, string, number[], Uint8Array][] = [
      ["big", "BF16", [9_500_000], new Uint8Array(big.buffer)],
      ["mid", "F16", [3_000, 1_000], new Uint8Array(mid.buffer)],
      ["tail", "F32", [5], new Uint8Array(tail.buffer)],
    ];
    const file = join(dir, "big.safetensors");
    tensorsFile(file, parts, 333);
    const native = readSafetensors(file, { via: "native" });
    const positioned = readSafetensors(file, { via: "positioned" });
    const bytes = (t: Tensor | undefined): Buffer => {
      assert.ok(t !== undefined && t.data instanceof Float32Array);
      return Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    };
    for (const [name, t] of positioned) assert.ok(bytes(native.get(name)).equals(bytes(t)), name);
    assert.equal(native.get("big")?.data.length, 9_500_000, "more elements than one group holds");
  } finally {
    cleanup();
  }
});

test("native and positioned reads agree on single-file and sharded model folders, F32 and BF16", () => {
  for (const dtype of ["F32", "BF16"] as const) {
    for (const sharded of [false, true]) {
      const { dir, cleanup } = tempDir();
      try {
        const written = writeTinyModel(dir, { dtype, sharded });
        const native = readModelSafetensors(dir, { via: "native" });
        const positioned = readModelSafetensors(dir, { via: "positioned" });
        assert.equal(native.size, written.size);
        for (const [name, t] of positioned) sameValues(native.get(name) as Tensor, t, `${dtype}${sharded ? " sharded" : ""} ${name}`);
        if (dtype === "F32") for (const [name, w] of written) assert.deepEqual(native.get(name)?.data, w.data, name);
      } finally {
        cleanup();
      }
    }
  }
});
