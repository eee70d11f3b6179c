// `cookbook export`: a tinker:// checkpoint as a PEFT adapter folder or as a full Hugging Face model
// with the LoRA merged in, ready for transformers, PEFT, vLLM or the Hub.
import { join } from "node:path";
import { existsSync, writeFileSync } from "node:fs";
import { readModelConfig } from "../engine/storage/loadModel.ts";
import { ModelNotFoundError, type ResolveOptions } from "../engine/resolve.ts";
import {
  modelWeightFiles,
  readSafetensors,
  readSafetensorsHeader,
  writeSafetensors,
  type SafetensorsEntry,
  type TensorToWrite,
} from "../engine/safetensors/index.ts";
import { peftAdapterConfig, peftTargetModules } from "../engine/storage/store.ts";
import { isExpertFactorName, peftExpertTensors, peftPerExpertTensors } from "./expertLora.ts";
import { copyTokenizerFiles, ExportError, writeFolderAtomically } from "./folder.ts";
import { checkAdapterFitsBase, pairLoraTensors, type ExpertFit, type LoraAdapter } from "./lora.ts";
import { readJsonFile, writeMergedModel, type ExportDtype } from "./merged.ts";
import { locateBaseModel, locateCheckpoint, type BaseModelLocation, type CheckpointFiles, type LocateOptions } from "./source.ts";

export { ExportError } from "./folder.ts";
export { parseByteSize } from "./byteSize.ts";
export type { ExportDtype } from "./merged.ts";
export { readTarFiles } from "./tar.ts";
export { locateCheckpoint, type CheckpointFiles } from "./source.ts";

export interface ExportOptions extends LocateOptions {
  mode: "adapter" | "merged";
  outDir: string;
  dtype: ExportDtype;
  maxShardBytes: number;
  /** Written as base_model_name_or_path instead of the hub id or folder found for the base model. */
  baseModelName?: string;
  resolve?: ResolveOptions;
}

export interface ExportResult {
  outDir: string;
  files: string[];
  baseModelDir: string;
  baseModelNameOrPath: string;
  untiedHead: boolean;
  origin: CheckpointFiles["origin"];
}

function readAdapter(files: CheckpointFiles): { adapter: LoraAdapter; raw: Map<string, { shape: number[]; data: Float32Array }> } {
  const file = join(files.dir, "adapter_model.safetensors");
  const raw = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [name, t] of readSafetensors(file)) {
    if (!(t.data instanceof Float32Array)) throw new ExportError(`${file}: tensor ${name} is ${t.dtype}; LoRA tensors are floating point`);
    raw.set(name, { shape: t.shape, data: t.data });
  }
  return { adapter: pairLoraTensors(raw, files.rank!, files.alpha, file), raw };
}

function baseHeaderEntries(baseDir: string): Map<string, SafetensorsEntry> {
  const out = new Map<string, SafetensorsEntry>();
  for (const f of modelWeightFiles(baseDir)?.files ?? []) for (const [n, e] of readSafetensorsHeader(f).entries) out.set(n, e);
  return out;
}

export async function exportCheckpoint(tinkerPath: string, options: ExportOptions): Promise<ExportResult> {
  const files = await locateCheckpoint(tinkerPath, options);
  try {
    if (!files.isLora) {
      if (options.mode === "adapter") {
        throw new ExportError(`${tinkerPath} is a full fine-tune (every weight trained), not a LoRA; export it with --merged`);
      }
      // The checkpoint folder is a complete model: convert and re-shard it; the tokenizer comes
      // from the folder when it has one, else from the base model.
      const hasTokenizer = existsSync(join(files.dir, "tokenizer.json")) || existsSync(join(files.dir, "tokenizer_config.json"));
      const tokenizerDir = hasTokenizer ? files.dir : (await locateBaseModel(files, options.resolve)).dir;
      const written = writeFolderAtomically(options.outDir, (tmp) => {
        const r = writeMergedModel(files.dir, null, tmp, options);
        return [...r.shards, "config.json", ...copyTokenizerFiles(tokenizerDir, tmp)];
      });
      return { outDir: options.outDir, files: written, baseModelDir: files.dir, baseModelNameOrPath: files.baseModel, untiedHead: false, origin: files.origin };
    }
    const { adapter, raw } = readAdapter(files);
    if (options.mode === "adapter") return await exportAdapter(files, adapter, raw, options);
    const base = await locateBaseModel(files, options.resolve);
    const nameOrPath = options.baseModelName ?? base.nameOrPath;
    {
      let untied = false;
      const written = writeFolderAtomically(options.outDir, (tmp) => {
        const r = writeMergedModel(base.dir, adapter, tmp, options);
        untied = r.untiedHead;
        return [...r.shards, "config.json", ...copyTokenizerFiles(base.dir, tmp)];
      });
      return { outDir: options.outDir, files: written, baseModelDir: base.dir, baseModelNameOrPath: nameOrPath, untiedHead: untied, origin: files.origin };
    }
  } finally {
    files.dispose();
  }
}

