// Model repositories in the local Hugging Face hub cache and on the hub: which files a model folder
// needs (config and safetensors weights, or only its tokenizer), the cached snapshot that has them,
// and the download of exactly those files into the cache in huggingface_hub's layout
// (models--org--name/snapshots/<commit>/, refs/main), so the Python tools find them too. The
// engine's model lookup and the tokenizer lookup both download through here.
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { hfHubCacheDir } from "./cache.ts";
import { downloadHubFile, hfEndpoint, HubHttpError, hubHeaders } from "./download.ts";

/** A model's weights: one file, or an index naming its shards. */
export const SINGLE_FILE = "model.safetensors";
export const INDEX_FILE = "model.safetensors.index.json";

export const TOKENIZER_FILES = [
  "tokenizer.json",
  "tokenizer_config.json",
  "special_tokens_map.json",
  "tokenizer.model",
  "chat_template.jinja",
  "chat_template.json",
  "generation_config.json",
];

/** An encoder exported for onnxruntime, where `@huggingface/transformers` looks for it. */
export const ONNX_FILE = "onnx/model.onnx";

/**
 * "model": config.json and safetensors weights; "tokenizer": tokenizer.json or
 * tokenizer_config.json; "onnx": config.json, a tokenizer and onnx/model.onnx (an embedding model).
 */
export type ModelNeed = "model" | "tokenizer" | "onnx";

/** Why `dir` cannot serve `need`, or null when it can. */
export function missingFor(dir: string, need: ModelNeed): string | null {
  if (!existsSync(dir)) return "does not exist";
  if (!statSync(dir).isDirectory()) return "is not a directory";
  if (need === "model") {
    if (!existsSync(join(dir, "config.json"))) return "has no config.json";
    if (!existsSync(join(dir, SINGLE_FILE)) && !existsSync(join(dir, INDEX_FILE))) return `has no ${SINGLE_FILE} or ${INDEX_FILE}`;
    return null;
  }
  if (need === "onnx") {
    if (!existsSync(join(dir, "config.json"))) return "has no config.json";
    if (!existsSync(join(dir, ONNX_FILE))) return `has no ${ONNX_FILE}`;
  }
  if (!existsSync(join(dir, "tokenizer.json")) && !existsSync(join(dir, "tokenizer_config.json"))) {
    return "has no tokenizer.json or tokenizer_config.json";
  }
  return null;
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
  return {
    reason: `${refProblem}${candidates.length === 0 ? "has no snapshots" : `none of its ${candidates.length} snapshot(s) is complete (${missingFor(candidates[0]!, need)})`}`,
  };
}

export interface HubModelOptions {
  fetch?: typeof fetch;
  /** Progress lines while downloading (default: stderr). */
  log?: (line: string) => void;
}

/**
 * Downloads the files a model (or only its tokenizer) needs from the hub into the HF cache layout
 * (models--org--name/snapshots/<commit>/, refs/main). Files are written under temporary names and
 * renamed, so an interrupted download never looks complete.
 */
export async function downloadToCache(repoId: string, need: ModelNeed, env: NodeJS.ProcessEnv, options: HubModelOptions = {}): Promise<string> {
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
  // The first optional file the hub did not have: when it had none at all, the repository itself
  // is missing, and that 404 says so better than "incomplete".
  let firstMissing: HubHttpError | null = null;
  let gotAny = false;
  const get = async (file: string, optional: boolean): Promise<boolean> => {
    try {
      const responseHeaders = await downloadHubFile(`${base}/${file}`, join(staging, file), { headers, fetch: fetchImpl, log });
      commit ??= responseHeaders.get("x-repo-commit");
      gotAny = true;
      return true;
    } catch (err) {
      if (optional && err instanceof HubHttpError && err.status === 404) {
        firstMissing ??= err;
        return false;
      }
      throw err;
    }
  };
  try {
    await get("config.json", need === "tokenizer");
    for (const f of TOKENIZER_FILES) await get(f, true);
    if (need === "onnx") await get(ONNX_FILE, false);
    if (need === "model") {
      if (!(await get(SINGLE_FILE, true))) {
        if (!(await get(INDEX_FILE, true)))
          throw new Error(`the repo has neither ${SINGLE_FILE} nor ${INDEX_FILE} (only safetensors checkpoints are supported)`);
        const index = JSON.parse(readFileSync(join(staging, INDEX_FILE), "utf8")) as { weight_map?: Record<string, string> };
        const shards = [...new Set(Object.values(index.weight_map ?? {}))].sort();
        for (const shard of shards) {
          if (!/^[\w.-]+\.safetensors$/.test(shard)) throw new Error(`${INDEX_FILE} names an unexpected shard file ${JSON.stringify(shard)}`);
          await get(shard, false);
        }
      }
    }
    const why = missingFor(staging, need);
    if (why !== null && !gotAny && firstMissing !== null) throw firstMissing;
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
