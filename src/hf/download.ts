// One way to fetch a file from the Hugging Face hub (or anything at HF_ENDPOINT) into the local
// cache: streamed to a temporary name beside the destination and renamed once complete and of the
// announced size, so an interrupted download never looks like a cached file. Model and dataset
// lookups both use it.
import { createWriteStream, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { basename, dirname, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";

/** The hub's base URL: HF_ENDPOINT, else https://huggingface.co (no trailing slash). */
export function hfEndpoint(env: NodeJS.ProcessEnv = process.env): string {
  return (env["HF_ENDPOINT"] || "https://huggingface.co").replace(/\/+$/, "");
}

/** Request headers for the hub: the HF_TOKEN bearer when set (never logged). */
export function hubHeaders(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return env["HF_TOKEN"] ? { authorization: `Bearer ${env["HF_TOKEN"]}` } : {};
}

/** A non-2xx answer from the hub; `status` lets callers treat 404 of an optional file as absence. */
export class HubHttpError extends Error {
  override name = "HubHttpError";
  constructor(
    readonly status: number,
    readonly url: string,
    what = "repo",
  ) {
    const hint = status === 401 || status === 403 ? ` (gated or private ${what}: accept its terms on the hub and set HF_TOKEN)` : "";
    super(`HTTP ${status} for ${url}${hint}`);
  }
}

export interface HubDownloadOptions {
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  /** Progress lines (large files only, or every file with `logEvery: true`). */
  log?: (line: string) => void;
  logEvery?: boolean;
  /** Named in a 401/403 hint: "repo" or "dataset". */
  what?: string;
}

/** Waits before the 2nd, 3rd and 4th try of a request the network or the hub failed. */
export const HUB_RETRY_DELAYS_MS = [500, 1500, 4000];

/**
 * GET `url`, tried again after a network failure (a reset or refused connection: a pooled
 * keep-alive socket the server had just closed fails this way), a 429 or a 5xx, as huggingface_hub
 * does; other answers, 404 included, are returned at once.
 */
export async function fetchHub(url: string, options: Pick<HubDownloadOptions, "headers" | "fetch"> = {}): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const delay = HUB_RETRY_DELAYS_MS[attempt];
    try {
      const res = await (options.fetch ?? fetch)(url, { headers: options.headers ?? {}, redirect: "follow" });
      if (delay === undefined || (res.status !== 429 && res.status < 500)) return res;
      await res.body?.cancel().catch(() => undefined);
    } catch (err) {
      if (delay === undefined) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/** Downloads `url` to `dest` atomically; returns the response headers (x-repo-commit, etag, ...). */
export async function downloadHubFile(url: string, dest: string, options: HubDownloadOptions = {}): Promise<Headers> {
  const res = await fetchHub(url, options);
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw new HubHttpError(res.status, url, options.what);
  }
  const size = Number(res.headers.get("content-length") ?? NaN);
  if (options.log !== undefined && (options.logEvery === true || (Number.isFinite(size) && size > 10 * 1024 * 1024))) {
    options.log(`downloading ${url}${Number.isFinite(size) ? ` (${(size / 1024 ** 2).toFixed(1)} MiB)` : ""}`);
  }
  mkdirSync(dirname(dest), { recursive: true });
  const tmp = join(dirname(dest), `.${basename(dest)}.incomplete-${randomBytes(4).toString("hex")}`);
  try {
    if (res.body === null) writeFileSync(tmp, "");
    else await pipeline(Readable.fromWeb(res.body as unknown as WebReadableStream<Uint8Array>), createWriteStream(tmp));
    if (Number.isFinite(size) && statSync(tmp).size !== size) throw new Error(`download of ${url} ended after ${statSync(tmp).size} of ${size} bytes`);
    renameSync(tmp, dest);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return res.headers;
}
