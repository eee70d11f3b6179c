// Finds the folder of a model (config.json + safetensors, or tokenizer files) from a name, in this
// order: a local directory path, a model shipped with the project (fixtures/models/<name>, also
// spelled "cookbook/<name>"), models under COOKBOOK_HOME/models, the Hugging Face cache, and —
// when online — a download from the hub into that cache, in the cache's own layout so the Python
// tools see it too. When nothing works the error lists every place looked at and how to get it.
import { PROJECT_ROOT } from "../projectRoot.ts";
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve as resolvePath, sep } from "node:path";
import { randomBytes } from "node:crypto";
import { hfHubCacheDir } from "../hf/cache.ts";
import { downloadHubFile, hfEndpoint, HubHttpError, hubHeaders } from "../hf/download.ts";
import { INDEX_FILE, SINGLE_FILE } from "./safetensors/directory.ts";

export { hfHubCacheDir };

export type ModelSource = "local" | "fixture" | "cookbook-home" | "hf-cache" | "download";
/** "model": config.json and weights; "tokenizer": tokenizer.json or tokenizer_config.json. */
export type ModelNeed = "model" | "tokenizer";

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

export const TOKENIZER_FILES = [
  "tokenizer.json",
  "tokenizer_config.json",
  "special_tokens_map.json",
  "tokenizer.model",
  "chat_template.jinja",
  "chat_template.json",
  "generation_config.json",
];

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

