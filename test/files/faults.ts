// Injected write faults: node:fs is patched (and the ESM bindings resynced) so that writes to
// chosen files fail with ENOSPC after a given number of bytes, as on a disk that fills up mid-write.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

export function enospc(): NodeJS.ErrnoException {
  return Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", errno: -28, syscall: "write" });
}

/**
 * Until the returned function is called, writes to files whose path matches `match` succeed for
 * `allowBytes` bytes in total per file and then throw ENOSPC (a short write first, like the kernel).
 */
export function failWritesTo(match: (path: string) => boolean, allowBytes = 0): () => void {
  const realOpen = fs.openSync;
  const realWrite = fs.writeSync;
  const realClose = fs.closeSync;
  const budget = new Map<number, number>();
  fs.openSync = ((path: fs.PathLike, ...rest: unknown[]) => {
    const fd = (realOpen as (...a: unknown[]) => number)(path, ...rest);
    if (match(String(path))) budget.set(fd, allowBytes);
    return fd;
  }) as typeof fs.openSync;
  fs.closeSync = ((fd: number) => {
    budget.delete(fd);
    realClose(fd);
  }) as typeof fs.closeSync;
  fs.writeSync = ((fd: number, buffer: string | NodeJS.ArrayBufferView, ...rest: unknown[]) => {
    const left = budget.get(fd);
    if (left === undefined) return (realWrite as (...a: unknown[]) => number)(fd, buffer, ...rest);
    if (left <= 0) throw enospc();
    const bytes = typeof buffer === "string" ? Buffer.from(buffer) : Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    const offset = typeof rest[0] === "number" ? rest[0] : 0;
    const length = typeof rest[1] === "number" ? rest[1] : bytes.byteLength - offset;
    const n = Math.min(left, length);
    budget.set(fd, left - n);
    return realWrite(fd, bytes, offset, n);
  }) as typeof fs.writeSync;
  syncBuiltinESMExports();
  return () => {
    fs.openSync = realOpen;
    fs.writeSync = realWrite;
    fs.closeSync = realClose;
    syncBuiltinESMExports();
  };
}
