// Reads the files of a tar archive (POSIX ustar and pax, as `cookbook serve` and the hosted service
// send checkpoint archives). Only regular files at the archive's root are kept: a checkpoint
// archive has no folders, and a name with a path in it must never escape the target folder.
import { gunzipSync } from "node:zlib";

const BLOCK = 512;

function field(header: Buffer, start: number, length: number): string {
  const raw = header.subarray(start, start + length);
  const nul = raw.indexOf(0);
  return raw.subarray(0, nul === -1 ? raw.length : nul).toString("utf8");
}

function octal(header: Buffer, start: number, length: number, what: string): number {
  const text = field(header, start, length).trim();
  const n = text === "" ? 0 : parseInt(text, 8);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`tar archive: bad ${what} field ${JSON.stringify(text)}`);
  return n;
}

/** pax extended header records ("<len> key=value\n") → the path they set, if any. */
function paxPath(body: Buffer): string | undefined {
  let path: string | undefined;
  for (const record of body.toString("utf8").split("\n")) {
    const m = /^\d+ path=(.*)$/.exec(record);
    if (m) path = m[1];
  }
  return path;
}

/** The regular files of `archive` (gzip-compressed or not) by name. */
export function readTarFiles(archive: Buffer): Map<string, Buffer> {
  const data = archive.length >= 2 && archive[0] === 0x1f && archive[1] === 0x8b ? gunzipSync(archive) : archive;
  const out = new Map<string, Buffer>();
  let offset = 0;
  let nextPath: string | undefined;
  let ended = false;
  while (offset + BLOCK <= data.length) {
    const header = data.subarray(offset, offset + BLOCK);
    if (header.every((b) => b === 0)) {
      ended = true;
      break;
    }
    const size = octal(header, 124, 12, "size");
    const type = String.fromCharCode(header[156] || 0x30);
    const prefix = field(header, 345, 155);
    const name = nextPath ?? (prefix !== "" ? `${prefix}/${field(header, 0, 100)}` : field(header, 0, 100));
    const bodyStart = offset + BLOCK;
    if (bodyStart + size > data.length) throw new Error(`tar archive: ${name} claims ${size} bytes but the archive ends first (truncated download?)`);
    const body = data.subarray(bodyStart, bodyStart + size);
    offset = bodyStart + Math.ceil(size / BLOCK) * BLOCK;
    if (type === "x") {
      nextPath = paxPath(body);
      continue;
    }
    nextPath = undefined;
    if (type !== "0" && type !== "\0") continue;
    const base = name.replace(/^\.\//, "");
    if (base.includes("/") || base.includes("\\") || base === "" || base.startsWith("..")) {
      throw new Error(`tar archive: entry ${JSON.stringify(name)} is not a file at the archive's root`);
    }
    out.set(base, Buffer.from(body));
  }
  // A complete archive ends with zero blocks; without them the download was cut short.
  if (!ended) throw new Error(`tar archive: ends after ${out.size} file(s) without the end-of-archive marker (truncated download?)`);
  return out;
}
