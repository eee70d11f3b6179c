// A model folder holds either one `model.safetensors` or shards listed in
// `model.safetensors.index.json` ({metadata, weight_map: {tensor: shard file}}). These helpers
// read and write both layouts.
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SafetensorsError, readSafetensors, readSafetensorsHeader, type ReadPath, type Tensor } from "./reader.ts";
import { readSafetensorsResident, type ResidentTensor } from "./resident.ts";
import { writeSafetensors, type TensorToWrite, type WriteOptions } from "./writer.ts";
import { INDEX_FILE, SINGLE_FILE } from "../../hf/models.ts";

export { INDEX_FILE, SINGLE_FILE };

/** The safetensors files of a model folder, or null when it has none of the two layouts. */
export function modelWeightFiles(dir: string): { layout: "single" | "sharded"; files: string[] } | null {
  if (existsSync(join(dir, SINGLE_FILE))) return { layout: "single", files: [join(dir, SINGLE_FILE)] };
  const indexPath = join(dir, INDEX_FILE);
  if (!existsSync(indexPath)) return null;
  const map = readWeightMap(indexPath);
  return { layout: "sharded", files: [...new Set(map.values())].sort().map((f) => join(dir, f)) };
}

function readWeightMap(indexPath: string): Map<string, string> {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(indexPath, "utf8"));
  } catch (err) {
    throw new SafetensorsError(indexPath, `is not valid JSON (${(err as Error).message})`);
  }
  const wm = (json as { weight_map?: unknown } | null)?.weight_map;
  if (wm === null || typeof wm !== "object" || Array.isArray(wm)) {
    throw new SafetensorsError(indexPath, `has no "weight_map" object mapping tensor names to shard files`);
  }
  const out = new Map<string, string>();
  for (const [name, shard] of Object.entries(wm as Record<string, unknown>)) {
    if (typeof shard !== "string" || shard.includes("/") || shard.includes("\\") || shard.startsWith(".")) {
      throw new SafetensorsError(indexPath, `weight_map[${JSON.stringify(name)}] = ${JSON.stringify(shard)} is not a shard file name in the same folder`);
    }
    out.set(name, shard);
  }
  return out;
}

/** Reads every tensor of a model folder (single file or sharded); `via` as in readSafetensors. */
export function readModelSafetensors(dir: string, options: { via?: ReadPath } = {}): Map<string, Tensor> {
  return readModelFolder(dir, (file, names) => readSafetensors(file, { names, via: options.via }));
}

/** readModelSafetensors for frozen use: 16-bit matrices mapped, not widened (resident.ts). */
export function readModelSafetensorsResident(dir: string): Map<string, ResidentTensor> {
  return readModelFolder(dir, (file, names) => readSafetensorsResident(file, { names }));
}

/** Every tensor of the folder through `read` (all of a single file; a shard's listed names). */
function readModelFolder<T>(dir: string, read: (file: string, names: string[] | undefined) => Map<string, T>): Map<string, T> {
  if (existsSync(join(dir, SINGLE_FILE))) return read(join(dir, SINGLE_FILE), undefined);
  const indexPath = join(dir, INDEX_FILE);
  if (!existsSync(indexPath)) {
    throw new SafetensorsError(dir, `has neither ${SINGLE_FILE} nor ${INDEX_FILE}; a Hugging Face model folder needs one of them`);
  }
  const map = readWeightMap(indexPath);
  const byShard = new Map<string, string[]>();
  for (const [name, shard] of map) {
    const list = byShard.get(shard) ?? [];
    list.push(name);
    byShard.set(shard, list);
  }
  const out = new Map<string, T>();
  for (const [shard, names] of [...byShard.entries()].sort()) {
    const file = join(dir, shard);
    if (!existsSync(file)) {
      throw new SafetensorsError(
        indexPath,
        `lists shard ${shard} (for ${names.length} tensors, e.g. ${names[0]}) but ${file} does not exist; the download is incomplete`,
      );
    }
    const header = readSafetensorsHeader(file);
    const missing = names.filter((n) => !header.entries.has(n));
    if (missing.length > 0) {
      throw new SafetensorsError(file, `lacks ${missing.length} tensor(s) that ${INDEX_FILE} places in it, e.g. ${missing[0]}`);
    }
    for (const [name, t] of read(file, names)) out.set(name, t);
  }
  return out;
}

/**
 * Writes tensors as a model folder: one model.safetensors when they fit in `maxShardBytes`
 * (default 2 GiB), otherwise numbered shards plus the index file.
 */
export function writeModelSafetensors(dir: string, tensors: Map<string, TensorToWrite>, options: WriteOptions & { maxShardBytes?: number } = {}): number {
  const maxShard = options.maxShardBytes ?? 2 * 1024 ** 3;
  const elementBytes = (t: TensorToWrite): number => (t.data instanceof Float32Array ? (options.dtype === "BF16" ? 2 : 4) : t.data.BYTES_PER_ELEMENT);
  const names = [...tensors.keys()].sort();
  const shards: string[][] = [[]];
  let current = 0;
  for (const name of names) {
    const size = tensors.get(name)!.data.length * elementBytes(tensors.get(name)!);
    if (current > 0 && current + size > maxShard) {
      shards.push([]);
      current = 0;
    }
    shards[shards.length - 1]!.push(name);
    current += size;
  }
  if (shards.length === 1) {
    return writeSafetensors(join(dir, SINGLE_FILE), tensors, { dtype: options.dtype, metadata: { format: "pt", ...options.metadata } });
  }
  const pad = (i: number): string => String(i).padStart(5, "0");
  const weightMap: Record<string, string> = {};
  let total = 0;
  shards.forEach((shardNames, i) => {
    const file = `model-${pad(i + 1)}-of-${pad(shards.length)}.safetensors`;
    const part = new Map(shardNames.map((n) => [n, tensors.get(n)!] as const));
    total += writeSafetensors(join(dir, file), part, { dtype: options.dtype, metadata: { format: "pt", ...options.metadata } });
    for (const n of shardNames) weightMap[n] = file;
  });
  const indexTmp = join(dir, `.${INDEX_FILE}.tmp`);
  writeFileSync(indexTmp, JSON.stringify({ metadata: { total_size: total }, weight_map: weightMap }, null, 2) + "\n");
  renameSync(indexTmp, join(dir, INDEX_FILE));
  return total;
}
