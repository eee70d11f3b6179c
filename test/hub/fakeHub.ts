// A local stand-in for the Hugging Face hub on loopback, for tests that download models and
// datasets through HF_ENDPOINT as users do: revision info (/api/models|datasets/<repo>/revision/
// <rev>) and file downloads (/<repo>/resolve/<rev>/<path>, /datasets/<repo>/resolve/<rev>/<path>)
// with the headers the real hub sends (content-length, x-repo-commit, etag). Repositories are
// given as files in memory or as folders on disk; everything asked is recorded.
import { createServer, type Server } from "node:http";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import type { AddressInfo } from "node:net";
import { createHash } from "node:crypto";

export interface HubRepo {
  /** The commit every revision name resolves to. */
  sha: string;
  files: Record<string, Uint8Array>;
}

export interface FakeHub {
  url: string;
  /** Every path asked for, decoded, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** The files of a folder as a repository (paths with "/"), committed as `sha`. */
export function repoFromFolder(dir: string, sha = "0123456789abcdef0123456789abcdef01234567"): HubRepo {
  const files: Record<string, Uint8Array> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath, entry.name);
    files[relative(dir, full).split(sep).join("/")] = readFileSync(full);
  }
  return { sha, files };
}

/**
 * Serves `models` (keyed "org/name") and `datasets` (likewise). Revision names (main, a branch
 * such as refs/convert/parquet) and the commit itself all resolve to the repository's one commit.
 */
export async function startFakeHub(repos: { models?: Record<string, HubRepo>; datasets?: Record<string, HubRepo> }): Promise<FakeHub> {
  const requests: string[] = [];
  const kinds = { models: repos.models ?? {}, datasets: repos.datasets ?? {} };
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? "").split("?")[0]!);
    requests.push(path);
    const info = /^\/api\/(models|datasets)\/([^/]+\/[^/]+)\/revision\/(.+)$/.exec(path);
    if (info !== null) {
      const repo = kinds[info[1] as "models" | "datasets"][info[2]!];
      if (repo === undefined) return void res.writeHead(404, { "content-type": "application/json" }).end('{"error":"Repository not found"}');
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end(JSON.stringify({ id: info[2], sha: repo.sha, siblings: Object.keys(repo.files).map((rfilename) => ({ rfilename })) }));
    }
    const file = /^\/(datasets\/)?([^/]+\/[^/]+)\/resolve\/(.+?)\/(.+)$/.exec(path);
    const repo = file === null ? undefined : kinds[file[1] !== undefined ? "datasets" : "models"][file[2]!];
    const bytes = file === null ? undefined : repo?.files[file[4]!];
    if (repo === undefined || bytes === undefined) {
      return void res.writeHead(404, { "x-error-code": repo === undefined ? "RepoNotFound" : "EntryNotFound" }).end("Entry not found");
    }
    res.writeHead(200, {
      "content-length": String(bytes.length),
      "x-repo-commit": repo.sha,
      etag: `"${createHash("sha256").update(bytes).digest("hex")}"`,
    });
    res.end(req.method === "HEAD" ? undefined : Buffer.from(bytes));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
