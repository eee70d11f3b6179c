// `npm run build` (and `npm install`, through "prepare"): bundles the `cookbook` command with
// esbuild into dist/cookbook.cjs (one script: bin/cookbook.js compiles it with a V8 code cache, see
// bin/compiled.js) and the engine's worker into dist/entry.js (an ES module, started by
// src/engine/worker/host.ts next to the bundle it is in), with source maps, then stamps the build
// with its id so bin/cookbook.js can tell it is newer than the sources and key its code caches.
// The stamp also records a digest of the inputs (scripts/contentStamp.mjs): when they have not
// changed, the build is skipped and only the stamp's time is renewed (a checkout that rewrote the
// files unchanged must not make bin/cookbook.js fall back to the sources). The bundle is written to
// a new folder that then replaces the old one, so an interrupted build leaves the previous bundle
// or none, never half of one. A failed build is a warning, not a failed install: the command then
// runs the TypeScript sources through tsx. Types are checked by `npm run typecheck`, not here.
//
// Usage: node scripts/build.mjs [--outdir DIR]   (default: dist/ of this checkout)
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { fastInkOutput, fastStringWidth, inkWithoutDevtools, yargsOwnPackage, yogaSync } from "./bundlePatches.mjs";
import { asciiBundle } from "./asciiBundle.mjs";
import { contentStamp, filesUnder, readStamp, writeStampFile } from "./contentStamp.mjs";
import { ranForNpx } from "./npx.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
if (ranForNpx()) process.exit(0);
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
  // native), tsx (it loads TypeScript experiment files through a loader of its own files, which
  // must stay where its package put them), native addons, and Ink's optional devtools.
  external: ["@huggingface/transformers", "tsx", "*.node", "react-devtools-core"],
  // React and its reconciler choose their build when loaded; the bundle keeps only production
  // (bin/cookbook.js defaults NODE_ENV to it; the sources through tsx honour NODE_ENV=development).
  define: { "process.env.NODE_ENV": '"production"' },
};

async function bundle(outdir) {
  const { build } = await import("esbuild");
  await build({
    ...common,
    entryPoints: { cookbook: "src/cli.ts" },
    outdir,
    outExtension: { ".js": ".cjs" },
    format: "cjs",
    // The script is compiled as the body of a function receiving the bundle's file URL.
    // Intl.Segmenter: see src/tui/ink/segmenter.ts.
    define: { ...common.define, "import.meta.url": "__cookbookUrl", "Intl.Segmenter": "FastSegmenter" },
    inject: [join(root, "src", "tui", "ink", "segmenter.ts")],
    plugins: [inkWithoutDevtools, yogaSync, fastInkOutput, fastStringWidth, yargsOwnPackage],
  });
  const script = join(outdir, "cookbook.cjs");
  const { text, kept } = asciiBundle(readFileSync(script, "utf8"));
  writeFileSync(script, text);
  if (kept > 0) console.warn(`cookbook: ${kept} non-ASCII characters stay in ${script} (tagged templates or white space); it starts a little slower`);
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

const SOURCE_DIRS = ["src", "recipes"];
const SOURCE_FILE = /\.(ts|tsx|mjs|json)$/;

/**
 * Every folder under SOURCE_DIRS (paths relative to the root, "/"-separated) with its source files
 * and subfolders ("name/"), sorted. bin/cookbook.js checks that the build is current by stat'ing
 * these at each start; listing the tree there cost twice as much.
 */
function sourceTree() {
  const tree = {};
  const visit = (rel) => {
    const names = [];
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      if (entry.isDirectory()) {
        names.push(`${entry.name}/`);
        visit(`${rel}/${entry.name}`);
      } else if (entry.isFile() && SOURCE_FILE.test(entry.name)) {
        names.push(entry.name);
      }
    }
    tree[rel] = names.sort();
  };
  for (const dir of SOURCE_DIRS) visit(dir);
  return tree;
}

const sources = [
  ...SOURCE_DIRS.flatMap((dir) => filesUnder(join(root, dir), (name) => SOURCE_FILE.test(name))),
  ...["scripts/build.mjs", "scripts/bundlePatches.mjs", "scripts/asciiBundle.mjs", "package-lock.json", "tsconfig.json"]
    .map((f) => join(root, f))
    .filter((f) => existsSync(f)),
];
const inputs = contentStamp(root, sources, {});
const tree = sourceTree();
const stampFile = join(outdir, ".built");
if (existsSync(join(outdir, "cookbook.cjs")) && readStamp(stampFile) === inputs) {
  const now = new Date();
  utimesSync(stampFile, now, now);
  console.log(`cookbook: the bundle in ${outdir} is up to date`);
  process.exit(0);
}

const staging = `${outdir}.building-${process.pid}`;
try {
  rmSync(staging, { recursive: true, force: true });
  await bundle(staging);
} catch (err) {
  rmSync(staging, { recursive: true, force: true });
  console.warn(
    `cookbook: bundling to ${outdir} failed (${err instanceof Error ? err.message : String(err)}); the cookbook command will run the TypeScript sources through tsx`,
  );
  process.exit(0);
}
// The id names the code caches (bin/compiled.js): a rebuilt bundle never meets an old cache.
const id = createHash("sha256")
  .update(readFileSync(join(staging, "cookbook.cjs")))
  .digest("hex")
  .slice(0, 16);
writeStampFile(join(staging, ".built"), { id, inputs, built_at: new Date().toISOString(), sources: tree });
const old = `${outdir}.old-${process.pid}`;
if (existsSync(outdir)) renameSync(outdir, old);
renameSync(staging, outdir);
rmSync(old, { recursive: true, force: true });
