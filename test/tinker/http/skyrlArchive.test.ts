// Checkpoint archives as SkyRL tx serves them (found against a live SkyRL tx): a tar.gz of a PEFT
// adapter whose first entry is the directory "/", for sampler checkpoints only (weights_info
// refuses a sampler path with 400; the archive route of a training checkpoint is a 405). Download
// and export must take the archive, still refuse a damaged one, and say what to do about the
// training checkpoint.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { locateCheckpoint } from "../../../src/export/source.ts";
import { downloadCheckpoint } from "../../../src/tinker/http/download.ts";
import { HttpServiceClient } from "../../../src/tinker/http/serviceClient.ts";
import { FakeClock, MemoryLogger, startFakeServer, type FakeServer, type Reply } from "./fakeServer.ts";

/** One ustar header block. */
function tarHeader(name: string, size: number, type: "0" | "5"): Buffer {
  const h = Buffer.alloc(512);
  const put = (s: string, at: number, len: number): void => void h.write(s.slice(0, len), at, "ascii");
  put(name, 0, 100);
  put(type === "5" ? "0000755\0" : "0000644\0", 100, 8);
  put("0000000\0", 108, 8);
  put("0000000\0", 116, 8);
  put(`${size.toString(8).padStart(11, "0")}\0`, 124, 12);
  put(
    `${Math.floor(Date.now() / 1000)
      .toString(8)
      .padStart(11, "0")}\0`,
    136,
    12,
  );
  put(type, 156, 1);
  put("ustar\0", 257, 6);
  put("00", 263, 2);
  h.fill(" ", 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  put(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8);
  return h;
}

/** A tar.gz like SkyRL's: "/" first, then the files. */
function skyrlArchive(files: Record<string, Buffer>): Buffer {
  const parts = [tarHeader("/", 0, "5")];
  for (const [name, body] of Object.entries(files)) {
    parts.push(tarHeader(name, body.length, "0"), body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts));
}

const ADAPTER_CONFIG = Buffer.from(
  JSON.stringify({ peft_type: "LORA", r: 4, lora_alpha: 32, target_modules: ["q_proj"], base_model_name_or_path: "/models/tiny" }),
);
// A LoRA tensor pair in safetensors layout: an 8-byte header length, the JSON header, the data.
function adapterWeights(): Buffer {
  const header = JSON.stringify({
    "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight": { dtype: "F32", shape: [4, 2], data_offsets: [0, 32] },
    "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight": { dtype: "F32", shape: [2, 4], data_offsets: [32, 64] },
  });
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(header.length));
  return Buffer.concat([len, Buffer.from(header), Buffer.alloc(64)]);
}

async function skyrlArchiveServer(archive: Buffer): Promise<FakeServer> {
  return startFakeServer((req): Reply => {
    if (req.path === "/api/v1/weights_info")
      return { status: 400, json: { detail: "Invalid tinker path format. Expected: tinker://model_id/weights/checkpoint_id" } };
    if (req.path === "/api/v1/training_runs/m/checkpoints/final/archive")
      return { status: 302, headers: { location: `http://${req.headers.host}/api/v1/training_runs/m/checkpoints/final/download` } };
    if (req.path === "/api/v1/training_runs/m/checkpoints/final/download")
      return { status: 200, body: archive, headers: { "content-type": "application/octet-stream" } };
    if (req.path.startsWith("/api/v1/training_runs/m/checkpoints/weights/")) return { status: 405, json: { detail: "Method Not Allowed" } };
    return { status: 404, json: { detail: `no route ${req.path}` } };
  });
}

const client = (url: string): HttpServiceClient => new HttpServiceClient({ baseUrl: url, clock: new FakeClock(), logger: new MemoryLogger(), env: {} });

test("download unpacks SkyRL's sampler archive (with its '/' entry) and refuses a truncated one", async () => {
  const archive = skyrlArchive({ "adapter_config.json": ADAPTER_CONFIG, "adapter_model.safetensors": adapterWeights() });
  const root = mkdtempSync(join(tmpdir(), "skyrl-archive-"));
  const good = await skyrlArchiveServer(archive);
  const c = client(good.url);
  try {
    const { dir } = await downloadCheckpoint(c.createRestClient(), "tinker://m/final", join(root, "ok"));
    assert.deepEqual(readdirSync(dir).sort(), ["adapter_config.json", "adapter_model.safetensors"]);
    // The training checkpoint has no archive there: the error says so and what to use instead.
    await assert.rejects(
      downloadCheckpoint(c.createRestClient(), "tinker://m/weights/final", join(root, "state")),
      /HTTP 405.*archives sampler checkpoints only.*sampler checkpoint of the same name/,
    );
  } finally {
    await c.close();
    await good.close();
  }
  // Cut inside the tar (the gzip stream itself whole): damage, not a note.
  const raw = (await import("node:zlib")).gunzipSync(archive);
  const bad = await skyrlArchiveServer(gzipSync(raw.subarray(0, 1024 + 300)));
  const c2 = client(bad.url);
  try {
    await assert.rejects(downloadCheckpoint(c2.createRestClient(), "tinker://m/final", join(root, "bad")), /unpacking the archive of tinker:\/\/m\/final/);
    assert.deepEqual(readdirSync(root).sort(), ["ok"], "nothing half-unpacked is left");
  } finally {
    await c2.close();
    await bad.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test("export finds a SkyRL sampler checkpoint although weights_info refuses its path", async () => {
  const server = await skyrlArchiveServer(skyrlArchive({ "adapter_config.json": ADAPTER_CONFIG, "adapter_model.safetensors": adapterWeights() }));
  const root = mkdtempSync(join(tmpdir(), "skyrl-export-"));
  try {
    const files = await locateCheckpoint("tinker://m/final", { baseUrl: server.url, env: { COOKBOOK_HOME: root }, storeDir: join(root, "store") });
    try {
      assert.equal(files.origin, "archive");
      assert.equal(files.isLora, true);
      assert.equal(files.rank, 4);
    } finally {
      files.dispose();
    }
    // A training checkpoint's 400 from weights_info is not waved through.
    await assert.rejects(
      locateCheckpoint("tinker://m/weights/final", { baseUrl: server.url, env: { COOKBOOK_HOME: root }, storeDir: join(root, "store") }),
      /HTTP 400/,
    );
  } finally {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
});
