// `npm install`'s "install" script: builds the native kernels (binding.gyp) with node-gyp, unless
// build/Release already holds an addon built from the same inputs (the sources, binding.gyp,
// Node's ABI, the CPU, and the compiler and OpenBLAS that src/engine/kernels/native/configure.mjs
// would find on this machine).
// It never cleans: `node-gyp configure` and `node-gyp build` only rewrite what changed, and make
// replaces the addon only once it has linked a new one, so an install interrupted half-way leaves
// the previous addon usable (and no stamp, so the next install builds again). A failed build is a
// warning, not a failed install: the engine then uses its TypeScript kernels.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { contentStamp, filesUnder, readStamp, writeStampFile } from "./contentStamp.mjs";
import { ranForNpx, repairNpxEntry } from "./npx.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
if (ranForNpx()) process.exit(0);
repairNpxEntry(root);
const addon = join(root, "build", "Release", "cookbook_kernels.node");
const stampFile = join(root, "build", "cookbook_kernels.stamp");
const nativeDir = join(root, "src", "engine", "kernels", "native");

const probe = spawnSync(process.execPath, [join(nativeDir, "configure.mjs"), "fingerprint"], { cwd: root, encoding: "utf8" });
const facts = {
  abi: process.versions.modules,
  napi: process.versions.napi,
  platform: process.platform,
  arch: process.arch,
  cpu: cpus()[0]?.model ?? "",
  cc: process.env.CC ?? "",
  machine: probe.stdout,
};
const inputs = contentStamp(root, [join(root, "binding.gyp"), ...filesUnder(nativeDir)], facts);

if (existsSync(addon) && readStamp(stampFile) === inputs) {
  console.log("cookbook: native kernels are up to date (build/Release/cookbook_kernels.node)");
  process.exit(0);
}

// npm hands install scripts its own node-gyp; run by hand, this takes the one npm ships beside Node.
const nodeGyp =
  process.env.npm_config_node_gyp ?? join(dirname(process.execPath), "..", "lib", "node_modules", "npm", "node_modules", "node-gyp", "bin", "node-gyp.js");
const gyp = (args) => spawnSync(process.execPath, [nodeGyp, ...args], { cwd: root, stdio: "inherit" });
for (const step of [["configure"], ["build"]]) {
  const result = gyp(step);
  if (result.signal !== null) process.kill(process.pid, result.signal);
  if (result.status !== 0) {
    console.warn(`cookbook: native kernel build failed (node-gyp ${step[0]}); the engine will use the slow TypeScript kernels`);
    process.exit(0);
  }
}
mkdirSync(dirname(stampFile), { recursive: true });
writeStampFile(stampFile, { inputs, built_at: new Date().toISOString() });
