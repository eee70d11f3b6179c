// Fetches a checkpoint archive (from `cookbook serve` or the hosted service) and unpacks it into a
// folder: the archive URL comes from the REST API, the archive itself from wherever that URL
// points (a signed URL; the API key is not sent there). Unpacked into a temporary folder beside
// the destination and renamed at the end, so an interrupted download leaves nothing half-done.
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { extract } from "tar";
import { InvalidArgumentError, TinkerError } from "../errors.ts";
import { parseTinkerPath } from "../paths.ts";
import type { HttpRestClient } from "./restClient.ts";

export interface DownloadResult {
  dir: string;
  bytes: number;
}

export async function downloadCheckpoint(
  rest: HttpRestClient,
  tinkerPath: string,
  dest: string,
  options: { overwrite?: boolean; fetch?: typeof fetch } = {},
): Promise<DownloadResult> {
  parseTinkerPath(tinkerPath);
  const dir = resolve(dest);
  if (existsSync(dir) && options.overwrite !== true) {
    throw new InvalidArgumentError(`${dir} already exists; pick another --output or pass --force to replace it`);
  }
  const { url } = await rest.getCheckpointArchiveUrlFromTinkerPath(tinkerPath);
  const res = await (options.fetch ?? fetch)(url);
  if (!res.ok || res.body === null) {
    await res.body?.cancel().catch(() => undefined);
    throw new TinkerError(`downloading the archive of ${tinkerPath} failed: HTTP ${res.status} from ${new URL(url).origin}`);
  }
  const expected = Number(res.headers.get("content-length") ?? NaN);
  mkdirSync(dirname(dir), { recursive: true });
  const tmp = join(dirname(dir), `.download-${randomBytes(4).toString("hex")}`);
  mkdirSync(tmp);
  let bytes = 0;
  const count = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  try {
    // A damaged archive is an error, not a warning; entries stay inside `tmp`. Notes are not
    // damage: SkyRL tx's archives hold a "/" entry, which is only reported as stripped.
    let damage: Error | undefined;
    const onwarn = (code: string, message: string | Error): void => {
      if (code !== "TAR_ENTRY_INFO") damage ??= new Error(`${code}: ${message instanceof Error ? message.message : message}`);
    };
    await pipeline(Readable.fromWeb(res.body as unknown as WebReadableStream<Uint8Array>), count, extract({ cwd: tmp, onwarn }));
    if (damage !== undefined) throw damage;
    if (Number.isFinite(expected) && bytes !== expected) throw new TinkerError(`the archive of ${tinkerPath} ended after ${bytes} of ${expected} bytes`);
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    if (err instanceof TinkerError) throw err;
    throw new TinkerError(`unpacking the archive of ${tinkerPath} into ${dir} failed: ${(err as Error).message}`, { cause: err });
  }
  return { dir, bytes };
}
