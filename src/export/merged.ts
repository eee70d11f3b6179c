// A full Hugging Face model folder with a LoRA adapter merged in: W' = W + (alpha/r)·B·A for every
// adapted module, written shard by shard (the base is read one output shard at a time, so memory
// stays near one shard whatever the model's size). With tied embeddings and an adapted lm_head
// the head becomes its own tensor (the embedding itself must stay unchanged), and config.json says
// tie_word_embeddings: false.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getKernels } from "../engine/kernels/index.ts";
import { decoderTensorName, readModelConfig } from "../engine/storage/loadModel.ts";
import {
  INDEX_FILE,
  SINGLE_FILE,
  modelWeightFiles,
  readSafetensors,
  readSafetensorsHeader,
  writeSafetensors,
  type SafetensorsEntry,
  type TensorToWrite,
  type TensorValues,
} from "../engine/safetensors/index.ts";
import { ExportError } from "./folder.ts";
import { expertTensorTarget, mergeExpertFactors, type ExpertLoraLayer } from "./expertLora.ts";
import { checkAdapterFitsBase, type LoraAdapter } from "./lora.ts";

export type ExportDtype = "bf16" | "fp32";

export interface MergedWriteOptions {
  dtype: ExportDtype;
  /** Shards are cut when the next tensor would pass this many bytes. */
  maxShardBytes: number;
}

export interface MergedWriteResult {
  shards: string[];
  totalBytes: number;
  mergedModules: number;
  untiedHead: boolean;
}

interface OutputTensor {
  name: string;
  /** The base tensor it starts from (the embedding, for an untied head). */
  source: string;
  file: string;
  shape: number[];
  bytes: number;
}

const HEAD = "lm_head.weight";
const EMBED = "model.embed_tokens.weight";

function elementBytes(entry: SafetensorsEntry, dtype: ExportDtype): number {
  if (entry.dtype === "I32") return 4;
  if (entry.dtype === "I64") return 8;
  return dtype === "bf16" ? 2 : 4;
}

/** Base tensors by name with the file holding each. */
function baseEntries(baseDir: string): Map<string, SafetensorsEntry & { file: string }> {
  const files = modelWeightFiles(baseDir);
  if (files === null) throw new ExportError(`${baseDir} has neither ${SINGLE_FILE} nor ${INDEX_FILE}`);
  const out = new Map<string, SafetensorsEntry & { file: string }>();
  for (const file of files.files) {
    for (const [name, entry] of readSafetensorsHeader(file).entries) out.set(name, { ...entry, file });
  }
  return out;
}

/** The config.json to write: the base's, with the stored dtype and the tying the weights now have. */
export function mergedConfigJson(base: Record<string, unknown>, dtype: ExportDtype, untiedHead: boolean): Record<string, unknown> {
  const torchDtype = dtype === "bf16" ? "bfloat16" : "float32";
  const out: Record<string, unknown> = { ...base, torch_dtype: torchDtype };
  // transformers 5 reads "dtype"; 4.x reads "torch_dtype". Write whichever the base uses, and torch_dtype always.
  if ("dtype" in base) out.dtype = torchDtype;
  if (untiedHead) {
    out.tie_word_embeddings = false;
    // Qwen3.5's multimodal config keeps the decoder's tying in text_config.
    const text = base.text_config;
    if (typeof text === "object" && text !== null && !Array.isArray(text)) out.text_config = { ...text, tie_word_embeddings: false };
  }
  return out;
}

function shardName(i: number, n: number): string {
  const pad = (k: number): string => String(k).padStart(5, "0");
  return n === 1 ? SINGLE_FILE : `model-${pad(i + 1)}-of-${pad(n)}.safetensors`;
}

/**
 * Writes the merged weights, config.json (not the tokenizer) of `baseDir` + `adapter` into `outDir`.
 * With `adapter` null the base is re-written as it is (a full fine-tune, converted and re-sharded).
 */
