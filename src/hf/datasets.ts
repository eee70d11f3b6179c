// Finding the parquet files of a Hugging Face dataset split: a local file or folder, the local hub
// cache, or — when online — a download from the hub (HF_ENDPOINT, default https://huggingface.co)
// into that cache in huggingface_hub's layout (datasets--org--name/snapshots/<commit>/<path>,
// refs/<revision>), so Python tools find the files too. Repositories without parquet files are
// read from the hub's automatic conversion (revision refs/convert/parquet).
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve as resolvePath, sep } from "node:path";
import { hfHubCacheDir, hfOffline } from "./cache.ts";
import { downloadHubFile, fetchHub, hfEndpoint, HubHttpError, hubHeaders } from "./download.ts";

export const PARQUET_CONVERSION_REVISION = "refs/convert/parquet";

export interface HubDatasetRef {
  /** "org/name" on the hub, or a local parquet file or folder. */
  path: string;
  /** Configuration (subset) name; null for the default one. */
  name: string | null;
  split: string;
  revision?: string;
}

export interface HubOptions {
  env?: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
  log?: (line: string) => void;
}

export class DatasetNotFoundError extends Error {
  override name = "DatasetNotFoundError";
}

export function datasetCacheDir(repoId: string, env: NodeJS.ProcessEnv): string {
  return join(hfHubCacheDir(env), `datasets--${repoId.split("/").join("--")}`);
}

/**
 * Whether a repo-relative parquet path belongs to (config, split). Covers the hub's layouts:
 * data/train-00000-of-00001.parquet, <config>/train-*.parquet, <config>/train/0000.parquet,
 * train.parquet.
 */
export function matchesSplit(relPath: string, config: string | null, split: string): boolean {
  if (!relPath.endsWith(".parquet")) return false;
  const parts = relPath.split("/");
  const file = parts[parts.length - 1]!;
  const dirs = parts.slice(0, -1);
  const splitHit = dirs.includes(split) || file === `${split}.parquet` || file.startsWith(`${split}-`) || file.startsWith(`${split}.`);
  if (!splitHit) return false;
  if (config === null) return true;
  return dirs.includes(config);
}

function listFilesRecursive(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith(".")) continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else out.push(full);
    }
  };
  walk(root);
  return out.sort();
}

function splitFilesIn(root: string, config: string | null, split: string): string[] {
  return listFilesRecursive(root).filter((f) => matchesSplit(relative(root, f).split(sep).join("/"), config, split));
}

/** Parquet files of the split in the cache for `revision`, or null when none are cached. */
function cachedSplitFiles(ref: HubDatasetRef, revision: string, env: NodeJS.ProcessEnv): string[] | null {
  const repoDir = datasetCacheDir(ref.path, env);
  const refFile = join(repoDir, "refs", revision);
  if (!existsSync(refFile)) return null;
  const snapshot = join(repoDir, "snapshots", readFileSync(refFile, "utf8").trim());
  if (!existsSync(snapshot)) return null;
  // The conversion branch names configs "default" when the dataset has only one.
  const config = ref.name ?? (revision === PARQUET_CONVERSION_REVISION ? "default" : null);
  const files = splitFilesIn(snapshot, config, ref.split);
  return files.length > 0 ? files : null;
}

interface RevisionInfo {
  sha: string;
  files: string[];
}

async function getJson(url: string, headers: Record<string, string>, fetchImpl: typeof fetch): Promise<unknown> {
  const res = await fetchHub(url, { headers, fetch: fetchImpl });
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    const hint = res.status === 401 || res.status === 403 ? " (gated or private dataset: accept its terms on the hub and set HF_TOKEN)" : "";
    throw new DatasetNotFoundError(`HTTP ${res.status} for ${url}${hint}`);
  }
  return res.json();
}

async function revisionInfo(
  repoId: string,
  revision: string,
  env: NodeJS.ProcessEnv,
  headers: Record<string, string>,
  fetchImpl: typeof fetch,
): Promise<RevisionInfo> {
  const url = `${hfEndpoint(env)}/api/datasets/${repoId}/revision/${encodeURIComponent(revision)}`;
  const body = (await getJson(url, headers, fetchImpl)) as { sha?: unknown; siblings?: { rfilename?: unknown }[] };
  if (typeof body.sha !== "string" || !Array.isArray(body.siblings)) throw new DatasetNotFoundError(`unexpected answer from ${url}: no sha/siblings`);
  return { sha: body.sha, files: body.siblings.map((s) => s.rfilename).filter((f): f is string => typeof f === "string") };
}

