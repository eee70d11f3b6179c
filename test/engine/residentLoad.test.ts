// Loading frozen bases with 16-bit matrices kept resident: which tensors become HalfArray views of
// the file's mapping (and that their bits are the file's), the fallbacks, the COOKBOOK_BASE_WEIGHTS
// switch, and the mapping's lifetime: it lives while any view does and is unmapped once a released
// model's and sampler's arrays are collected (the engine worker's idle collection).
import { test } from "node:test";
import assert from "node:assert/strict";
import { closeSync, openSync, readFileSync, realpathSync, truncateSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { HalfArray } from "../../src/engine/kernels/halfArray.ts";
import { baseWeightsMode, loadBaseModelDir } from "../../src/engine/storage/loadModel.ts";
import { readSafetensors, readSafetensorsResident } from "../../src/engine/safetensors/index.ts";
import { IdleCollector } from "../../src/engine/worker/idleGc.ts";
import { EngineSession } from "../../src/engine/worker/session.ts";
import { tempDir, writeTinyModel } from "./helpers.ts";

/** Mappings of `file` in this process, from /proc/self/maps (Linux: the engine's platform). */
function mappingsOf(file: string): number {
  const path = realpathSync(file);
  return readFileSync("/proc/self/maps", "utf8")
    .split("\n")
    .filter((l) => l.endsWith(` ${path}`)).length;
}

function gcFunction(): () => void {
  setFlagsFromString("--expose-gc");
  const gc: unknown = runInNewContext("gc");
  assert.equal(typeof gc, "function", "V8's gc is reachable");
  return gc as () => void;
}

/** Polls until `file` has no mapping left (finalizers run a little after the collection). */
async function waitUnmapped(file: string, collect: () => void): Promise<number> {
  for (let i = 0; i < 40 && mappingsOf(file) > 0; i++) {
    collect();
    await sleep(25);
  }
  return mappingsOf(file);
}

/** A safetensors file of the given tensors with the data section at byte 8 + headerLen. */
function rawFile(file: string, parts: [string, string, number[], Uint8Array][], headerLen: number): void {
  const header: Record<string, unknown> = {};
  let offset = 0;
  for (const [name, dtype, shape, bytes] of parts) {
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes.length] };
    offset += bytes.length;
  }
  const json = Buffer.from(JSON.stringify(header), "utf8");
  assert.ok(json.length <= headerLen);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(headerLen));
  writeFileSync(file, Buffer.concat([len, json, Buffer.alloc(headerLen - json.length, 0x20), ...parts.map((p) => p[3])]));
}

test("16-bit matrices become views of the file's mapping with its bits; vectors, F32 and odd offsets are read as float32", () => {
  const { dir, cleanup } = tempDir();
  try {
    const bits = Uint16Array.from({ length: 6 * 10 }, (_, i) => (0x3c00 + i * 37) & 0xffff);
    const bytes = new Uint8Array(bits.buffer);
    const f32 = new Uint8Array(Float32Array.from([1, 2, 3, 4]).buffer);
    const parts: [string, string, number[], Uint8Array][] = [
      ["bf", "BF16", [6, 10], bytes],
      ["h", "F16", [10, 6], bytes],
      ["vec", "BF16", [60], bytes],
      ["f", "F32", [2, 2], f32],
      ["i", "I32", [1], new Uint8Array(4)],
    ];
    for (const headerLen of [512, 513]) {
      const file = join(dir, `m${headerLen}.safetensors`);
      rawFile(file, parts, headerLen);
      const resident = readSafetensorsResident(file);
      const floats = readSafetensors(file);
      assert.deepEqual([...resident.keys()], ["bf", "h", "vec", "f", "i"]);
      for (const name of ["bf", "h"]) {
        const t = resident.get(name)!;
        if (headerLen % 2 === 0) {
          assert.ok(t.data instanceof HalfArray, `${name}: a HalfArray at an even offset`);
          assert.deepEqual(t.data.bits, bits, `${name}: the file's bits`);
          assert.equal(t.data.dtype, name === "bf" ? "bf16" : "f16");
          assert.deepEqual(t.data.widen(), floats.get(name)!.data, `${name}: widens to what the float reader gives`);
        } else {
          assert.ok(t.data instanceof Float32Array, `${name}: float32 at an odd offset (no Uint16Array view there)`);
          assert.deepEqual(t.data, floats.get(name)!.data);
        }
      }
      assert.ok(resident.get("vec")!.data instanceof Float32Array, "one-dimensional tensors are float32");
      assert.deepEqual(resident.get("f")!.data, floats.get("f")!.data);
      assert.ok(resident.get("i")!.data instanceof Int32Array);
    }
  } finally {
    cleanup();
  }
});

