// Finds the files of a tinker:// checkpoint for export: in the embedded engine's store, or, through
// a Tinker server (`cookbook serve` or the hosted service), as the checkpoint archive the REST API
// hands out, unpacked into a temporary folder. Also reads what the checkpoint says about itself
// (LoRA or full, rank, alpha, base model) from checkpoint.json or the PEFT/HF config files.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { missingFor, resolveModel, type ResolveOptions } from "../engine/resolve.ts";
import { CheckpointStore, defaultStoreDir, LORA_ALPHA, type CheckpointMeta } from "../engine/storage/store.ts";
import { chooseEngine, createServiceClient } from "../service.ts";
import type { RestClient } from "../tinker/clients.ts";
import { APIStatusError } from "../tinker/errors.ts";
import { parseTinkerPath } from "../tinker/paths.ts";
import { ExportError } from "./folder.ts";
import { readJsonFile } from "./merged.ts";
import { readTarFiles } from "./tar.ts";

export interface CheckpointFiles {
  tinkerPath: string;
  dir: string;
  /** "store": read in place; "archive": downloaded from a server into a temporary folder. */
  origin: "store" | "archive";
  isLora: boolean;
  baseModel: string;
  /** Where the base weights were loaded from when trained (embedded store only). */
  baseModelDir?: string;
  rank: number | null;
  alpha: number;
  /** Removes a downloaded copy (no-op for the store). */
  dispose(): void;
}

export interface LocateOptions {
  /** "local" / unset (embedded engine, or TINKER_BASE_URL) or a server's http(s) URL. */
  baseUrl?: string;
  apiKey?: string;
  /** The embedded engine's checkpoint store (default $COOKBOOK_HOME/checkpoints). */
  storeDir?: string;
  env?: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
  log?: (line: string) => void;
}

/** What the files of a checkpoint folder say about it. */
export function describeCheckpointDir(dir: string, tinkerPath: string): Omit<CheckpointFiles, "origin" | "dispose"> {
  const metaFile = join(dir, "checkpoint.json");
  const meta = existsSync(metaFile) ? (readJsonFile(metaFile) as unknown as CheckpointMeta) : null;
  const adapterConfigFile = join(dir, "adapter_config.json");
  if (existsSync(join(dir, "adapter_model.safetensors"))) {
    const cfg = existsSync(adapterConfigFile) ? readJsonFile(adapterConfigFile) : {};
    const rank = typeof cfg.r === "number" ? cfg.r : (meta?.lora?.rank ?? null);
    const baseModel = meta?.base_model ?? (typeof cfg.base_model_name_or_path === "string" ? cfg.base_model_name_or_path : undefined);
    if (baseModel === undefined) throw new ExportError(`${dir}: neither checkpoint.json nor adapter_config.json names the base model`);
    if (rank === null) throw new ExportError(`${dir}: neither adapter_config.json ("r") nor checkpoint.json gives the LoRA rank`);
    const alpha = typeof cfg.lora_alpha === "number" ? cfg.lora_alpha : LORA_ALPHA;
    return { tinkerPath, dir, isLora: true, baseModel, baseModelDir: meta?.base_model_dir, rank, alpha };
  }
  if (missingFor(dir, "model") === null) {
    return { tinkerPath, dir, isLora: false, baseModel: meta?.base_model ?? tinkerPath, baseModelDir: meta?.base_model_dir, rank: null, alpha: LORA_ALPHA };
  }
  throw new ExportError(`${dir}: holds neither a LoRA adapter (adapter_model.safetensors) nor model weights (config.json + model.safetensors)`);
}

function fromStore(store: CheckpointStore, tinkerPath: string): CheckpointFiles {
  const { dir } = store.locate(tinkerPath);
  return { ...describeCheckpointDir(dir, tinkerPath), origin: "store", dispose: () => undefined };
}

interface ArchiveRestClient extends RestClient {
  getCheckpointArchiveUrlFromTinkerPath(tinkerPath: string): Promise<{ url: string; expires: Date }>;
}

