// A Llama-3.2-1B-shaped model folder for the benchmarks (hidden 2048, ffn 8192, 32 / 8 heads,
// head_dim 64, vocab 128256, tied; `layers` of the real 16), written once to a temp folder in bf16,
// tensor by tensor (the values are a cheap pattern: they do not matter for loading or memory).
import { closeSync, existsSync, mkdirSync, openSync, renameSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { modelConfigToHfJson } from "../src/engine/storage/loadModel.ts";
import { expectedTensorShapes, shapeSize, type ModelConfig } from "../src/engine/model/config.ts";

export function llama1bConfig(layers: number): ModelConfig {
  return {
    modelType: "llama",
    vocabSize: 128256,
    hiddenSize: 2048,
    intermediateSize: 8192,
    numLayers: layers,
    numHeads: 32,
    numKvHeads: 8,
    headDim: 64,
    rmsNormEps: 1e-5,
    ropeTheta: 500000,
    ropeScaling: null,
    maxPositionEmbeddings: 131072,
    tieWordEmbeddings: true,
    attentionBias: false,
    qkNorm: false,
  };
}

/** bf16 bits of small values around ±1e-2 (a deterministic pattern). */
function bf16Pattern(n: number, salt: number): Uint16Array {
  const out = new Uint16Array(n);
  for (let i = 0; i < n; i++) out[i] = 0x3c00 + ((Math.imul(i + salt, 2654435761) >>> 24) & 0x7ff) - 0x400;
  return out;
}

/** The folder (made on first use): `shards` bf16 files, plus an index when more than one. */
export function llama1bFolder(layers: number, shards = 1): string {
  const config = llama1bConfig(layers);
  const dir = join(tmpdir(), `cookbook-bench-llama1b-${layers}l-${shards}s`);
  if (existsSync(join(dir, "config.json"))) return dir;
  mkdirSync(dir, { recursive: true });
  const shapes = [...expectedTensorShapes(config)].sort(([a], [b]) => a.localeCompare(b));
  const per = Math.ceil(shapes.length / shards);
  const weightMap: Record<string, string> = {};
  for (let s = 0; s < shards; s++) {
    const part = shapes.slice(s * per, (s + 1) * per);
    const file = shards === 1 ? "model.safetensors" : `model-${String(s + 1).padStart(5, "0")}-of-${String(shards).padStart(5, "0")}.safetensors`;
    const header: Record<string, unknown> = { __metadata__: { format: "pt" } };
    let offset = 0;
    for (const [name, shape] of part) {
      const bytes = shapeSize(shape) * 2;
      header[name] = { dtype: "BF16", shape, data_offsets: [offset, offset + bytes] };
      offset += bytes;
      weightMap[name] = file;
    }
    let json = JSON.stringify(header);
    json += " ".repeat((8 - (json.length % 8)) % 8);
    const tmp = join(dir, `.${file}.tmp`);
    const fd = openSync(tmp, "w");
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(json.length));
    writeSync(fd, len);
    writeSync(fd, json);
    part.forEach(([, shape], i) => writeSync(fd, new Uint8Array(bf16Pattern(shapeSize(shape), s * 1000 + i).buffer)));
    closeSync(fd);
    renameSync(tmp, join(dir, file));
  }
  if (shards > 1) writeFileSync(join(dir, "model.safetensors.index.json"), JSON.stringify({ metadata: {}, weight_map: weightMap }));
  writeFileSync(join(dir, "config.json"), JSON.stringify({ ...modelConfigToHfJson(config), torch_dtype: "bfloat16" }));
  return dir;
}
