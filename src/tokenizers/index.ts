// get_tokenizer: one tokenizer per model name per process, found locally when possible.
// Resolution order: registered factories, an existing directory, the project's
// fixtures/models/<name>, COOKBOOK_HOME/models/<name>, the local HF hub cache, then the hub itself
// (the one hub downloader, src/hf/models.ts, into the HF cache, from HF_ENDPOINT) unless HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE is set or
// setTokenizerOffline(true). When nothing works the error lists every place looked in, as the
// engine's model lookup does, so a missing model reads the same whichever is loaded first.
import { PROJECT_ROOT } from "../projectRoot.ts";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { findCachedSnapshot, hfHubCacheDir, hfOffline } from "../hf/cache.ts";
import { hfEndpoint } from "../hf/download.ts";
import { downloadToCache } from "../hf/models.ts";
import { isTokenizerDir, loadTokenizerFromDir, TokenizerLoadError } from "./hfTokenizer.ts";
import type { Tokenizer } from "./types.ts";

export type { DecodeOptions, EncodeOptions, Tokenizer } from "./types.ts";
export { isTokenizerDir, loadTokenizerFromDir, tokenizerFromJSON, TokenizerLoadError } from "./hfTokenizer.ts";

export type TokenizerFactory = () => Tokenizer | Promise<Tokenizer>;

const registry = new Map<string, TokenizerFactory>();
const cache = new Map<string, Promise<Tokenizer>>();
let forcedOffline = false;

/**
 * Meta gates the Llama 3 repositories; their tokenizers are public in a mirror, as the cookbook
 * does. Used only when the gated name is not available locally.
 */
const LLAMA3_MIRROR = "thinkingmachineslabinc/meta-llama-3-instruct-tokenizer";
export function tokenizerMirrorName(modelName: string): string | null {
  return modelName.startsWith("meta-llama/Llama-3") || modelName.startsWith("meta-llama/Meta-Llama-3") ? LLAMA3_MIRROR : null;
}

export function registerTokenizer(name: string, factory: TokenizerFactory): void {
  registry.set(name, factory);
  cache.delete(name);
}
export function unregisterTokenizer(name: string): boolean {
  cache.delete(name);
  return registry.delete(name);
}
export function isTokenizerRegistered(name: string): boolean {
  return registry.has(name);
}
export function getRegisteredTokenizerNames(): string[] {
  return [...registry.keys()];
}

/** Forbid (or allow again) hub downloads for this process; tests turn this on. */
export function setTokenizerOffline(offline: boolean): void {
  forcedOffline = offline;
}
export function clearTokenizerCache(): void {
  cache.clear();
}

interface TokenizerSearch {
  dir: string | null;
  /** Every place looked in and why it did not serve, for the error when nothing does. */
  attempts: string[];
}

function cookbookModelsDir(env: NodeJS.ProcessEnv = process.env): string {
  const home = env["COOKBOOK_HOME"] && env["COOKBOOK_HOME"].length > 0 ? env["COOKBOOK_HOME"] : path.join(os.homedir(), ".cookbook");
  return path.join(home, "models");
}

function whyNotTokenizerDir(dir: string): string {
  if (!fs.existsSync(dir)) return "does not exist";
  if (!fs.statSync(dir).isDirectory()) return "is not a directory";
  return "has no tokenizer.json";
}

/** Looks where the engine looks for models (src/engine/resolve.ts), in the same order, noting each miss. */
function searchLocalTokenizer(modelName: string, projectRoot: string): TokenizerSearch {
  const attempts: string[] = [];
  const names = [modelName, tokenizerMirrorName(modelName)].filter((n): n is string => n !== null);
  for (const name of names) {
    const isPath = path.isAbsolute(name) || name.startsWith(".");
    if (isPath || fs.existsSync(name)) {
      if (isTokenizerDir(name)) return { dir: path.resolve(name), attempts };
      attempts.push(`local directory ${path.resolve(name)}: ${whyNotTokenizerDir(name)}`);
      if (isPath) continue;
    }
    const shipped = /^[A-Za-z0-9][\w.-]*$/.test(name) ? name : /^cookbook\/([A-Za-z0-9][\w.-]*)$/.exec(name)?.[1];
    const fixture = path.join(projectRoot, "fixtures", "models", shipped ?? name);
    if (isTokenizerDir(fixture)) return { dir: fixture, attempts };
    attempts.push(`shipped models ${fixture}: ${whyNotTokenizerDir(fixture)}`);
    if (shipped !== undefined) {
      const home = path.join(cookbookModelsDir(), shipped);
      if (isTokenizerDir(home)) return { dir: home, attempts };
      attempts.push(`cookbook models ${home}: ${whyNotTokenizerDir(home)}`);
    }
    if (/^[^/\s]+\/[^/\s]+$/.test(name)) {
      const cached = findCachedSnapshot(name, "tokenizer.json");
      if (cached !== null) return { dir: cached, attempts };
      const repoDir = path.join(hfHubCacheDir(), `models--${name.replace("/", "--")}`);
      attempts.push(`Hugging Face cache ${repoDir}: ${fs.existsSync(repoDir) ? "no snapshot has tokenizer.json" : "does not exist"}`);
    }
  }
  return { dir: null, attempts };
}

/** The local directory a model's tokenizer would be loaded from, or null if there is none. */
export function findLocalTokenizerDir(modelName: string, projectRoot: string = PROJECT_ROOT): string | null {
  return searchLocalTokenizer(modelName, projectRoot).dir;
}

function notFound(modelName: string, attempts: string[], hint: string): TokenizerLoadError {
  const registered = getRegisteredTokenizerNames().join(", ") || "none";
  return new TokenizerLoadError(
    `no tokenizer found for "${modelName}". Looked in:\n${attempts.map((a) => `  - ${a}`).join("\n")}\n  - registered tokenizers: ${registered}\n${hint}`,
  );
}

export function getTokenizer(modelName: string): Promise<Tokenizer> {
  let pending = cache.get(modelName);
  if (pending === undefined) {
    pending = loadTokenizer(modelName);
    cache.set(modelName, pending);
    // A failed load is not cached, so a later call (e.g. after downloading) can succeed.
    pending.catch(() => cache.delete(modelName));
  }
  return pending;
}

async function loadTokenizer(modelName: string): Promise<Tokenizer> {
  const factory = registry.get(modelName);
  if (factory !== undefined) return await factory();
  const { dir, attempts } = searchLocalTokenizer(modelName, PROJECT_ROOT);
  if (dir !== null) return loadTokenizerFromDir(dir, modelName);
  const looksLikePath = path.isAbsolute(modelName) || modelName.startsWith(".") || !/^[^/\s]+\/[^/\s]+$/.test(modelName);
  const remoteName = tokenizerMirrorName(modelName) ?? modelName;
  if (looksLikePath) throw notFound(modelName, attempts, "A tokenizer folder needs tokenizer.json (and usually tokenizer_config.json).");
  const getIt = `To get it: run \`hf download ${remoteName}\` while online (set HF_TOKEN for gated models), or pass the path of a folder with tokenizer.json.`;
  if (forcedOffline || hfOffline()) {
    attempts.push(`download of ${remoteName} from the hub: skipped (offline${forcedOffline ? "" : ": HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set"})`);
    throw notFound(modelName, attempts, getIt);
  }
  try {
    return loadTokenizerFromDir(await downloadToCache(remoteName, "tokenizer", process.env), modelName);
  } catch (err) {
    attempts.push(`download from ${hfEndpoint()}/${remoteName}: ${(err as Error).message}`);
    throw notFound(modelName, attempts, getIt);
  }
}
