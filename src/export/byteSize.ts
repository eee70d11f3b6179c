// Sizes as people write them ("5GB", "500MB", "2GiB"), decimal units like transformers' max_shard_size.

/** "5GB", "500MB", "2GiB", "1000000" → bytes (decimal units like transformers' max_shard_size). */
export function parseByteSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)?\s*$/i.exec(text);
  if (m === null) throw new RangeError(`shard size ${JSON.stringify(text)} is not a size; expected e.g. 5GB, 500MB, 2GiB or a number of bytes`);
  const unit = (m[2] ?? "B").toLowerCase();
  const mult: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 };
  const bytes = Math.floor(Number(m[1]) * mult[unit]!);
  if (!(bytes > 0)) throw new RangeError(`shard size ${JSON.stringify(text)} must be positive`);
  return bytes;
}
