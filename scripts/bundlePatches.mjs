// esbuild plugins that let Ink and its layout engine load as part of one CommonJS script (what
// bin/cookbook.js compiles with a V8 code cache). A script cannot wait at top level, and two
// dependencies do: Yoga (Ink's layout engine, WebAssembly) waits for its asynchronous
// instantiation, and Ink waits for its React devtools when DEV=true. Each patch checks that the
// text it replaces is still there, so a dependency update fails the build loudly instead of
// bundling something else.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

function replaceExactly(file, text, pairs) {
  let out = text;
  for (const [from, to] of pairs) {
    if (!out.includes(from))
      throw new Error(`${file}: expected to find ${JSON.stringify(from.slice(0, 80))}; update scripts/bundlePatches.mjs for this version`);
    out = out.split(from).join(to);
  }
  return out;
}

/**
 * Ink's reconciler awaits `import('./devtools.js')` and its package.json at top level when
 * DEV=true. React devtools are not installed; the bundle drops both (the sources through tsx keep
 * them: COOKBOOK_FROM_SOURCE=1 DEV=true).
 */
export const inkWithoutDevtools = {
  name: "ink-without-devtools",
  setup(build) {
    build.onLoad({ filter: /[\\/]ink[\\/]build[\\/]reconciler\.js$/ }, (args) => ({
      loader: "js",
      contents: replaceExactly(args.path, readFileSync(args.path, "utf8"), [
        ["if (isDev()) {\n    try {\n        await import('./devtools.js');", "if (false) {\n    try {\n        import('./devtools.js');"],
        ["isDev()\n    ? await loadPackageJson()", "false\n    ? loadPackageJson()"],
      ]),
    }));
  },
};

/**
 * `yoga-layout` exports `wrapAssembly(await loadYoga())`. Emscripten's loader lets the caller
 * instantiate the module itself (`instantiateWasm`): done synchronously here from the same inline
 * binary, the whole runtime is ready when the loader returns, so the export needs no await. (It
 * also never asks `typeof fetch`, which would load Node's HTTP client at start-up.)
 */
export const yogaSync = {
  name: "yoga-sync",
  setup(build) {
    const require = createRequire(join(build.initialOptions.absWorkingDir ?? process.cwd(), "package.json"));
    const srcDir = dirname(require.resolve("yoga-layout"));
    const binary = join(srcDir, "..", "binaries", "yoga-wasm-base64-esm.js");
    const literal = /var H;H="data:application\/octet-stream;base64,([A-Za-z0-9+/=]+)"/;
    build.onResolve({ filter: /^yoga-layout$/ }, () => ({ path: "yoga-layout", namespace: "cookbook-yoga" }));
    build.onResolve({ filter: /^cookbook-yoga-wasm$/ }, () => ({ path: "wasm", namespace: "cookbook-yoga" }));
    build.onLoad({ filter: /^wasm$/, namespace: "cookbook-yoga" }, () => {
      const m = literal.exec(readFileSync(binary, "utf8"));
      if (!m) throw new Error(`${binary}: expected the inline base64 WebAssembly binary; update scripts/bundlePatches.mjs for this yoga-layout version`);
      return { loader: "js", contents: `export const YOGA_WASM_BASE64 = ${JSON.stringify(m[1])};` };
    });
    // The loader keeps its own copy of the binary otherwise: point it at the shared constant.
    build.onLoad({ filter: /yoga-wasm-base64-esm\.js$/ }, (args) => {
      const text = readFileSync(args.path, "utf8");
      const m = literal.exec(text);
      if (!m) throw new Error(`${args.path}: expected the inline base64 WebAssembly binary; update scripts/bundlePatches.mjs for this yoga-layout version`);
      return {
        loader: "js",
        resolveDir: dirname(args.path),
        contents: `import { YOGA_WASM_BASE64 } from "cookbook-yoga-wasm";\n${text.replace(m[0], 'var H;H="data:application/octet-stream;base64,"+YOGA_WASM_BASE64')}`,
      };
    });
    build.onLoad({ filter: /^yoga-layout$/, namespace: "cookbook-yoga" }, () => ({
      loader: "js",
      resolveDir: srcDir,
      contents: `
import loadYoga from "../binaries/yoga-wasm-base64-esm.js";
import wrapAssembly from "./wrapAssembly.js";
import { YOGA_WASM_BASE64 } from "cookbook-yoga-wasm";
export * from "./generated/YGEnums.js";
const runtime = {
  instantiateWasm(imports, receiveInstance) {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(YOGA_WASM_BASE64, "base64")), imports);
    receiveInstance(instance);
    return instance.exports;
  },
};
loadYoga(runtime);
if (!runtime.calledRun) throw new Error("yoga-layout did not initialise synchronously (scripts/bundlePatches.mjs)");
export default wrapAssembly(runtime);
`,
    }));
  },
};

