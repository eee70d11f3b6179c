// The folder holding package.json, fixtures/ and build/: found by walking up from this module, so
// the same code finds it when it runs as TypeScript from src/ and bundled in dist/.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function findProjectRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${start}: cannot locate the tinker-cookbook-ts install`);
  }
}

export const PROJECT_ROOT = findProjectRoot(dirname(fileURLToPath(import.meta.url)));

/** True when this code runs bundled (dist/) rather than as TypeScript through tsx. */
export const RUNNING_COMPILED = !import.meta.url.endsWith(".ts");
