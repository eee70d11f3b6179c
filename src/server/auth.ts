// API key checking. Both sides are hashed first so timingSafeEqual always compares equal-length
// digests, and neither the key's length nor its content leaks through timing.
import { createHash, timingSafeEqual } from "node:crypto";

const digest = (s: string): Buffer => createHash("sha256").update(s, "utf8").digest();

/** A checker for `X-API-Key`; with no configured key every request passes. */
export function apiKeyChecker(apiKey: string | undefined): (presented: string | string[] | undefined) => boolean {
  if (apiKey === undefined) return () => true;
  const expected = digest(apiKey);
  return (presented) => {
    const value = Array.isArray(presented) ? presented[0] : presented;
    // Hash even a missing key so a missing and a wrong key take the same time.
    const ok = timingSafeEqual(digest(value ?? ""), expected);
    return ok && value !== undefined;
  };
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}