/**
 * Ink's frame writer gets src/tui/ink/ansiTokenize.ts (same results, a fraction of the work; see
 * there) instead of @alcalzone/ansi-tokenize, which that module itself still imports.
 */
export const fastInkOutput = {
  name: "fast-ink-output",
  setup(build) {
    const replacement = join(build.initialOptions.absWorkingDir ?? process.cwd(), "src", "tui", "ink", "ansiTokenize.ts");
    build.onResolve({ filter: /^@alcalzone\/ansi-tokenize$/ }, (args) =>
      /[\\/]ink[\\/]build[\\/]output\.js$/.test(args.importer) ? { path: replacement } : undefined,
    );
    // Each frame starts from a grid of blank cells (8,000 objects for a 160 x 50 terminal); cells
    // are only ever replaced or read, so one frozen blank serves them all.
    build.onLoad({ filter: /[\\/]ink[\\/]build[\\/]output\.js$/ }, (args) => ({
      loader: "js",
      contents: replaceExactly(args.path, readFileSync(args.path, "utf8"), [
        [
          "                row.push({\n                    type: 'char',\n                    value: ' ',\n                    fullWidth: false,\n                    styles: [],\n                });",
          "                row.push(BLANK_CELL);",
        ],
        [
          "class OutputCaches {",
          "const BLANK_CELL = Object.freeze({ type: 'char', value: ' ', fullWidth: false, styles: Object.freeze([]) });\nclass OutputCaches {",
        ],
      ]),
    }));
  },
};

/**
 * Every copy of string-width the bundle holds (Ink's, wrap-ansi's, cliui's) is wrapped by
 * src/tui/ink/stringWidth.ts with a table of its own answers for lone graphemes, measured here.
 * The top-level copy also builds its emoji expression on first use instead of at load (~30 ms).
 */
export const fastStringWidth = {
  name: "fast-string-width",
  setup(build) {
    const root = build.initialOptions.absWorkingDir ?? process.cwd();
    const wrapper = join(root, "src", "tui", "ink", "stringWidth.ts");
    const skip = Symbol("skip");
    build.onResolve({ filter: /^string-width$/ }, async (args) => {
      if (args.pluginData === skip) return undefined;
      const real = await build.resolve(args.path, { importer: args.importer, resolveDir: args.resolveDir, kind: args.kind, pluginData: skip });
      if (real.errors.length > 0) return { errors: real.errors };
      return { path: real.path, namespace: "cookbook-string-width" };
    });
    build.onLoad({ filter: /.*/, namespace: "cookbook-string-width" }, async (args) => {
      const { tsImport } = await import("tsx/esm/api");
      const { widthTable } = await tsImport(wrapper, import.meta.url);
      const table = widthTable((await import(pathToFileURL(args.path).href)).default);
      return {
        loader: "js",
        resolveDir: root,
        contents: `import width from ${JSON.stringify(args.path)};\nimport { withWidthTable } from ${JSON.stringify(wrapper)};\nexport default withWidthTable(width, ${JSON.stringify(table)});\n`,
      };
    });
    const topLevel = createRequire(join(root, "package.json")).resolve("string-width");
    build.onLoad({ filter: /[\\/]string-width[\\/]index\.js$/ }, (args) =>
      args.path === topLevel
        ? {
            loader: "js",
            contents: replaceExactly(args.path, readFileSync(args.path, "utf8"), [
              [
                "const rgiEmojiRegex = /^\\p{RGI_Emoji}$/v;",
                'let rgiEmojiCompiled;\nconst rgiEmojiRegex = {test: (segment) => (rgiEmojiCompiled ??= new RegExp("^\\\\p{RGI_Emoji}$", "v")).test(segment)};',
              ],
            ]),
          }
        : undefined,
    );
  },
};

/**
 * yargs guesses the program's version from the package.json above its own node_modules folder,
 * and, when it is not inside one (in the bundle it is dist/cookbook.cjs), from the package.json
 * above the working directory: reading every folder up from there (tens of milliseconds in a
 * crowded home or /tmp) and reporting whatever project the user stands in. In the bundle its
 * package is the one dist/ belongs to.
 */
export const yargsOwnPackage = {
  name: "yargs-own-package",
  setup(build) {
    build.onLoad({ filter: /[\\/]yargs[\\/]lib[\\/]platform-shims[\\/]esm\.mjs$/ }, (args) => ({
      loader: "js",
      contents: replaceExactly(args.path, readFileSync(args.path, "utf8"), [
        [
          "const mainFilename = __dirname.substring(0, __dirname.lastIndexOf('node_modules'));",
          "const mainFilename = __dirname.includes('node_modules') ? __dirname.substring(0, __dirname.lastIndexOf('node_modules')) : resolve(__dirname, '..', '..');",
        ],
      ]),
    }));
  },
};
