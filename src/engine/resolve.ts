// Finds the folder of a model (config.json + safetensors, or tokenizer files) from a name, in this
// order: a local directory path, a model shipped with the project (fixtures/models/<name>, also
// spelled "cookbook/<name>"), models under COOKBOOK_HOME/models, the Hugging Face cache, and —
// when online — a download from the hub into that cache, in the cache's own layout so the Python
// tools see it too. When nothing works the error lists every place looked at and how to get it.
import { PROJECT_ROOT } from "../projectRoot.ts";
import { existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve as resolvePath, sep } from "node:path";
import { hfHubCacheDir } from "../hf/cache.ts";
import { hfEndpoint } from "../hf/download.ts";
import { downloadToCache, findCachedModelSnapshot, hfCacheRepoDir, INDEX_FILE, missingFor, ONNX_FILE, SINGLE_FILE, type ModelNeed } from "../hf/models.ts";

export { hfHubCacheDir };
export { downloadToCache, findCachedModelSnapshot, hfCacheRepoDir, missingFor, TOKENIZER_FILES, type ModelNeed } from "../hf/models.ts";

export type ModelSource = "local" | "fixture" | "cookbook-home" | "hf-cache" | "download";
export interface ResolvedModel {
  /** The name as the caller gave it. */
  name: string;
  dir: string;
  source: ModelSource;
  /** The hub repository id, for cache and download hits. */
  repoId?: string;
}

export interface ResolveOptions {
  need?: ModelNeed;
  /** Environment to read HF_HOME, HF_HUB_CACHE, HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE, COOKBOOK_HOME from. */
  env?: NodeJS.ProcessEnv;
  /** Base for relative directory paths (default process.cwd()). */
  cwd?: string;
  /** Folder of shipped models (default <repo>/fixtures/models). */
  fixturesDir?: string;
  /** Default: true unless HF_HUB_OFFLINE, TRANSFORMERS_OFFLINE or COOKBOOK_OFFLINE is set. */
  allowDownload?: boolean;
  fetch?: typeof fetch;
  /** Progress lines while downloading (default: stderr). */
  log?: (line: string) => void;
}

export class ModelNotFoundError extends Error {
  readonly modelName: string;
  readonly attempts: string[];
  constructor(modelName: string, attempts: string[], hint: string) {
    super(`model ${JSON.stringify(modelName)} not found. Looked in:\n${attempts.map((a) => `  - ${a}`).join("\n")}\n${hint}`);
    this.name = "ModelNotFoundError";
    this.modelName = modelName;
    this.attempts = attempts;
  }
}

export function defaultFixturesDir(): string {
  return join(PROJECT_ROOT, "fixtures", "models") + sep;
}

export function cookbookHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.COOKBOOK_HOME && env.COOKBOOK_HOME.length > 0 ? env.COOKBOOK_HOME : join(homedir(), ".cookbook");
}

export { hfEndpoint };

function isTruthy(v: string | undefined): boolean {
  return v !== undefined && ["1", "true", "yes", "on"].includes(v.toLowerCase());
}

