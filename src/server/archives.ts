// Checkpoint archives (docs/protocol.md#rest-endpoints): `GET …/checkpoints/{kind}/{name}/archive` answers with a signed
// download URL, as the hosted service does; fetching that URL streams a tar of the checkpoint
// folder. The signature (an HMAC under a key made at start-up) stands in for the API key, so the
// URL works for whoever it is handed to until it expires, and for nobody after a restart.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { readdirSync } from "node:fs";
import type { Readable } from "node:stream";
import { create as createTar } from "tar";
import { HttpError } from "./http.ts";

export const ARCHIVE_URL_TTL_MS = 15 * 60_000;

export class ArchiveSigner {
  private readonly key = randomBytes(32);

  /** The token for `tinkerPath` valid until `expiresMs` (ms since the epoch). */
  sign(tinkerPath: string, expiresMs: number): string {
    const payload = Buffer.from(JSON.stringify({ p: tinkerPath, e: expiresMs })).toString("base64url");
    return `${payload}.${this.mac(payload)}`;
  }

  /** The tinker path a token grants; 403 for a forged or expired one. */
  verify(token: string, now = Date.now()): string {
    const [payload, mac] = token.split(".");
    const expected = payload === undefined ? "" : this.mac(payload);
    if (payload === undefined || mac === undefined || mac.length !== expected.length || !timingSafeEqual(Buffer.from(mac), Buffer.from(expected))) {
      throw new HttpError(403, "archive URL signature is invalid; ask for a new URL with GET …/checkpoints/{kind}/{name}/archive");
    }
    const body = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { p: string; e: number };
    if (!(body.e > now)) throw new HttpError(403, `archive URL expired at ${new Date(body.e).toISOString()}; ask for a new one`);
    return body.p;
  }

  private mac(payload: string): string {
    return createHmac("sha256", this.key).update(payload).digest("base64url");
  }
}

/** A tar stream (POSIX ustar, no compression) of the files of `dir`, at the archive's root. */
export function tarFolder(dir: string): Readable {
  const entries = readdirSync(dir).sort();
  return createTar({ cwd: dir, portable: true, noMtime: false }, entries) as unknown as Readable;
}