/**
 * The adapter's tensors with each layer's expert factors (Tinker's w1/w3/w2) rewritten for PEFT
 * (expertLora.ts), and `config` (changed in place) naming them. Fused experts (GPT-OSS): PEFT's
 * target_parameters LoRA of the fused tensors, gate_up_proj at rank 2r with alpha 2·alpha so its
 * scale stays alpha / r. Per-expert modules (Qwen3-MoE): a LoRA pair per expert projection.
 */
function withPeftExperts(
  adapter: LoraAdapter,
  raw: Map<string, { shape: number[]; data: Float32Array }>,
  config: Record<string, unknown>,
  fused: boolean,
): Map<string, { shape: number[]; data: Float32Array }> {
  const out = new Map([...raw].filter(([name]) => !isExpertFactorName(name)));
  for (const layer of adapter.experts.values()) for (const [name, t] of (fused ? peftExpertTensors : peftPerExpertTensors)(layer)) out.set(name, t);
  config.target_modules = peftTargetModules(fused ? [...raw.keys()].filter((n) => !isExpertFactorName(n)) : out.keys());
  if (!fused) return out;
  const rank = Number(config.r);
  const alpha = Number(config.lora_alpha);
  config.target_parameters = ["mlp.experts.gate_up_proj", "mlp.experts.down_proj"];
  config.rank_pattern = { ...(config.rank_pattern as Record<string, number> | undefined), gate_up_proj: 2 * rank };
  config.alpha_pattern = { ...(config.alpha_pattern as Record<string, number> | undefined), gate_up_proj: 2 * alpha };
  return out;
}

/**
 * Whether the base stores its experts fused (GPT-OSS): from its weights when they are here, else
 * from its config.json, else (only the tokenizer on this machine) from the model's name.
 */
function fusedExperts(fit: ExpertFit | null, baseDir: string, baseModel: string): boolean {
  if (fit?.expertLayout != null) return fit.expertLayout !== "per-expert";
  if (existsSync(join(baseDir, "config.json"))) return readModelConfig(baseDir).config.moe?.gptOss !== undefined;
  return /gpt-oss/i.test(baseModel);
}

/**
 * The adapter folder. The base model's weights are only read to check the adapter fits them; when
 * they are not on this machine only its tokenizer is fetched (a few MB instead of the whole model).
 */
async function exportAdapter(
  files: CheckpointFiles,
  adapter: LoraAdapter,
  raw: Map<string, { shape: number[]; data: Float32Array }>,
  options: ExportOptions,
): Promise<ExportResult> {
  let base: BaseModelLocation;
  let fit: ExpertFit | null = null;
  try {
    base = await locateBaseModel(files, { ...options.resolve, allowDownload: false });
    fit = checkAdapterFitsBase(adapter, baseHeaderEntries(base.dir), readModelConfig(base.dir).config.tieWordEmbeddings, base.dir);
  } catch (err) {
    if (!(err instanceof ModelNotFoundError)) throw err;
    base = await locateBaseModel(files, { ...options.resolve, need: "tokenizer" });
    options.log?.(
      `note: the weights of ${files.baseModel} are not on this machine, so the adapter was not checked against them (only the tokenizer was fetched)`,
    );
  }
  const nameOrPath = options.baseModelName ?? base.nameOrPath;
  const configFile = join(files.dir, "adapter_config.json");
  const config = existsSync(configFile)
    ? readJsonFile(configFile)
    : peftAdapterConfig(nameOrPath, { rank: files.rank!, seed: 0, trainAttn: true, trainMlp: true, trainUnembed: true }, raw.keys());
  config.base_model_name_or_path = nameOrPath;
  const tensors = adapter.experts.size > 0 ? withPeftExperts(adapter, raw, config, fusedExperts(fit, base.dir, files.baseModel)) : raw;
  const written = writeFolderAtomically(options.outDir, (tmp) => {
    writeSafetensors(join(tmp, "adapter_model.safetensors"), new Map<string, TensorToWrite>(tensors), {
      dtype: options.dtype === "bf16" ? "BF16" : "F32",
      metadata: { format: "pt" },
    });
    writeFileSync(join(tmp, "adapter_config.json"), JSON.stringify(config, null, 2) + "\n");
    return ["adapter_model.safetensors", "adapter_config.json", ...copyTokenizerFiles(base.dir, tmp)];
  });
  return { outDir: options.outDir, files: written, baseModelDir: base.dir, baseModelNameOrPath: nameOrPath, untiedHead: false, origin: files.origin };
}