function offlineReason(env: NodeJS.ProcessEnv): string | null {
  for (const key of ["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "COOKBOOK_OFFLINE"]) {
    if (isTruthy(env[key])) return `${key}=${env[key]}`;
  }
  return null;
}

function looksLikePath(name: string): boolean {
  return isAbsolute(name) || name.startsWith("./") || name.startsWith("../") || name.startsWith("~") || name === "." || name.includes("\\");
}

function expandHome(p: string): string {
  return p === "~" || p.startsWith("~/") ? join(homedir(), p.slice(1)) : p;
}

/** A valid hub repo id: "name" or "org/name" with the characters the hub allows. */
function hubRepoId(name: string): string | null {
  return /^([A-Za-z0-9][\w.-]*\/)?[A-Za-z0-9][\w.-]*$/.test(name) && !name.includes("..") ? name : null;
}

function shippedName(name: string): string | null {
  if (/^[A-Za-z0-9][\w.-]*$/.test(name)) return name;
  const m = /^cookbook\/([A-Za-z0-9][\w.-]*)$/.exec(name);
  return m ? m[1]! : null;
}

function neededFiles(need: ModelNeed): string {
  if (need === "model") return `config.json and ${SINGLE_FILE} (or ${INDEX_FILE} with its shards)`;
  if (need === "onnx") return `config.json, tokenizer.json and ${ONNX_FILE}`;
  return "tokenizer.json or tokenizer_config.json";
}

export async function resolveModel(name: string, options: ResolveOptions = {}): Promise<ResolvedModel> {
  const env = options.env ?? process.env;
  const need = options.need ?? "model";
  const cwd = options.cwd ?? process.cwd();
  const attempts: string[] = [];

  // 1. A directory path.
  const asPath = resolvePath(cwd, expandHome(name));
  if (looksLikePath(name) || existsSync(asPath)) {
    const why = missingFor(asPath, need);
    if (why === null) return { name, dir: asPath, source: "local" };
    attempts.push(`local directory ${asPath}: ${why}`);
    if (looksLikePath(name)) {
      throw new ModelNotFoundError(name, attempts, `A model folder needs ${neededFiles(need)}.`);
    }
  }

  // 2. Models shipped with the project, and 3. models kept under COOKBOOK_HOME.
  const shipped = shippedName(name);
  if (shipped !== null) {
    const fixture = join(options.fixturesDir ?? defaultFixturesDir(), shipped);
    const why = missingFor(fixture, need);
    if (why === null) return { name, dir: fixture, source: "fixture" };
    attempts.push(`shipped models ${fixture}: ${why}`);
    const home = join(cookbookHome(env), "models", shipped);
    const whyHome = missingFor(home, need);
    if (whyHome === null) return { name, dir: home, source: "cookbook-home" };
    attempts.push(`cookbook models ${home}: ${whyHome}`);
  }

  // 4. The Hugging Face cache, then 5. a download into it.
  const repoId = hubRepoId(name);
  if (repoId !== null) {
    const repoDir = hfCacheRepoDir(repoId, env);
    const cached = findCachedModelSnapshot(repoDir, need);
    if ("dir" in cached) return { name, dir: cached.dir, source: "hf-cache", repoId };
    attempts.push(`Hugging Face cache ${repoDir}: ${cached.reason}`);

    const url = `${hfEndpoint(env)}/${repoId}`;
    const offline = offlineReason(env);
    if (name.startsWith("cookbook/")) {
      attempts.push(`download from ${url}: skipped ("cookbook/" names are models shipped with the project)`);
    } else if (options.allowDownload === false || (options.allowDownload === undefined && offline !== null)) {
      attempts.push(`download from ${url}: skipped (${offline !== null ? `offline: ${offline}` : "downloads disabled"})`);
    } else {
      try {
        const dir = await downloadToCache(repoId, need, env, options);
        return { name, dir, source: "download", repoId };
      } catch (err) {
        attempts.push(`download from ${url}: ${(err as Error).message}`);
      }
    }
  }

  const hint =
    repoId !== null && !name.startsWith("cookbook/")
      ? `To get it: run \`hf download ${repoId}\` (or \`huggingface-cli download ${repoId}\`) while online, or run again online without HF_HUB_OFFLINE (set HF_TOKEN for gated models), or pass the path of a folder with ${neededFiles(need)}.`
      : `To get it: pass the path of a folder with ${neededFiles(need)}, a Hugging Face repo id such as "org/name", or the name of a model in ${options.fixturesDir ?? defaultFixturesDir()}.`;
  throw new ModelNotFoundError(name, attempts, hint);
}

export interface LocalModel {
  name: string;
  dir: string;
  source: ModelSource;
}

/** Models usable right now without a download: shipped, under COOKBOOK_HOME/models, and in the HF cache. */
export function listLocalModels(options: { env?: NodeJS.ProcessEnv; fixturesDir?: string } = {}): LocalModel[] {
  const env = options.env ?? process.env;
  const out: LocalModel[] = [];
  const scan = (root: string, source: ModelSource): void => {
    if (!existsSync(root)) return;
    for (const d of readdirSync(root).sort()) {
      const dir = join(root, d);
      if (missingFor(dir, "model") === null) out.push({ name: d, dir, source });
    }
  };
  scan(options.fixturesDir ?? defaultFixturesDir(), "fixture");
  scan(join(cookbookHome(env), "models"), "cookbook-home");
  const cache = hfHubCacheDir(env);
  if (existsSync(cache)) {
    for (const d of readdirSync(cache).sort()) {
      if (!d.startsWith("models--")) continue;
      const snap = findCachedModelSnapshot(join(cache, d), "model");
      if ("dir" in snap) out.push({ name: d.slice("models--".length).split("--").join("/"), dir: snap.dir, source: "hf-cache" });
    }
  }
  return out;
}