async function downloadSplit(ref: HubDatasetRef, revision: string, env: NodeJS.ProcessEnv, options: HubOptions): Promise<string[] | null> {
  const fetchImpl = options.fetch ?? fetch;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const headers = hubHeaders(env);
  const info = await revisionInfo(ref.path, revision, env, headers, fetchImpl);
  const config = ref.name ?? (revision === PARQUET_CONVERSION_REVISION ? "default" : null);
  const wanted = info.files.filter((f) => matchesSplit(f, config, ref.split));
  if (wanted.length === 0) return null;
  const repoDir = datasetCacheDir(ref.path, env);
  const snapshot = join(repoDir, "snapshots", info.sha);
  for (const file of wanted) {
    const dest = join(snapshot, ...file.split("/"));
    if (existsSync(dest)) continue;
    const url = `${hfEndpoint(env)}/datasets/${ref.path}/resolve/${encodeURIComponent(info.sha)}/${file.split("/").map(encodeURIComponent).join("/")}`;
    try {
      await downloadHubFile(url, dest, { headers, fetch: fetchImpl, log, logEvery: true, what: "dataset" });
    } catch (err) {
      throw err instanceof HubHttpError ? new DatasetNotFoundError(err.message, { cause: err }) : err;
    }
  }
  mkdirSync(dirname(join(repoDir, "refs", revision)), { recursive: true });
  writeFileSync(join(repoDir, "refs", revision), info.sha);
  return wanted.map((f) => join(snapshot, ...f.split("/")));
}

function isHubId(path: string): boolean {
  return /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/.test(path);
}

/**
 * The local parquet files of a dataset split. Tries a local path, then (for "org/name") the
 * cache, then the hub, and finally the hub's parquet conversion. The error lists every attempt.
 */
export async function resolveDatasetSplitFiles(ref: HubDatasetRef, options: HubOptions = {}): Promise<string[]> {
  const env = options.env ?? process.env;
  const attempts: string[] = [];
  const local = resolvePath(ref.path);
  if (existsSync(local)) {
    if (statSync(local).isFile()) return [local];
    const files = splitFilesIn(local, ref.name, ref.split);
    if (files.length > 0) return files;
    throw new DatasetNotFoundError(
      `no parquet files for split "${ref.split}"${ref.name !== null ? ` of config "${ref.name}"` : ""} under ${local} (expected e.g. data/${ref.split}-00000-of-00001.parquet)`,
    );
  }
  if (!isHubId(ref.path)) {
    throw new DatasetNotFoundError(`dataset ${JSON.stringify(ref.path)} is neither an existing file or folder nor a hub id like "org/name"`);
  }
  const revision = ref.revision ?? "main";
  for (const rev of [revision, PARQUET_CONVERSION_REVISION]) {
    const cached = cachedSplitFiles(ref, rev, env);
    if (cached !== null) return cached;
    attempts.push(`HF cache ${datasetCacheDir(ref.path, env)} (revision ${rev}): not cached`);
  }
  const cookbookOffline = ["1", "true", "yes", "on"].includes((env["COOKBOOK_OFFLINE"] ?? "").toLowerCase());
  if (hfOffline(env) || cookbookOffline) {
    attempts.push("hub: not tried (offline: HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE/COOKBOOK_OFFLINE is set)");
  } else {
    for (const rev of [revision, PARQUET_CONVERSION_REVISION]) {
      try {
        const files = await downloadSplit(ref, rev, env, options);
        if (files !== null) return files;
        attempts.push(
          `hub ${hfEndpoint(env)} (revision ${rev}): no parquet files match split "${ref.split}"${ref.name !== null ? ` of config "${ref.name}"` : ""}`,
        );
      } catch (err) {
        attempts.push(`hub ${hfEndpoint(env)} (revision ${rev}): ${(err as Error).message}`);
      }
    }
  }
  throw new DatasetNotFoundError(
    `dataset ${ref.path} split ${ref.split} not found. Tried:\n${attempts.map((a) => `  - ${a}`).join("\n")}\n` +
      `To get it: run once while online (set HF_TOKEN for gated datasets), or pass a local parquet file or folder as the dataset path.`,
  );
}