test("a file over 4 GiB is mapped tensor by tensor (one ArrayBuffer cannot wrap it); a tensor over 4 GiB is refused", () => {
  const { dir, cleanup } = tempDir();
  try {
    // Sparse files: a valid header, unwritten (zero) data, and real bits where a tensor lies past 4 GiB.
    const write = (file: string, header: Record<string, unknown>, dataBytes: number): number => {
      const raw = JSON.stringify(header);
      const json = Buffer.from(raw.padEnd(Math.ceil(raw.length / 8) * 8, " "), "utf8");
      const len = Buffer.alloc(8);
      len.writeBigUInt64LE(BigInt(json.length));
      writeFileSync(file, Buffer.concat([len, json]));
      truncateSync(file, 8 + json.length + dataBytes);
      return 8 + json.length;
    };
    const half = 65536 * 16384 * 2;
    const bigBytes = 2 * half;
    const tail = Uint16Array.from({ length: 6 * 10 }, (_, i) => (0x3c00 + i * 37) & 0xffff);
    const file = join(dir, "big.safetensors");
    const dataStart = write(
      file,
      {
        big: { dtype: "BF16", shape: [65536, 16384], data_offsets: [0, half] },
        big2: { dtype: "BF16", shape: [65536, 16384], data_offsets: [half, bigBytes] },
        pad: { dtype: "BF16", shape: [1, 3], data_offsets: [bigBytes, bigBytes + 6] },
        tail: { dtype: "BF16", shape: [6, 10], data_offsets: [bigBytes + 6, bigBytes + 126] },
      },
      bigBytes + 126,
    );
    const fd = openSync(file, "r+");
    writeSync(fd, new Uint8Array(tail.buffer), 0, 120, dataStart + bigBytes + 6);
    closeSync(fd);
    const t = readSafetensorsResident(file, { names: ["tail", "big"] });
    const got = t.get("tail")!.data;
    assert.ok(got instanceof HalfArray && dataStart + bigBytes + 6 > 2 ** 32);
    assert.deepEqual(Array.from(got.bits), Array.from(tail), "the bits past 4 GiB are the file's");
    assert.equal((t.get("big")!.data as HalfArray).bits.length, 65536 * 16384);
    const huge = join(dir, "huge.safetensors");
    write(huge, { w: { dtype: "BF16", shape: [65536, 32769], data_offsets: [0, 65536 * 32769 * 2] } }, 65536 * 32769 * 2);
    assert.throws(() => readSafetensorsResident(huge), /maps at most 4 GiB per tensor/);
  } finally {
    cleanup();
  }
});

test("COOKBOOK_BASE_WEIGHTS picks the mode; fp32 gives float32 arrays and keeps no mapping", () => {
  const saved = process.env.COOKBOOK_BASE_WEIGHTS;
  const { dir, cleanup } = tempDir();
  try {
    writeTinyModel(dir, { dtype: "BF16" });
    delete process.env.COOKBOOK_BASE_WEIGHTS;
    assert.equal(baseWeightsMode("native"), "resident");
    assert.equal(baseWeightsMode("reference"), "fp32", "the reference kernels would widen whole matrices per product");
    process.env.COOKBOOK_BASE_WEIGHTS = "fp32";
    assert.equal(baseWeightsMode("native"), "fp32");
    const base = loadBaseModelDir(dir, baseWeightsMode("native"));
    assert.ok([...base.weights.values()].every((w) => w instanceof Float32Array));
    assert.equal(mappingsOf(join(dir, "model.safetensors")), 0);
    process.env.COOKBOOK_BASE_WEIGHTS = "bf16";
    assert.throws(() => baseWeightsMode("native"), /COOKBOOK_BASE_WEIGHTS="bf16" is not valid; expected "fp32" .* or "auto"/);
  } finally {
    if (saved === undefined) delete process.env.COOKBOOK_BASE_WEIGHTS;
    else process.env.COOKBOOK_BASE_WEIGHTS = saved;
    cleanup();
  }
});

test("the mapping lives as long as any of its views and is unmapped after they are collected", async () => {
  const gc = gcFunction();
  const { dir, cleanup } = tempDir();
  try {
    writeTinyModel(dir, { dtype: "BF16" });
    const file = join(dir, "model.safetensors");
    let base: ReturnType<typeof loadBaseModelDir> | null = loadBaseModelDir(dir, "resident");
    let kept: HalfArray | null = base.weights.get("model.layers.0.mlp.up_proj.weight") as HalfArray;
    assert.equal(mappingsOf(file), 1, "one mapping for the whole file");
    base = null;
    gc();
    await sleep(50);
    gc();
    assert.equal(mappingsOf(file), 1, "a view still in use keeps the mapping");
    assert.ok(kept.widen().every(Number.isFinite), "and its values stay readable");
    kept = null;
    assert.equal(await waitUnmapped(file, gc), 0, "unmapped once no view is left");
  } finally {
    cleanup();
  }
});

test("the engine session releases a base's mapping once its models and samplers are released and the worker is idle", async () => {
  const { dir, cleanup } = tempDir();
  const store = tempDir();
  const saved = process.env.COOKBOOK_BASE_WEIGHTS;
  delete process.env.COOKBOOK_BASE_WEIGHTS;
  try {
    writeTinyModel(join(dir, "m"), { dtype: "BF16" });
    const file = join(dir, "m", "model.safetensors");
    const session = new EngineSession(store.dir, "native", new IdleCollector(10));
    session.dispatch({
      op: "createModel",
      modelId: "t-1",
      baseModel: "m",
      source: { kind: "dir", dir: join(dir, "m") },
      setup: { mode: "lora", rank: 2, seed: 0, trainAttn: true, trainMlp: true, trainUnembed: true },
      record: false,
    });
    session.dispatch({ op: "createSampler", samplerId: "s-1", source: { kind: "snapshot", modelId: "t-1" } });
    assert.equal(mappingsOf(file), 1, "the base is mapped, not copied");
    session.dispatch({ op: "unload", modelId: "t-1" });
    await sleep(100);
    assert.equal(mappingsOf(file), 1, "the sampler still uses the base");
    session.dispatch({ op: "releaseSampler", samplerId: "s-1" });
    // The idle collector runs one full collection 10 ms after the release; then finalizers unmap.
    let left = mappingsOf(file);
    for (let i = 0; i < 80 && left > 0; i++) {
      await sleep(25);
      left = mappingsOf(file);
    }
    assert.equal(left, 0, "unmapped by the idle collection");
  } finally {
    if (saved !== undefined) process.env.COOKBOOK_BASE_WEIGHTS = saved;
    store.cleanup();
    cleanup();
  }
});
