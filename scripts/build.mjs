// `npm run build` (and `npm install`, through "prepare"): compiles src/ and recipes/ to dist/ with
// source maps and stamps the build so
// bin/cookbook.js can tell it is newer than the sources. A failed build is a warning, not a failed
// install: the command then runs the TypeScript sources through tsx.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsc = spawnSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", join(root, "tsconfig.build.json")], { stdio: "inherit" });
if (tsc.status !== 0) {
  console.warn("cookbook: compiling to dist/ failed; the cookbook command will run the TypeScript sources through tsx");
  process.exit(0);
}
mkdirSync(join(root, "dist"), { recursive: true });
writeFileSync(join(root, "dist", ".built"), `${new Date().toISOString()}\n`);