export function writeMergedModel(baseDir: string, adapter: LoraAdapter | null, outDir: string, options: MergedWriteOptions): MergedWriteResult {
  const { config, json } = readModelConfig(baseDir);
  const entries = baseEntries(baseDir);
  // The adapter names modules as the engine does; a checkpoint may store them under a prefix
  // (Qwen3.5's model.language_model.), which the merged folder keeps.
  const engineName = (name: string): string => decoderTensorName(config, name) ?? name;
  let expertTensors = 0;
  if (adapter !== null) {
    const fit = checkAdapterFitsBase(adapter, new Map([...entries].map(([n, e]) => [engineName(n), e])), config.tieWordEmbeddings, baseDir);
    expertTensors = fit.expertTensors;
    if (fit.mxfp4Experts)
      throw new ExportError(
        `${baseDir} stores GPT-OSS's experts in MXFP4 and the adapter adapts them (train_mlp): a merged model needs the expert delta inside those tensors. ` +
          "Tinker's cookbook dequantizes them, adds the delta and re-quantizes to MXFP4, which rounds most of the delta away; this export refuses instead. " +
          "Export the adapter (--adapter), or merge into a bf16 copy of the base model.",
      );
  }
  // An adapted head of a tied model is its own matrix from now on (even when the file kept a copy).
  // biome-ignore lint/complexity/useOptionalChain: the explicit null check keeps the flag a boolean
  const untieHead = adapter !== null && adapter.modules.has("lm_head") && config.tieWordEmbeddings;
  const addHead = untieHead && !entries.has(HEAD);

  const outputs: OutputTensor[] = [];
  const byFile = [...entries.values()].sort((x, y) => (x.file < y.file ? -1 : x.file > y.file ? 1 : x.begin - y.begin));
  for (const e of byFile) {
    const count = e.shape.reduce((a, b) => a * b, 1);
    outputs.push({ name: e.name, source: e.name, file: e.file, shape: e.shape, bytes: count * elementBytes(e, options.dtype) });
    if (addHead && engineName(e.name) === EMBED)
      outputs.push({ name: HEAD, source: EMBED, file: e.file, shape: e.shape, bytes: count * elementBytes(e, options.dtype) });
  }

  const shards: OutputTensor[][] = [[]];
  let current = 0;
  for (const t of outputs) {
    if (current > 0 && current + t.bytes > options.maxShardBytes) {
      shards.push([]);
      current = 0;
    }
    shards[shards.length - 1]!.push(t);
    current += t.bytes;
  }

  const k = getKernels();
  const deltaFor = (name: string): { module: string } | null => {
    if (adapter === null || !name.endsWith(".weight")) return null;
    const module = engineName(name).slice(0, -".weight".length);
    return adapter.modules.has(module) ? { module } : null;
  };
  /** The layer whose expert factors fold into this tensor (GPT-OSS's fused ones, or one expert's projection), if any. */
  const expertDeltaFor = (name: string): { layer: ExpertLoraLayer; which: "gate_up_proj" | "down_proj" | "gate_proj" | "up_proj"; expert?: number } | null => {
    const target = expertTensorTarget(engineName(name));
    const layer = target === null ? undefined : adapter?.experts.get(target.module);
    return layer === undefined || target === null ? null : { layer, ...target };
  };
  let mergedExperts = 0;
  let merged = 0;
  let total = 0;
  const weightMap: Record<string, string> = {};
  const names: string[] = [];
  shards.forEach((shard, i) => {
    const file = shardName(i, shards.length);
    const tensors = new Map<string, TensorToWrite>();
    const wantedByFile = new Map<string, Set<string>>();
    for (const t of shard) wantedByFile.set(t.file, (wantedByFile.get(t.file) ?? new Set()).add(t.source));
    const read = new Map<string, TensorValues>();
    for (const [src, wanted] of wantedByFile) for (const [n, t] of readSafetensors(src, { names: wanted })) read.set(n, t.data);
    for (const t of shard) {
      let data = read.get(t.source)!;
      const d = deltaFor(t.name);
      if (d !== null) {
        if (!(data instanceof Float32Array)) throw new ExportError(`${t.file}: ${t.source} is an integer tensor; a LoRA cannot be merged into it`);
        // The untied head starts as a copy of the embedding, which is written unchanged too.
        if (t.source !== t.name) data = Float32Array.from(data);
        const m = adapter!.modules.get(d.module)!;
        k.gemm(false, false, m.outDim, m.inDim, m.rank, adapter!.scale, m.b, m.a, 1, data);
        merged++;
      }
      const x = expertDeltaFor(t.name);
      if (x !== null) {
        if (!(data instanceof Float32Array)) throw new ExportError(`${t.file}: ${t.source} is an integer tensor; the expert adapter cannot be merged into it`);
        mergeExpertFactors(k, x.layer, x.which, adapter!.scale, data, x.expert);
        mergedExperts++;
      }
      tensors.set(t.name, { shape: t.shape, data });
      weightMap[t.name] = file;
      names.push(t.name);
    }
    total += writeSafetensors(join(outDir, file), tensors, { dtype: options.dtype === "bf16" ? "BF16" : "F32", metadata: { format: "pt" } });
  });
  if (adapter !== null && merged !== adapter.modules.size) {
    throw new ExportError(`merged ${merged} of the adapter's ${adapter.modules.size} modules; the adapter does not match ${baseDir}`);
  }
  if (adapter !== null && mergedExperts !== expertTensors) {
    throw new ExportError(`merged ${mergedExperts} of the ${expertTensors} expert tensors the adapter adapts; the adapter does not match ${baseDir}`);
  }
  if (shards.length > 1) {
    const tmp = join(outDir, `.${INDEX_FILE}.tmp`);
    writeFileSync(tmp, JSON.stringify({ metadata: { total_size: total }, weight_map: weightMap }, null, 2) + "\n");
    renameSync(tmp, join(outDir, INDEX_FILE));
  }
  writeFileSync(join(outDir, "config.json"), JSON.stringify(mergedConfigJson(json, options.dtype, untieHead), null, 2) + "\n");
  const written = shards.map((_, i) => shardName(i, shards.length));
  if (shards.length > 1) written.push(INDEX_FILE);
  return { shards: written, totalBytes: total, mergedModules: merged + mergedExperts, untiedHead: untieHead };
}

export function readJsonFile(file: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  } catch (err) {
    throw new ExportError(`${file}: cannot read (${(err as Error).message})`);
  }
}