function hasArchive(rest: RestClient): rest is ArchiveRestClient {
  return typeof (rest as Partial<ArchiveRestClient>).getCheckpointArchiveUrlFromTinkerPath === "function";
}

async function fromArchive(rest: RestClient, tinkerPath: string, fetchImpl: typeof fetch): Promise<CheckpointFiles> {
  if (!hasArchive(rest)) throw new ExportError("this client cannot ask for checkpoint archives");
  const { url } = await rest.getCheckpointArchiveUrlFromTinkerPath(tinkerPath);
  const res = await fetchImpl(url);
  if (!res.ok) throw new ExportError(`downloading the archive of ${tinkerPath} failed: HTTP ${res.status} from ${url.split("?")[0]}`);
  const files = readTarFiles(Buffer.from(await res.arrayBuffer()));
  const dir = mkdtempSync(join(tmpdir(), "cookbook-export-"));
  try {
    for (const [name, body] of files) writeFileSync(join(dir, name), body);
    return { ...describeCheckpointDir(dir, tinkerPath), origin: "archive", dispose: () => rmSync(dir, { recursive: true, force: true }) };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** The checkpoint's files, from wherever the engine choice says it lives. Call dispose() when done. */
export async function locateCheckpoint(tinkerPath: string, options: LocateOptions = {}): Promise<CheckpointFiles> {
  parseTinkerPath(tinkerPath);
  const env = options.env ?? process.env;
  const store = new CheckpointStore(options.storeDir ?? defaultStoreDir(env));
  if (chooseEngine({ baseUrl: options.baseUrl, apiKey: options.apiKey, env }).kind === "embedded") return fromStore(store, tinkerPath);
  const p = parseTinkerPath(tinkerPath);
  const service = await createServiceClient({ baseUrl: options.baseUrl, apiKey: options.apiKey, env });
  try {
    const rest = service.createRestClient();
    // Fails early with the server's own 404 when the checkpoint does not exist there. SkyRL tx
    // describes training checkpoints only and answers a sampler path with 400; its archive route
    // then says whether the checkpoint exists.
    try {
      await rest.getWeightsInfoByTinkerPath(tinkerPath);
    } catch (err) {
      if (!(err instanceof APIStatusError && err.status === 400 && p.kind === "sampler_weights")) throw err;
    }
    try {
      return await fromArchive(rest, tinkerPath, options.fetch ?? fetch);
    } catch (err) {
      // A server on this machine (`cookbook serve` over the same store) without archive support:
      // the files are right here.
      if (store.exists(p.modelId, p.kind, p.name)) {
        options.log?.(`note: the server gave no checkpoint archive (${(err as Error).message}); reading ${tinkerPath} from the local store ${store.root}`);
        return fromStore(store, tinkerPath);
      }
      throw new ExportError(`cannot download ${tinkerPath} from the server: ${(err as Error).message}`);
    }
  } finally {
    await service.close();
  }
}

export interface BaseModelLocation {
  dir: string;
  /** The name to write as base_model_name_or_path: the hub id when there is one, else the folder. */
  nameOrPath: string;
}

/** Finds the base model's folder (for its weights and tokenizer) the way the engine does. */
export async function locateBaseModel(files: CheckpointFiles, resolve: ResolveOptions = {}): Promise<BaseModelLocation> {
  try {
    const r = await resolveModel(files.baseModel, resolve);
    const hubId = r.source === "hf-cache" || r.source === "download" ? (r.repoId ?? files.baseModel) : null;
    return { dir: r.dir, nameOrPath: hubId ?? r.dir };
  } catch (err) {
    // A base given as a relative path may not resolve from another working directory.
    if (files.baseModelDir !== undefined && missingFor(files.baseModelDir, "model") === null) {
      return { dir: files.baseModelDir, nameOrPath: files.baseModelDir };
    }
    throw err;
  }
}
