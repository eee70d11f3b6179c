// `npm run build` (and `npm install`, through "prepare"): bundles the `cookbook` command with
// esbuild into dist/cookbook.cjs (one script: bin/cookbook.js compiles it with a V8 code cache, see
// bin/compiled.js) and the engine's worker into dist/entry.js (an ES module, started by
// src/engine/worker/host.ts next to the bundle it is in), with source maps, then stamps the build
// with its id so bin/cookbook.js can tell it is newer than the sources and key its code caches.
// A failed build is a warning, not a failed install: the command then runs the TypeScript sources
// through tsx. Types are checked by `npm run typecheck`, not here.
//
// Usage: node scripts/build.mjs [--outdir DIR]   (default: dist/ of this checkout)
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { fastInkOutput, fastStringWidth, inkWithoutDevtools, yogaSync } from "./bundlePatches.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const outdir = argv.includes("--outdir") ? resolve(argv[argv.indexOf("--outdir") + 1]) : join(root, "dist");

const common = {
  absWorkingDir: root,
  bundle: true,
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  // Stack traces map to src/ (which is installed), so the maps need not carry the sources.
  sourcesContent: false,
  // Less to run; lines and names stay as written (Node prints the line an uncaught error was
  // thrown from, which in a whitespace-minified bundle is kilobytes long).
  minifySyntax: true,
  logLevel: "warning",
  // Loaded from node_modules at run time: the tokenizer runtime (onnxruntime and sharp are
  // native), native addons, and Ink's optional devtools.
  external: ["@huggingface/transformers", "*.node", "react-devtools-core"],
  // React and its reconciler choose their build when loaded; the bundle keeps only production
  // (bin/cookbook.js defaults NODE_ENV to it; the sources through tsx honour NODE_ENV=development).
  define: { "process.env.NODE_ENV": '"production"' },
};

async function bundle() {
  const { build } = await import("esbuild");
  rmSync(outdir, { recursive: true, force: true });
  await build({
    ...common,
    entryPoints: { cookbook: "src/cli.ts" },
    outdir,
    outExtension: { ".js": ".cjs" },
    format: "cjs",
    // The script is compiled as the body of a function receiving the bundle's file URL.
    define: { ...common.define, "import.meta.url": "__cookbookUrl" },
    plugins: [inkWithoutDevtools, yogaSync, fastInkOutput, fastStringWidth],
  });
  await build({
    ...common,
    // The engine's worker, and the W&B thread (src/log/wandb/sink.ts starts it beside the bundle).
    entryPoints: { entry: "src/engine/worker/entry.ts", wandbWorker: "src/log/wandb/worker.ts" },
    outdir,
    format: "esm",
    // CommonJS dependencies inside an ES module still call require() for Node's built-ins.
    banner: { js: 'import { createRequire as __cookbookRequire } from "node:module"; const require = __cookbookRequire(import.meta.url);' },
  });
}

try {
  await bundle();
} catch (err) {
  console.warn(`cookbook: bundling to ${outdir} failed (${err instanceof Error ? err.message : String(err)}); the cookbook command will run the TypeScript sources through tsx`);
  process.exit(0);
}
mkdirSync(outdir, { recursive: true });
// The id names the code caches (bin/compiled.js): a rebuilt bundle never meets an old cache.
const id = createHash("sha256").update(readFileSync(join(outdir, "cookbook.cjs"))).digest("hex").slice(0, 16);
writeFileSync(join(outdir, ".built"), `${JSON.stringify({ id, built_at: new Date().toISOString() })}\n`);