/** Why `dir` cannot serve `need`, or null when it can. */
export function missingFor(dir: string, need: ModelNeed): string | null {
  if (!existsSync(dir)) return "does not exist";
  if (!statSync(dir).isDirectory()) return "is not a directory";
  if (need === "model") {
    if (!existsSync(join(dir, "config.json"))) return "has no config.json";
    if (!existsSync(join(dir, SINGLE_FILE)) && !existsSync(join(dir, INDEX_FILE))) return `has no ${SINGLE_FILE} or ${INDEX_FILE}`;
    return null;
  }
  if (!existsSync(join(dir, "tokenizer.json")) && !existsSync(join(dir, "tokenizer_config.json"))) {
    return "has no tokenizer.json or tokenizer_config.json";
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

export function hfCacheRepoDir(repoId: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(hfHubCacheDir(env), `models--${repoId.split("/").join("--")}`);
}

/**
 * The snapshot folder of a cached repo that satisfies `need`: the one refs/main points to, else
 * the most recently modified snapshot that works. Returns the reason when none does.
 */
export function findCachedModelSnapshot(repoDir: string, need: ModelNeed): { dir: string } | { reason: string } {
  if (!existsSync(repoDir)) return { reason: "does not exist" };
  const snapshots = join(repoDir, "snapshots");
  const refMain = join(repoDir, "refs", "main");
  let refProblem = "";
  if (existsSync(refMain)) {
    const rev = readFileSync(refMain, "utf8").trim();
    const dir = join(snapshots, rev);
    const why = missingFor(dir, need);
    if (why === null) return { dir };
    refProblem = `refs/main → snapshots/${rev} ${why}; `;
  }
  if (!existsSync(snapshots)) return { reason: `${refProblem}has no snapshots folder` };
  const candidates = readdirSync(snapshots)
    .filter((d) => !d.startsWith("."))
    .map((d) => join(snapshots, d))
    .filter((d) => statSync(d).isDirectory())
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  for (const dir of candidates) if (missingFor(dir, need) === null) return { dir };
  return { reason: `${refProblem}${candidates.length === 0 ? "has no snapshots" : `none of its ${candidates.length} snapshot(s) is complete (${missingFor(candidates[0]!, need)})`}` };
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
      throw new ModelNotFoundError(name, attempts, `A model folder needs ${need === "model" ? `config.json and ${SINGLE_FILE} (or ${INDEX_FILE} with its shards)` : "tokenizer.json or tokenizer_config.json"}.`);
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

  const hint = repoId !== null && !name.startsWith("cookbook/")
    ? `To get it: run \`hf download ${repoId}\` (or \`huggingface-cli download ${repoId}\`) while online, or run again online without HF_HUB_OFFLINE (set HF_TOKEN for gated models), or pass the path of a folder with config.json and ${SINGLE_FILE}.`
    : `To get it: pass the path of a folder with config.json and ${SINGLE_FILE}, a Hugging Face repo id such as "org/name", or the name of a model in ${options.fixturesDir ?? defaultFixturesDir()}.`;
  throw new ModelNotFoundError(name, attempts, hint);
}

/**
 * Downloads the files a model (or only its tokenizer) needs from the hub into the HF cache layout
 * (models--org--name/snapshots/<commit>/, refs/main). Files are written under temporary names and
 * renamed, so an interrupted download never looks complete.
 */
export async function downloadToCache(repoId: string, need: ModelNeed, env: NodeJS.ProcessEnv, options: ResolveOptions = {}): Promise<string> {
  const fetchImpl = options.fetch ?? fetch;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const headers = hubHeaders(env);
  const base = `${hfEndpoint(env)}/${repoId}/resolve/main`;
  const repoDir = hfCacheRepoDir(repoId, env);
  // What existed before, so a failed download can remove exactly the folders it made (an empty
  // models--org--name would otherwise look like a broken cache entry to every later lookup).
  const repoDirExisted = existsSync(repoDir);
  const snapshotsExisted = existsSync(join(repoDir, "snapshots"));
  const staging = join(repoDir, "snapshots", `.staging-${randomBytes(4).toString("hex")}`);
  mkdirSync(staging, { recursive: true });
  let done = false;
  let commit: string | null = null;
  const get = async (file: string, optional: boolean): Promise<boolean> => {
    try {
      const responseHeaders = await downloadHubFile(`${base}/${file}`, join(staging, file), { headers, fetch: fetchImpl, log });
      commit ??= responseHeaders.get("x-repo-commit");
      return true;
    } catch (err) {
      if (optional && err instanceof HubHttpError && err.status === 404) return false;
      throw err;
    }
  };
  try {
    await get("config.json", need === "tokenizer");
    for (const f of TOKENIZER_FILES) await get(f, true);
    if (need === "model") {
      if (!(await get(SINGLE_FILE, true))) {
        if (!(await get(INDEX_FILE, true))) throw new Error(`the repo has neither ${SINGLE_FILE} nor ${INDEX_FILE} (only safetensors checkpoints are supported)`);
        const index = JSON.parse(readFileSync(join(staging, INDEX_FILE), "utf8")) as { weight_map?: Record<string, string> };
        const shards = [...new Set(Object.values(index.weight_map ?? {}))].sort();
        for (const shard of shards) {
          if (!/^[\w.-]+\.safetensors$/.test(shard)) throw new Error(`${INDEX_FILE} names an unexpected shard file ${JSON.stringify(shard)}`);
          await get(shard, false);
        }
      }
    }
    const why = missingFor(staging, need);
    if (why !== null) throw new Error(`downloaded files are incomplete: the folder ${why}`);
    const rev = commit !== null && /^[\w.-]+$/.test(commit) ? commit : "main";
    const finalDir = join(repoDir, "snapshots", rev);
    // Files already present for this revision (e.g. a tokenizer-only fetch earlier) are kept.
    mkdirSync(finalDir, { recursive: true });
    for (const f of readdirSync(staging)) renameSync(join(staging, f), join(finalDir, f));
    mkdirSync(join(repoDir, "refs"), { recursive: true });
    writeFileSync(join(repoDir, "refs", "main"), rev);
    done = true;
    return finalDir;
  } finally {
    rmSync(staging, { recursive: true, force: true });
    if (!done) {
      if (!repoDirExisted) rmSync(repoDir, { recursive: true, force: true });
      else if (!snapshotsExisted) rmSync(join(repoDir, "snapshots"), { recursive: true, force: true });
    }
  }
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
