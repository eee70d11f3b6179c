// Loading a bf16 safetensors model at the Llama-3.2-1B shape (hidden 2048, 16 layers, ffn 8192,
// 32 / 8 heads, vocab 128256, tied; --layers to change the depth), written once to a temp folder
// (--shards 2 for a sharded index). Each path runs in its own child process, alternating
// (--rounds times each), with the file in the page cache:
//   resident    the default for frozen bases (LoRA, samplers): bf16 matrices stay bf16, views of the
//               file's memory mapping (no copy); the kernels widen them as they read them
//   native      the addon maps the file and widens to float32 on every core (COOKBOOK_BASE_WEIGHTS=fp32,
//               full fine-tuning)
//   positioned  positioned reads into a staging buffer, then the native bf16 widening
//   typescript  positioned reads and the TypeScript widening loop (COOKBOOK_KERNELS=reference)
//   fresh-memory  no file at all: fills new float32 arrays of the same sizes, the floor any path
//               that materialises float32 weights pays (about 1 GB/s on the development VM)
// Prints wall and CPU seconds of the load, the GB/s of float32 produced (or, resident, the GB of
// file mapped), then for the resident and native paths the time to a model ready to run (LoRA r32
// setup) and its first forward pass (16 tokens: every weight page is read once, so the resident
// path's page faults are counted here), and each child's peak RSS (mapped file pages included).
// Usage: npm run bench:load [-- --layers 16 --rounds 2 --shards 1 --paths resident,native,positioned,typescript,fresh-memory]
import { execFileSync } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { getKernels } from "../src/engine/kernels/index.ts";
import { loadBaseModelDir, loadModelDir } from "../src/engine/storage/loadModel.ts";
import { EngineModel } from "../src/engine/model/model.ts";
import type { ReadPath } from "../src/engine/safetensors/index.ts";
import { expectedTensorShapes, shapeSize } from "../src/engine/model/config.ts";
import { llama1bConfig, llama1bFolder } from "./llamaFolder.ts";

const argv = process.argv.slice(2);
const opt = (name: string, fallback: string): string => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : fallback);
const layers = Number(opt("layers", "16"));
const shards = Number(opt("shards", "1"));
const dir = llama1bFolder(layers, shards);

interface Child {
  path: string;
  wall: number;
  cpu: number;
  params: number;
  peakRss: number;
  ready?: number;
  forward?: number;
}

/** Fills fresh float32 arrays of the model's sizes: the cost of obtaining the memory alone. */
function touchFresh(): Map<string, Float32Array> {
  const out = new Map<string, Float32Array>();
  for (const [name, shape] of expectedTensorShapes(llama1bConfig(layers))) out.set(name, new Float32Array(shapeSize(shape)).fill(1));
  return out;
}

if (argv[0] === "--child") {
  const path = argv[1];
  const u0 = process.cpuUsage();
  const t0 = performance.now();
  const m =
    path === "fresh-memory"
      ? { weights: touchFresh() }
      : path === "resident"
        ? loadBaseModelDir(dir, "resident")
        : loadModelDir(dir, { via: path as ReadPath });
  const wall = (performance.now() - t0) / 1000;
  const u = process.cpuUsage(u0);
  let params = 0;
  for (const w of m.weights.values()) params += w.length;
  let ready: number | undefined;
  let forward: number | undefined;
  if (path === "resident" || path === "native") {
    const model = EngineModel.create(
      llama1bConfig(layers),
      m.weights,
      { mode: "lora", rank: 32, seed: 0, trainAttn: true, trainMlp: true, trainUnembed: true },
      getKernels(),
    );
    ready = (performance.now() - t0) / 1000;
    const tokens = Int32Array.from({ length: 16 }, (_, i) => 1000 + 37 * i);
    model.forwardBackward(
      [{ inputTokens: tokens, lossInputs: { target_tokens: tokens, weights: new Float32Array(16).fill(1) } }],
      "cross_entropy",
      undefined,
      false,
    );
    forward = (performance.now() - t0) / 1000;
  }
  const out: Child = { path, wall, cpu: (u.user + u.system) / 1e6, params, peakRss: process.resourceUsage().maxRSS * 1024, ready, forward };
  console.log(JSON.stringify(out));
  process.exit(0);
}

const paths = opt("paths", "resident,native,positioned,typescript,fresh-memory").split(",");
const rounds = Number(opt("rounds", "2"));
const self = fileURLToPath(import.meta.url);
const results = new Map<string, Child[]>();
console.log(
  `load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}; ${dir} (${layers} layers, ${shards} file(s), bf16)`,
);
// One untimed read first puts the files in the page cache.
execFileSync(process.execPath, ["--import", "tsx", self, "--child", "native", ...argv]);
for (let r = 0; r < rounds; r++) {
  for (const path of paths) {
    const env = { ...process.env, ...(path === "typescript" ? { COOKBOOK_KERNELS: "reference" } : {}) };
    const via = path === "typescript" ? "positioned" : path;
    const out = execFileSync(process.execPath, ["--import", "tsx", self, "--child", via, ...argv], { env, encoding: "utf8" });
    const c = JSON.parse(out.trim().split("\n").pop() as string) as Child;
    results.set(path, [...(results.get(path) ?? []), c]);
    const rate = path === "resident" ? `${((c.params * 2) / 1e9).toFixed(2)} GB mapped` : `${((c.params * 4) / c.wall / 1e9).toFixed(1)} GB/s of float32`;
    const ready = c.ready === undefined ? "" : `; model ready ${c.ready.toFixed(2)} s, first forward done ${(c.forward ?? 0).toFixed(2)} s`;
    console.log(`  ${path}: load ${c.wall.toFixed(2)} s wall, ${c.cpu.toFixed(2)} s cpu, ${rate}${ready}; peak RSS ${(c.peakRss / 1e9).toFixed(2)} GB`);
  }
}
for (const [path, cs] of results) {
  const best = cs.reduce((a, b) => (b.wall < a.wall ? b : a));
  const ready = best.ready === undefined ? "" : `, ready ${best.ready.toFixed(2)} s, first forward done ${(best.forward ?? 0).toFixed(2)} s,`;
  console.log(
    `${path}: best load ${best.wall.toFixed(2)} s wall (${best.cpu.toFixed(2)} s cpu)${ready} for ${(best.params / 1e6).toFixed(0)} M bf16 parameters (${((best.params * 2) / 1e9).toFixed(2)} GB file, ${((best.params * 4) / 1e9).toFixed(2)} GB float32)`,
  );
}
