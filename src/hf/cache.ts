// Finding a model repository in the local Hugging Face hub cache, laid out by huggingface_hub as
// <cache>/models--<org>--<name>/{refs/<rev>, snapshots/<commit>/...}. Read-only: we never write it.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** The hub cache directory: HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub. */
export function hfHubCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env["HF_HUB_CACHE"]) return env["HF_HUB_CACHE"];
  if (env["HF_HOME"]) return path.join(env["HF_HOME"], "hub");
  const xdg = env["XDG_CACHE_HOME"];
  return path.join(xdg ? xdg : path.join(os.homedir(), ".cache"), "huggingface", "hub");
}

/** True when the environment asks for no network access to the hub. */
export function hfOffline(env: NodeJS.ProcessEnv = process.env): boolean {
  const on = (v: string | undefined): boolean => v !== undefined && ["1", "true", "yes", "on"].includes(v.toLowerCase());
  return on(env["HF_HUB_OFFLINE"]) || on(env["TRANSFORMERS_OFFLINE"]);
}

/**
 * The snapshot directory of `repoId` (e.g. "Qwen/Qwen3-8B") that contains `requiredFile`:
 * the one `refs/<revision>` points to when it has the file, else the most recently modified
 * snapshot that has it. Null when the repository is not cached.
 */
export function findCachedSnapshot(repoId: string, requiredFile: string, options: { cacheDir?: string; revision?: string } = {}): string | null {
  if (!/^[^/\s]+\/[^/\s]+$/.test(repoId)) return null;
  const cacheDir = options.cacheDir ?? hfHubCacheDir();
  const repoDir = path.join(cacheDir, `models--${repoId.replace("/", "--")}`);
  const snapshots = path.join(repoDir, "snapshots");
  if (!fs.existsSync(snapshots)) return null;
  const revision = options.revision ?? "main";
  const refFile = path.join(repoDir, "refs", revision);
  if (fs.existsSync(refFile)) {
    const commit = fs.readFileSync(refFile, "utf8").trim();
    const dir = path.join(snapshots, commit);
    if (fs.existsSync(path.join(dir, requiredFile))) return dir;
  }
  // A revision given as a commit hash names the snapshot directly.
  const direct = path.join(snapshots, revision);
  if (fs.existsSync(path.join(direct, requiredFile))) return direct;
  const candidates = fs
    .readdirSync(snapshots)
    .map((d) => path.join(snapshots, d))
    .filter((d) => fs.existsSync(path.join(d, requiredFile)))
    .map((d) => ({ d, mtime: fs.statSync(d).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  return candidates[0]?.d ?? null;
}
