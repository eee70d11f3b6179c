// Types of bin/compiled.js (plain JavaScript: it runs before anything is compiled).
/** Which code cache a command line uses (its first word and flag names; bare `cookbook` is "ui"). */
export function cacheProfile(args: readonly string[]): string;
/** Runs dist/cookbook.cjs of `distDir` (built with id `buildId`) with process.argv as its command line. */
export function runBundle(distDir: string, buildId: string): void;
