// get_tokenizer: one tokenizer per model name per process, found locally when possible.
// Resolution order: registered factories, an existing directory, the project's
// fixtures/models/<name>, the local HF hub cache, then the hub itself (transformers downloads into
// its own cache) unless HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE is set or setTokenizerOffline(true).
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { findCachedSnapshot, hfOffline } from "../hf/cache.ts";
import { isTokenizerDir, loadTokenizerFromDir, TokenizerLoadError, wrapTransformersTokenizer } from "./hfTokenizer.ts";
import type { Tokenizer } from "./types.ts";

export type { DecodeOptions, EncodeOptions, Tokenizer } from "./types.ts";
export { isTokenizerDir, loadTokenizerFromDir, tokenizerFromJSON, TokenizerLoadError } from "./hfTokenizer.ts";

export type TokenizerFactory = () => Tokenizer | Promise<Tokenizer>;

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const registry = new Map<string, TokenizerFactory>();
const cache = new Map<string, Promise<Tokenizer>>();
let forcedOffline = false;

/**
 * Meta gates the Llama 3 repositories; their tokenizers are public in a mirror, as the cookbook
 * does. Used only when the gated name is not available locally.
 */
const LLAMA3_MIRROR = "thinkingmachineslabinc/meta-llama-3-instruct-tokenizer";
export function tokenizerMirrorName(modelName: string): string | null {
  return modelName.startsWith("meta-llama/Llama-3") || modelName.startsWith("meta-llama/Meta-Llama-3")
    ? LLAMA3_MIRROR
    : null;
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

/** The local directory a model's tokenizer would be loaded from, or null if there is none. */
export function findLocalTokenizerDir(modelName: string, projectRoot: string = PROJECT_ROOT): string | null {
  const names = [modelName, tokenizerMirrorName(modelName)].filter((n): n is string => n !== null);
  for (const name of names) {
    if (path.isAbsolute(name) || name.startsWith(".")) {
      if (isTokenizerDir(name)) return path.resolve(name);
      continue;
    }
    if (fs.existsSync(name) && isTokenizerDir(name)) return path.resolve(name);
    const fixture = path.join(projectRoot, "fixtures", "models", name);
    if (isTokenizerDir(fixture)) return fixture;
    const cached = findCachedSnapshot(name, "tokenizer.json");
    if (cached !== null) return cached;
  }
  return null;
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
  const dir = findLocalTokenizerDir(modelName);
  if (dir !== null) return loadTokenizerFromDir(dir, modelName);
  const looksLikePath = path.isAbsolute(modelName) || modelName.startsWith(".") || !/^[^/\s]+\/[^/\s]+$/.test(modelName);
  if (looksLikePath || forcedOffline || hfOffline()) {
    throw new TokenizerLoadError(
      `no tokenizer found for "${modelName}": not a directory with tokenizer.json, not in ` +
        `fixtures/models/, not in the Hugging Face cache` +
        (looksLikePath ? "" : ", and hub downloads are disabled (offline)") +
        `; registered tokenizers: ${getRegisteredTokenizerNames().join(", ") || "none"}`,
    );
  }
  const remoteName = tokenizerMirrorName(modelName) ?? modelName;
  const { AutoTokenizer } = await import("@huggingface/transformers");
  try {
    return wrapTransformersTokenizer(modelName, await AutoTokenizer.from_pretrained(remoteName));
  } catch (err) {
    throw new TokenizerLoadError(`cannot download the tokenizer of "${remoteName}" from the hub: ${(err as Error).message}`);
  }
}
